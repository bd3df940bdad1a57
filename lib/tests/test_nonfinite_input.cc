/*
 * Non-finite input through the pulse-Doppler chain pulse_framer ->
 * pulse_doppler_processor
 * -> cfar_2d: NaN / +-Inf samples inside one CPI's gates are written as 0 by the framer,
 * so that CPI still yields the detections of every target; the count of such samples is
 * exact in the framer's cpi tag, in the tag after the CFAR, in the detections message and
 * in nonfinite_samples(); samples outside the gates are not counted; the other CPIs are
 * bit for bit what a clean stream gives. The CUDA chain (suite *Cuda*) gives the same
 * counts and detects the same targets.
 *
 * Huge and saturated input (suite HugeInput): 1, 10 or 1000 samples of one CPI at 3e38
 * (fc32) or at +-full scale (sc16, sc8) never blank the CPI: its detections outside the
 * range bins the samples reach are those of the clean stream, and the framer's cpi tag
 * (and the tag after the CFAR) counts exactly the samples placed (clamped_samples for
 * fc32, saturated_samples for the integers).
 */
#include "test_support.h"
#include <gnuradio/blocks/message_debug.h>
#include <gnuradio/blocks/vector_sink.h>
#include <gnuradio/blocks/vector_source.h>
#include <gnuradio/gpuradar/cfar_2d.h>
#include <gnuradio/gpuradar/pulse_doppler_processor.h>
#include <gnuradio/gpuradar/pulse_framer.h>
#include <gnuradio/top_block.h>
#include <gpuradar/kernels/pulse_doppler/framer_copy.h>
#include <gpuradar/kernels/pulse_doppler/pulse_compression.h>
#include <pmt/pmt.h>
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <tuple>

