/* pulse_framer block: alignment and the cpi tag under a fractional PRI, an injected
 * overflow (partial CPI discarded and counted, schedule kept), tag trigger, bad input. */
#include "invalid_argument_check.h"
#include "stream_tags.h"
#include "test_support.h"
#include <gnuradio/blocks/vector_sink.h>
#include <gnuradio/blocks/vector_source.h>
#include <gnuradio/gpuradar/pulse_framer.h>
#include <gnuradio/top_block.h>
#include <gpuradar/kernels/waveform/pulse_timing.h>
#include <pmt/pmt.h>
#include <cmath>
#include <utility>

namespace gpuradar::test {
namespace {

namespace grr = gr::gpuradar;
using kernels::pulse_timing;

//! expect_invalid with this block's prefix in the message.
template <typename F>
void expect_invalid_here(F&& f, const std::string& text)
{
    expect_invalid(std::forward<F>(f), text, "gpuradar::pulse_framer");
}

constexpr std::uint64_t radix = 1u << 20;
gr_complex encode(std::uint64_t i)
{
    return gr_complex(float(i % radix), float(i / radix));
}
std::uint64_t decode(gr_complex x)
{
    return std::uint64_t(x.imag()) * radix + std::uint64_t(x.real());
}

pmt::pmt_t field(const gr::tag_t& t, const char* k)
{
    return pmt::dict_ref(t.value, pmt::intern(k), pmt::PMT_NIL);
}

struct result {
    std::vector<gr_complex> data;
    std::vector<gr::tag_t> tags;
    grr::pulse_framer::sptr framer;
};

result run(const std::vector<gr_complex>& x,
           const std::vector<gr::tag_t>& tags,
           grr::pulse_framer::sptr f,
           unsigned nrange)
{
    auto tb = gr::make_top_block("pulse_framer");
    auto src = gr::blocks::vector_source_c::make(x, false, 1, tags);
    auto snk = gr::blocks::vector_sink_c::make(nrange);
    tb->connect(src, 0, f, 0);
    tb->connect(f, 0, snk, 0);
    tb->run();
    return { snk->data(), snk->tags(), f };
}

TEST(PulseFramerCpu, test_001_rx_time_anchor_alignment_and_cpi_tag)
{
    const double pri = 1000.0 / 3.0, fs = 3e6, fc = 2.4e9;
    const unsigned gs = 17, nr = 301, np = 7;
    const std::uint64_t anchor = 4321;
    std::vector<gr_complex> x(anchor + 40 * np * 334);
    for (std::size_t i = 0; i < x.size(); ++i)
        x[i] = encode(i);
    auto f = grr::pulse_framer::make(pri, gs, nr, np, fs, fc, "rx_time");
    const auto r = run(x, { rx_time_tag(anchor, 1000, 0.25) }, f, nr);
    const pulse_timing t(pri, gs, nr);
    const std::size_t ncpi = r.data.size() / (np * nr);
    ASSERT_GE(ncpi, 38u);
    ASSERT_EQ(r.data.size(), ncpi * np * nr);
    for (std::size_t p = 0; p < ncpi * np; ++p)
        for (unsigned j = 0; j < nr; j += 50)
            ASSERT_EQ(decode(r.data[p * nr + j]), anchor + t.gate_begin(p) + j)
                << "pulse " << p;
    ASSERT_EQ(r.tags.size(), ncpi);
    for (std::size_t c = 0; c < ncpi; ++c) {
        const auto& tag = r.tags[c];
        EXPECT_EQ(pmt::symbol_to_string(tag.key), "cpi");
        EXPECT_EQ(tag.offset, c * np);
        EXPECT_EQ(pmt::to_uint64(field(tag, "index")), c);
        EXPECT_EQ(pmt::to_uint64(field(tag, "npulses")), np);
        EXPECT_EQ(pmt::to_uint64(field(tag, "nrange")), nr);
        EXPECT_EQ(pmt::to_uint64(field(tag, "pulse")), c * np);
        EXPECT_DOUBLE_EQ(pmt::to_double(field(tag, "fs")), fs);
        EXPECT_DOUBLE_EQ(pmt::to_double(field(tag, "fc")), fc);
        EXPECT_DOUBLE_EQ(pmt::to_double(field(tag, "prf")), fs / pri);
        EXPECT_DOUBLE_EQ(pmt::to_double(field(tag, "r0")), gs * 299792458.0 / (2 * fs));
        const pmt::pmt_t rx = field(tag, "rx_time");
        ASSERT_TRUE(pmt::is_tuple(rx));
        const double dt = double(pmt::to_uint64(pmt::tuple_ref(rx, 0))) - 1000.0 +
                          pmt::to_double(pmt::tuple_ref(rx, 1)) - 0.25;
        EXPECT_NEAR(dt * fs, double(t.pulse_start(c * np)), 1e-4);
    }
    EXPECT_EQ(f->dropped_cpis(), 0u);
    EXPECT_EQ(f->emitted_cpis(), ncpi);
    EXPECT_DOUBLE_EQ(f->prf(), fs / pri);
}

TEST(PulseFramerCpu, test_002_overflow_discards_partial_cpi_and_keeps_schedule)
{
    const double pri = 250.5, fs = 1e6;
    const unsigned gs = 5, nr = 100, np = 4;
    const pulse_timing t(pri, gs, nr);
    // Virtual stream (what the radio saw): samples [g0, g0 + lost) never arrive; the
    // radio stamps the first sample after them with its true time. g0 lies inside CPI 3.
    const std::uint64_t g0 = t.gate_begin(3 * np + 1) + 40, lost = 777;
    std::vector<gr_complex> x;
    for (std::uint64_t v = 0; v < 20 * np * 251; ++v)
        if (v < g0 || v >= g0 + lost)
            x.push_back(encode(v));
    const auto gap_time = kernels::add_samples({ 50, 0.0 }, std::int64_t(g0 + lost), fs);
    auto f = grr::pulse_framer::make(pri, gs, nr, np, fs, 1e9, "rx_time");
    const auto r =
        run(x,
            { rx_time_tag(0, 50, 0.0), rx_time_tag(g0, gap_time.secs, gap_time.frac) },
            f,
            nr);
    EXPECT_EQ(f->dropped_cpis(), 1u);
    EXPECT_EQ(f->lost_samples(), lost);
    // Every pulse out is where the schedule puts it; none overlaps the gap.
    ASSERT_EQ(r.tags.size() * np * nr, r.data.size());
    std::vector<std::uint64_t> index;
    for (std::size_t c = 0; c < r.tags.size(); ++c) {
        const std::uint64_t first = pmt::to_uint64(field(r.tags[c], "pulse"));
        index.push_back(pmt::to_uint64(field(r.tags[c], "index")));
        for (unsigned p = 0; p < np; ++p) {
            const std::uint64_t v0 = decode(r.data[(c * np + p) * nr]);
            ASSERT_EQ(v0, t.gate_begin(first + p)) << "cpi " << c << " pulse " << p;
            ASSERT_EQ(decode(r.data[(c * np + p) * nr + nr - 1]), v0 + nr - 1);
            ASSERT_FALSE(v0 < g0 + lost && v0 + nr > g0);
        }
        if (c > 0 && first != pmt::to_uint64(field(r.tags[c - 1], "pulse")) + np)
            ASSERT_GT(t.gate_begin(first), g0 + lost - 1)
                << "a CPI restarted only after the gap";
    }
    // CPIs 0-2 whole, CPI 3 discarded (its index is not reused), the rest after the gap.
    ASSERT_GE(index.size(), 10u);
    EXPECT_EQ(index[0], 0u);
    EXPECT_EQ(index[2], 2u);
    EXPECT_EQ(index[3], 4u);
}

// The time of `samples` after {secs, frac}, in fp64 (the test's own arithmetic).
std::pair<std::uint64_t, double>
later(std::uint64_t secs, double frac, double samples, double fs)
{
    const double f = frac + samples / fs, whole = std::floor(f);
    return { secs + std::uint64_t(whole), f - whole };
}

TEST(PulseFramerCpu, test_006_gaps_keep_the_anchor_schedule_and_bad_jumps_are_rejected)
{
    // Arrival index encoded in the samples. Gaps of 1000.37, 2000 (whole) and 517.81
    // samples, the last two in a row; between them an rx_time 1e12 s ahead and one going
    // backwards, both to be ignored. Every CPI must start where the anchor's schedule
    // puts it: pulse k at T0 + k pri / fs, i.e. sample o_g + round((t_k - T_g) fs) after
    // the gap at o_g (time T_g); pulse numbers continue across the gaps.
    const double pri = 250.5, fs = 1e6;
    const unsigned gs = 5, nr = 100, np = 4;
    const std::uint64_t n = 30000;
    std::vector<gr_complex> x(n);
    for (std::size_t i = 0; i < n; ++i)
        x[i] = encode(i);
    const std::vector<std::pair<std::uint64_t, double>> gaps{ { 5050, 1000.37 },
                                                              { 14040, 2000.0 },
                                                              { 14700, 517.81 } };
    std::vector<std::uint64_t> seg_offset{ 0 };
    std::vector<std::pair<std::uint64_t, double>> seg_time{ { 77, 0.125 } };
    std::vector<gr::tag_t> tags{ rx_time_tag(0, 77, 0.125) };
    double cum = 0;
    for (const auto& g : gaps) {
        cum += g.second;
        seg_offset.push_back(g.first);
        seg_time.push_back(later(77, 0.125, double(g.first) + cum, fs));
        tags.push_back(
            rx_time_tag(g.first, seg_time.back().first, seg_time.back().second));
    }
    tags.push_back(rx_time_tag(9000, 1000000000077, 0.125)); // 1e12 s ahead
    tags.push_back(rx_time_tag(11000, 3, 0.5));              // backwards
    auto f = grr::pulse_framer::make(pri, gs, nr, np, fs, 1e9, "rx_time");
    const auto r = run(x, tags, f, nr);

    EXPECT_EQ(f->rejected_time_jumps(), 2u);
    EXPECT_EQ(f->lost_samples(), 1000u + 2000u + 518u); // not inflated by the bad tags
    EXPECT_GE(f->dropped_cpis(), 2u);
    EXPECT_LE(f->dropped_cpis(), gaps.size());
    ASSERT_EQ(r.tags.size() * np * nr, r.data.size());
    std::vector<std::size_t> per_segment(seg_offset.size(), 0);
    std::uint64_t last_index = 0;
    for (std::size_t c = 0; c < r.tags.size(); ++c) {
        const std::uint64_t k = pmt::to_uint64(field(r.tags[c], "pulse"));
        const std::int64_t first = std::int64_t(decode(r.data[c * np * nr])) - gs;
        std::size_t g = 0;
        while (g + 1 < seg_offset.size() && std::int64_t(seg_offset[g + 1]) <= first + gs)
            ++g;
        ++per_segment[g];
        const auto expected = [&](std::uint64_t kk) {
            const double dt = (77.0 - double(seg_time[g].first)) +
                              (0.125 - seg_time[g].second) + double(kk) * pri / fs;
            return std::int64_t(seg_offset[g]) + std::llround(dt * fs);
        };
        for (unsigned p = 0; p < np; ++p)
            ASSERT_EQ(std::int64_t(decode(r.data[(c * np + p) * nr])),
                      expected(k + p) + gs)
                << "cpi " << c << " pulse " << p;
        // rx_time: the time of that sample, within half a sample of the schedule's t_k.
        const pmt::pmt_t rx = field(r.tags[c], "rx_time");
        const double from_t0 = (double(pmt::to_uint64(pmt::tuple_ref(rx, 0))) - 77.0 +
                                pmt::to_double(pmt::tuple_ref(rx, 1)) - 0.125) *
                               fs;
        EXPECT_LE(std::fabs(from_t0 - double(k) * pri), 0.5 + 1e-4) << "cpi " << c;
        const std::uint64_t index = pmt::to_uint64(field(r.tags[c], "index"));
        if (c > 0)
            EXPECT_GT(index, last_index);
        last_index = index;
    }
    EXPECT_GE(per_segment[0], 4u);
    EXPECT_GE(per_segment[1], 7u); // the rejected tags break nothing in this segment
    EXPECT_GE(per_segment[3], 10u);
    // Pulse numbers continued: the last CPI is near the schedule's pulse for its time.
    EXPECT_GT(pmt::to_uint64(field(r.tags.back(), "pulse")), (n + 3000) / 251 - 2 * np);
}

TEST(PulseFramerCpu, test_003_named_trigger_tag)
{
    const unsigned nr = 30, np = 2;
    std::vector<gr_complex> x(5000);
    for (std::size_t i = 0; i < x.size(); ++i)
        x[i] = encode(i);
    gr::tag_t trig;
    trig.offset = 999;
    trig.key = pmt::intern("tx_start");
    trig.value = pmt::PMT_T;
    auto f = grr::pulse_framer::make(100.0, 3, nr, np, 1e6, 1e9, "tag", "tx_start");
    const auto r = run(x, { trig }, f, nr);
    ASSERT_EQ(r.data.size(), 20u * np * nr); // (5000 - 999) / 100 = 40 pulses
    for (std::size_t p = 0; p < 40; ++p)
        ASSERT_EQ(decode(r.data[p * nr]), 999 + 100 * p + 3);
    EXPECT_TRUE(pmt::is_null(field(r.tags[0], "rx_time"))); // no rx_time seen
}

TEST(PulseFramerCpu, test_005_stream_without_trigger_frames_nothing_and_ends)
{
    // rx_time mode on a recording without tags: no output (a warning is logged after a
    // second of samples), and the flowgraph still ends with its source.
    std::vector<gr_complex> x(30000, gr_complex(1, 0));
    auto f = grr::pulse_framer::make(100.0, 0, 50, 4, 10e3, 1e9, "rx_time");
    const auto r = run(x, {}, f, 50);
    EXPECT_TRUE(r.data.empty());
    EXPECT_EQ(f->emitted_cpis(), 0u);
    EXPECT_EQ(f->dropped_cpis(), 0u);
}

TEST(PulseFramerCpu, test_004_bad_parameters_name_them)
{
    using grr::pulse_framer;
    EXPECT_NO_THROW(pulse_framer::make(100.0, 0, 100, 1, 1e6, 1e9)); // pri == nrange
    EXPECT_NO_THROW(
        pulse_framer::make(100.9, 60, 40, 1, 1e6, 1e9)); // gate ends at floor(pri)
    expect_invalid_here([] { pulse_framer::make(0.0, 0, 1, 1, 1e6, 1e9); }, "pri");
    expect_invalid_here([] { pulse_framer::make(-3.0, 0, 1, 1, 1e6, 1e9); }, "pri");
    expect_invalid_here([] { pulse_framer::make(99.9, 0, 100, 1, 1e6, 1e9); }, "pri");
    expect_invalid_here([] { pulse_framer::make(100.9, 61, 40, 1, 1e6, 1e9); },
                        "gate_start");
    expect_invalid_here([] { pulse_framer::make(100.0, 0, 0, 1, 1e6, 1e9); }, "nrange");
    expect_invalid_here([] { pulse_framer::make(100.0, 0, 10, 0, 1e6, 1e9); }, "npulses");
    expect_invalid_here([] { pulse_framer::make(100.0, 0, 10, 1, 0.0, 1e9); }, "fs");
    expect_invalid_here([] { pulse_framer::make(100.0, 0, 10, 1, 1e6, 0.0); }, "fc");
    expect_invalid_here([] { pulse_framer::make(100.0, 0, 10, 1, 1e6, 1e9, "edge"); },
                        "trigger");
    expect_invalid_here(
        [] { pulse_framer::make(100.0, 0, 10, 1, 1e6, 1e9, "threshold"); }, "threshold");
    expect_invalid_here([] { pulse_framer::make(100.0, 0, 10, 1, 1e6, 1e9, "tag", ""); },
                        "trigger_tag");
    EXPECT_NO_THROW(pulse_framer::make(100.0, 0, 10, 1, 1e6, 1e9, "threshold", "", 0.5));
    EXPECT_NO_THROW(pulse_framer::make(100.0, 0, 10, 1, 1e6, 1e9, "free"));
}

} // namespace
} // namespace gpuradar::test
