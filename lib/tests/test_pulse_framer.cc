/* pulse_framer block: alignment and the cpi tag under a fractional PRI, an injected
 * overflow (partial CPI discarded and counted, schedule kept), tag trigger, bad input. */
#include "invalid_argument_check.h"
#include "stream_tags.h"
#include "test_support.h"
#include <gnuradio/blocks/vector_sink.h>
#include <gnuradio/blocks/vector_source.h>
#include <gnuradio/gpuradar/pulse_framer.h>
#include <gnuradio/top_block.h>
#include <gpuradar/kernels/common/sample_convert.h>
#include <gpuradar/kernels/waveform/pulse_timing.h>
#include <pmt/pmt.h>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
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

// 2^16: every part stays within the framer's clamp level (65536), so an encoded index
// passes unchanged.
constexpr std::uint64_t radix = 1u << 16;
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
    expect_invalid_here(
        [] {
            pulse_framer::make(
                100.0, 0, 10, 1, 1e6, 1e9, "free", "", 0.0, "cpu", 0, "cs16");
        },
        "input_type must be one of fc32, sc16, sc8 (got 'cs16')");
}

// Interleaved integer parts over the whole code range, the extremes planted at both ends.
template <typename Int>
std::vector<Int> random_parts(std::size_t samples, std::uint32_t seed)
{
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> u(std::numeric_limits<Int>::min(),
                                         std::numeric_limits<Int>::max());
    std::vector<Int> v(2 * samples);
    for (auto& x : v)
        x = static_cast<Int>(u(rng));
    v[0] = std::numeric_limits<Int>::min();
    v[1] = std::numeric_limits<Int>::max();
    v[v.size() - 2] = std::numeric_limits<Int>::max();
    v[v.size() - 1] = std::numeric_limits<Int>::min();
    return v;
}

// The framer on integers through GNU Radio's own port types (short / byte with vlen 2:
// the sc16 / sc8 item sizes a UHD source gives).
// (vector_source_b takes unsigned char: the int8 parts go in as their bytes.)
template <typename Int, typename Source, typename Sink, typename Item = Int>
std::vector<gr_complex> run_integers(const std::vector<Int>& parts,
                                     grr::pulse_framer::sptr f,
                                     unsigned nrange,
                                     const std::vector<gr::tag_t>& tags = {})
{
    static_assert(sizeof(Item) == sizeof(Int));
    std::vector<Item> items(parts.size());
    std::memcpy(items.data(), parts.data(), parts.size() * sizeof(Int));
    auto tb = gr::make_top_block("pulse_framer_integers");
    auto src = Source::make(items, false, 2, tags);
    auto snk = Sink::make(nrange);
    tb->connect(src, 0, f, 0);
    tb->connect(f, 0, snk, 0);
    tb->run();
    return snk->data();
}

TEST(PulseFramerCpu, test_007_sc16_and_sc8_gates_scaled_to_full_scale)
{
    // The same schedule (fractional PRI, free trigger) on the integers and on their
    // exact float values x / 32768 (sc16) or x / 128 (sc8): bit for bit the same pulses.
    const double pri = 1000.0 / 7.0;
    const unsigned gs = 3, nr = 101, np = 5;
    const std::size_t n = 30 * np * 143;
    const auto s16 = random_parts<std::int16_t>(n, 11);
    const auto s8 = random_parts<std::int8_t>(n, 12);
    std::vector<gr_complex> f16(n), f8(n);
    for (std::size_t i = 0; i < n; ++i) {
        f16[i] = gr_complex(float(s16[2 * i] / 32768.0), float(s16[2 * i + 1] / 32768.0));
        f8[i] = gr_complex(float(s8[2 * i] / 128.0), float(s8[2 * i + 1] / 128.0));
    }
    auto make = [&](const char* type) {
        return grr::pulse_framer::make(
            pri, gs, nr, np, 1e6, 1e9, "free", "", 0.0, "cpu", 0, type);
    };
    auto fr16 = make("sc16");
    EXPECT_EQ(fr16->input_type(), "sc16");
    const auto y16 = run_integers<std::int16_t,
                                  gr::blocks::vector_source_s,
                                  gr::blocks::vector_sink_c>(s16, fr16, nr);
    const auto y8 = run_integers<std::int8_t,
                                 gr::blocks::vector_source_b,
                                 gr::blocks::vector_sink_c,
                                 unsigned char>(s8, make("sc8"), nr);
    const auto ref16 = run(f16, {}, make("fc32"), nr).data;
    const auto ref8 = run(f8, {}, make("fc32"), nr).data;
    ASSERT_GE(ref16.size(), 25u * np * nr);
    EXPECT_TRUE(y16 == ref16);
    EXPECT_TRUE(y8 == ref8);
    // Free anchoring at sample 0 with gate_start 3: pulse 0's first sample is sample 3.
    EXPECT_EQ(y16[0], f16[gs]);
    EXPECT_EQ(y8[0], f8[gs]);
}

TEST(PulseFramerCpu, test_008_threshold_compares_the_scaled_power)
{
    // Noise of about 200 codes (|x|^2 about 1e-4 of full scale, but 8e4 in raw codes)
    // and a leakage burst of 0.5 full scale at sample 777: the threshold 0.1 (full-scale
    // units) must anchor at the burst; read as raw codes it would fire on sample 0.
    const unsigned nr = 20, np = 2;
    const std::size_t n = 4000, at = 777;
    std::mt19937 rng(5);
    std::normal_distribution<float> g(0.0f, 200.0f);
    std::vector<std::int16_t> parts(2 * n);
    for (auto& v : parts)
        v = static_cast<std::int16_t>(std::lround(g(rng)));
    for (std::size_t i = at; i < at + 10; ++i)
        parts[2 * i] = 16384;
    auto f = grr::pulse_framer::make(
        100.0, 0, nr, np, 1e6, 1e9, "threshold", "", 0.1, "cpu", 0, "sc16");
    const auto y = run_integers<std::int16_t,
                                gr::blocks::vector_source_s,
                                gr::blocks::vector_sink_c>(parts, f, nr);
    ASSERT_FALSE(y.empty());
    EXPECT_EQ(y[0], kernels::sample_at(parts.data(), kernels::sample_format::sc16, at));
    EXPECT_EQ(y[0].real(), 0.5f);
}

} // namespace
} // namespace gpuradar::test