namespace gpuradar::test {
namespace {

namespace grr = gr::gpuradar;

constexpr double fs = 10e6, fc = 3e9, bw = 5e6, pw = 4e-6; // a 40-sample LFM
constexpr double pi = 3.14159265358979323846;
constexpr unsigned pri = 300, nr = 256, np = 32, nfft = 32, ncpi = 4;
constexpr unsigned bad_cpi = 1;

struct target {
    unsigned range_bin, doppler_bin; // Doppler bin fftshifted: zero at nfft / 2
};
const target targets[] = { { 40, 5 }, { 110, 12 }, { 180, 25 } };

// The received stream, free-running from sample 0: pulse k's gate is samples
// [k pri, k pri + nr); each target's echo starts at its range bin and turns by its
// Doppler bin from pulse to pulse; complex noise everywhere.
std::vector<cfloat> clean_stream()
{
    const auto chirp = kernels::lfm_chirp(bw, pw, fs, true);
    auto x = random_complex(std::size_t(ncpi) * np * pri, 2024, 0.05f);
    for (std::size_t k = 0; k < std::size_t(ncpi) * np; ++k)
        for (const auto& t : targets) {
            const double f = (double(t.doppler_bin) - nfft / 2.0) / nfft;
            const std::complex<double> rot = std::polar(1.0, 2 * pi * f * double(k));
            for (std::size_t n = 0; n < chirp.size(); ++n)
                x[k * pri + t.range_bin + n] +=
                    cfloat(rot * std::complex<double>(chirp[n]));
        }
    return x;
}

struct poisoned_stream {
    std::vector<cfloat> x;
    std::uint64_t in_gates = 0; // the samples the framer must zero and count
};

// NaN, +Inf and -Inf in real or imaginary parts at random gate samples of CPI bad_cpi,
// and NaNs between the gates (outside every CPI's samples) of that CPI.
poisoned_stream poison(std::vector<cfloat> x, std::uint32_t seed)
{
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float inf = std::numeric_limits<float>::infinity();
    const cfloat bad[] = {
        { nan, 0.5f }, { 0.5f, nan }, { inf, 0.5f }, { 0.5f, -inf }, { -inf, nan }
    };
    std::mt19937 rng(seed);
    std::set<std::size_t> at;
    while (at.size() < 7) {
        const std::size_t pulse = std::size_t(bad_cpi) * np + rng() % np;
        at.insert(pulse * pri + rng() % nr);
    }
    poisoned_stream p{ std::move(x), at.size() };
    std::size_t i = 0;
    for (std::size_t s : at)
        p.x[s] = bad[i++ % 5];
    for (unsigned pulse : { 3u, 20u }) // between gates: not part of any CPI
        p.x[(std::size_t(bad_cpi) * np + pulse) * pri + nr + 5] = cfloat(nan, nan);
    return p;
}

std::uint64_t u64(const pmt::pmt_t& dict, const char* key)
{
    return pmt::to_uint64(pmt::dict_ref(dict, pmt::intern(key), pmt::PMT_NIL));
}

double dbl(const pmt::pmt_t& dict, const char* key)
{
    return pmt::to_double(pmt::dict_ref(dict, pmt::intern(key), pmt::PMT_NIL));
}

// One detection: (range bin, Doppler bin, power).
using detection = std::tuple<std::uint64_t, std::uint64_t, double>;

struct chain_result {
    std::map<std::uint64_t, std::vector<detection>> detections; // by CPI index
    std::map<std::uint64_t, std::uint64_t> pdu_nonfinite;       // detections message
    std::vector<std::uint64_t> framer_tag_nonfinite, cfar_tag_nonfinite;
    std::uint64_t framer_total = 0;
    std::uint64_t cfar_nonfinite_cells = 0;
};

std::vector<std::uint64_t> tag_counts(std::vector<gr::tag_t> tags,
                                      const char* key = "nonfinite_samples")
{
    std::sort(tags.begin(), tags.end(), gr::tag_t::offset_compare);
    std::vector<std::uint64_t> c;
    for (const auto& t : tags)
        if (pmt::eqv(t.key, pmt::intern("cpi")))
            c.push_back(u64(t.value, key));
    return c;
}

struct screen_tags {
    std::vector<std::uint64_t> framer, after_cfar, detections; // per CPI
};

// The framer's pulses also go to a host sink (its tags) on the CPU only: a host reader
// beside a GPU reader of its device output is not what this test is about. `src` gives
// samples of `input_type`; `key` (a cpi tag count) is read into *screen when given.
chain_result run_chain(gr::basic_block_sptr src,
                       const char* input_type,
                       const char* backend,
                       const char* key = nullptr,
                       screen_tags* screen = nullptr)
{
    const bool host_framer_tap = std::string(backend) == "cpu";
    auto tb = gr::make_top_block("nonfinite");
    auto framer = grr::pulse_framer::make(
        pri, 0, nr, np, fs, fc, "free", "trigger", 0.0, backend, 0, input_type);
    grr::pulse_doppler_processor::params cfg;
    cfg.nrange = nr;
    cfg.npulses = np;
    cfg.nfft = nfft;
    cfg.bandwidth = bw;
    cfg.pulse_width = pw;
    cfg.samp_rate = fs;
    cfg.range_window = "hamming";
    cfg.normalize = true;
    cfg.doppler_window = "hann";
    cfg.backend = backend;
    auto pd = grr::pulse_doppler_processor::make(cfg);
    auto cfar = grr::cfar_2d::make(
        nr, nfft, 1, 2, 8, 1, 4, 1e-6, "ca", 0, "clip", "wrap", true, 4096, backend);
    auto pulses = gr::blocks::vector_sink_c::make(nr);
    auto mask = gr::blocks::vector_sink_b::make(nfft);
    auto dbg = gr::blocks::message_debug::make();
    tb->connect(src, 0, framer, 0);
    tb->connect(framer, 0, pd, 0);
    if (host_framer_tap)
        tb->connect(framer, 0, pulses, 0);
    tb->connect(pd, 0, cfar, 0);
    tb->connect(cfar, 0, mask, 0);
    tb->msg_connect(cfar, "detections", dbg, "store");
    tb->run();

    chain_result r;
    for (std::size_t i = 0; i < dbg->num_messages(); ++i) {
        const pmt::pmt_t pdu = dbg->get_message(i);
        const pmt::pmt_t meta = pmt::car(pdu);
        const std::uint64_t cpi = u64(meta, "cpi");
        r.pdu_nonfinite[cpi] = u64(meta, "nonfinite_samples");
        if (screen) { // the detections message carries the tag's fields
            screen->detections.resize(
                std::max<std::size_t>(screen->detections.size(), cpi + 1));
            screen->detections[cpi] = u64(meta, key);
        }
        auto& dets = r.detections[cpi];
        const pmt::pmt_t list = pmt::cdr(pdu);
        for (std::size_t j = 0; j < pmt::length(list); ++j) {
            const pmt::pmt_t d = pmt::vector_ref(list, j);
            dets.emplace_back(
                u64(d, "range_bin"), u64(d, "doppler_bin"), dbl(d, "power"));
        }
    }
    r.framer_tag_nonfinite = tag_counts(pulses->tags());
    r.cfar_tag_nonfinite = tag_counts(mask->tags());
    if (screen) {
        screen->framer = tag_counts(pulses->tags(), key);
        screen->after_cfar = tag_counts(mask->tags(), key);
    }
    r.framer_total = framer->nonfinite_samples();
    r.cfar_nonfinite_cells = cfar->nonfinite_cells();
    return r;
}

chain_result run_chain(const std::vector<cfloat>& x, const char* backend)
{
    return run_chain(gr::blocks::vector_source_c::make(x), "fc32", backend);
}

// Every target detected in the CPI, within one bin in range and Doppler.
void expect_every_target(const std::vector<detection>& dets, std::uint64_t cpi)
{
    for (const auto& t : targets) {
        const bool found = std::any_of(dets.begin(), dets.end(), [&](const detection& d) {
            return std::abs(long(std::get<0>(d)) - long(t.range_bin)) <= 1 &&
                   std::abs(long(std::get<1>(d)) - long(t.doppler_bin)) <= 1;
        });
        EXPECT_TRUE(found) << "CPI " << cpi << ": target at range bin " << t.range_bin
                           << ", Doppler bin " << t.doppler_bin << " missed";
    }
}

void expect_counts(const chain_result& r, std::uint64_t in_gates, bool framer_tags = true)
{
    std::vector<std::uint64_t> expected(ncpi, 0);
    expected[bad_cpi] = in_gates;
    if (framer_tags)
        EXPECT_EQ(r.framer_tag_nonfinite, expected) << "the framer's cpi tags";
    EXPECT_EQ(r.cfar_tag_nonfinite, expected) << "the cpi tags after the CFAR";
    ASSERT_EQ(r.pdu_nonfinite.size(), ncpi);
    for (unsigned c = 0; c < ncpi; ++c)
        EXPECT_EQ(r.pdu_nonfinite.at(c), expected[c]) << "detections message, CPI " << c;
    EXPECT_EQ(r.framer_total, in_gates);
    EXPECT_EQ(r.cfar_nonfinite_cells, 0u) << "no NaN reaches the map";
}

TEST(NonfiniteInput, test_001_zeroed_counted_and_other_cpis_unaffected)
{
    const auto clean = clean_stream();
    const auto bad = poison(clean, 7);
    ASSERT_GE(bad.in_gates, 5u);
    const auto ref = run_chain(clean, "cpu");
    const auto r = run_chain(bad.x, "cpu");
    expect_counts(ref, 0);
    expect_counts(r, bad.in_gates);
    ASSERT_EQ(r.detections.size(), ncpi);
    for (unsigned c = 0; c < ncpi; ++c) {
        expect_every_target(r.detections.at(c), c);
        if (c != bad_cpi)
            EXPECT_EQ(r.detections.at(c), ref.detections.at(c)) << "CPI " << c;
    }
}

TEST(NonfiniteInputCuda, test_010_cuda_chain_counts_and_detects_like_cpu)
{
    GPURADAR_REQUIRE_CUDA();
    const auto bad = poison(clean_stream(), 8);
    const auto cpu = run_chain(bad.x, "cpu");
    const auto gpu = run_chain(bad.x, "cuda");
    expect_counts(gpu, bad.in_gates, false);
    ASSERT_EQ(gpu.detections.size(), ncpi);
    for (unsigned c = 0; c < ncpi; ++c) {
        expect_every_target(gpu.detections.at(c), c);
        EXPECT_EQ(gpu.detections.at(c).size(), cpu.detections.at(c).size()) << c;
    }
}

// Huge samples: `count` gate samples of CPI bad_cpi in its last range bins
// [huge_first(count), nr), range bin after range bin in every pulse of the CPI. The
// matched filter (40 taps) carries them to range bins from huge_first - 39 on, and the
// CFAR's training window (8 + 2 rows) 10 bins further: the detections below
// first_touched(count) cannot depend on them.
unsigned huge_first(std::size_t count) { return nr - unsigned((count + np - 1) / np); }
unsigned first_touched(std::size_t count) { return huge_first(count) - 40 - 10; }

std::vector<std::size_t> huge_positions(std::size_t count)
{
    const unsigned first = huge_first(count);
    std::vector<std::size_t> at;
    for (std::size_t k = 0; at.size() < count; ++k) {
        const std::size_t pulse = std::size_t(bad_cpi) * np + k % np;
        at.push_back(pulse * pri + first + k / np);
    }
    return at;
}

// The (range bin, Doppler bin) of the detections below `limit`.
std::set<std::pair<std::uint64_t, std::uint64_t>>
untouched(const std::vector<detection>& dets, unsigned limit)
{
    std::set<std::pair<std::uint64_t, std::uint64_t>> s;
    for (const auto& d : dets)
        if (std::get<0>(d) < limit)
            s.emplace(std::get<0>(d), std::get<1>(d));
    return s;
}

void expect_unblanked(const chain_result& clean,
                      const chain_result& r,
                      const screen_tags& tags,
                      std::uint64_t placed)
{
    std::vector<std::uint64_t> expected(ncpi, 0);
    expected[bad_cpi] = placed;
    EXPECT_EQ(tags.framer, expected) << "the framer's cpi tags";
    EXPECT_EQ(tags.after_cfar, expected) << "the cpi tags after the CFAR";
    EXPECT_EQ(tags.detections, expected) << "the detections messages' metadata";
    ASSERT_EQ(r.detections.size(), ncpi);
    for (unsigned c = 0; c < ncpi; ++c)
        if (c != bad_cpi) {
            expect_every_target(r.detections.at(c), c);
            EXPECT_EQ(r.detections.at(c), clean.detections.at(c)) << "CPI " << c;
        }
    // The bad CPI: every target whose window the samples do not reach (1000 samples take
    // 32 range bins, whose window reaches the target at range bin 180), and every other
    // detection there.
    const unsigned limit = first_touched(placed);
    const auto kept = untouched(r.detections.at(bad_cpi), limit);
    for (const auto& t : targets)
        if (t.range_bin + 1 < limit)
            EXPECT_TRUE(kept.count({ t.range_bin, t.doppler_bin }))
                << "target at range bin " << t.range_bin << " missed";
    EXPECT_EQ(kept, untouched(clean.detections.at(bad_cpi), limit))
        << "the bad CPI's detections away from the huge samples";
    EXPECT_GE(kept.size(), 2u) << "not blanked";
    EXPECT_EQ(r.cfar_nonfinite_cells, 0u) << "no Inf or NaN reaches the map";
}

TEST(HugeInput, test_020_fc32_3e38_samples_clamped_counted_cpi_kept)
{
    const auto clean = clean_stream();
    screen_tags clean_tags;
    const auto ref = run_chain(gr::blocks::vector_source_c::make(clean),
                               "fc32",
                               "cpu",
                               "clamped_samples",
                               &clean_tags);
    EXPECT_EQ(clean_tags.framer, std::vector<std::uint64_t>(ncpi, 0));
    for (std::size_t count : { 1, 10, 1000 }) {
        SCOPED_TRACE(std::to_string(count) + " samples at 3e38");
        auto x = clean;
        std::size_t i = 0;
        for (std::size_t at : huge_positions(count)) {
            const float big = (i++ % 2 ? -3e38f : 3e38f);
            x[at] = i % 3 == 0 ? cfloat(big, x[at].imag()) : cfloat(x[at].real(), big);
        }
        screen_tags tags;
        const auto r = run_chain(gr::blocks::vector_source_c::make(x),
                                 "fc32",
                                 "cpu",
                                 "clamped_samples",
                                 &tags);
        expect_unblanked(ref, r, tags, count);
    }
}

// The clean stream at half full scale (no part reaches it: |x| <= 0.5 * 1.2) as
// interleaved integers of `code` = 2^(bits-1) per 1.0, then `count` huge positions with
// one part at +max, -max or min (all at full scale).
template <typename Int>
std::vector<Int> quantised(const std::vector<cfloat>& x, float code, std::size_t count)
{
    std::vector<Int> q(2 * x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
        q[2 * i] = Int(std::lround(0.5f * x[i].real() * code));
        q[2 * i + 1] = Int(std::lround(0.5f * x[i].imag() * code));
    }
    const Int extreme[] = { std::numeric_limits<Int>::max(),
                            std::numeric_limits<Int>::min(),
                            Int(-std::numeric_limits<Int>::max()) };
    std::size_t i = 0;
    for (std::size_t at : huge_positions(count)) {
        q[2 * at + i % 2] = extreme[i % 3];
        ++i;
    }
    return q;
}

template <typename Int>
gr::basic_block_sptr int_source(const std::vector<Int>& q)
{
    if constexpr (sizeof(Int) == 2)
        return gr::blocks::vector_source_s::make(q, false, 2);
    else
        return gr::blocks::vector_source_b::make(
            std::vector<unsigned char>(q.begin(), q.end()), false, 2);
}

template <typename Int>
void check_saturated_chain(const char* type, float code)
{
    const auto clean = clean_stream();
    screen_tags clean_tags;
    const auto ref = run_chain(int_source(quantised<Int>(clean, code, 0)),
                               type,
                               "cpu",
                               "saturated_samples",
                               &clean_tags);
    EXPECT_EQ(clean_tags.framer, std::vector<std::uint64_t>(ncpi, 0)) << type;
    for (std::size_t count : { 1, 10, 1000 }) {
        SCOPED_TRACE(std::string(type) + ": " + std::to_string(count) +
                     " samples at +-full scale");
        screen_tags tags;
        const auto r = run_chain(int_source(quantised<Int>(clean, code, count)),
                                 type,
                                 "cpu",
                                 "saturated_samples",
                                 &tags);
        expect_unblanked(ref, r, tags, count);
    }
}

TEST(HugeInput, test_021_sc16_sc8_full_scale_samples_counted_cpi_kept)
{
    check_saturated_chain<std::int16_t>("sc16", kernels::sc16_full_scale_code);
    check_saturated_chain<std::int8_t>("sc8", kernels::sc8_full_scale_code);
}

} // namespace
} // namespace gpuradar::test
