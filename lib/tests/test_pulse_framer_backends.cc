/* pulse_framer on both backends: the CUDA framer (gates cut on the GPU) gives exactly the
 * CPU framer's pulses, tags and counts, for integer and fractional PRIs and across an
 * injected overflow; the threshold trigger stays on the host; the receiver corrections
 * on the GPU equal the CPU's. */
#include "invalid_argument_check.h"
#include "stream_tags.h"
#include "test_support.h"
#include <gnuradio/blocks/vector_sink.h>
#include <gnuradio/blocks/vector_source.h>
#include <gnuradio/gpuradar/pulse_framer.h>
#include <gnuradio/top_block.h>
#include <pmt/pmt.h>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <utility>

namespace gpuradar::test {
namespace {

namespace grr = gr::gpuradar;

struct framed {
    std::vector<gr_complex> data;
    std::vector<gr::tag_t> tags;
    std::uint64_t dropped, emitted;
    std::string backend;
    std::uint64_t nonfinite;
};

framed run(double pri,
           unsigned gate_start,
           unsigned nrange,
           unsigned npulses,
           const std::vector<gr_complex>& x,
           const std::vector<gr::tag_t>& tags,
           const char* backend)
{
    auto tb = gr::make_top_block("framer");
    auto src = gr::blocks::vector_source_c::make(x, false, 1, tags);
    auto f = grr::pulse_framer::make(
        pri, gate_start, nrange, npulses, 1e6, 1e9, "rx_time", "trigger", 0.0, backend);
    auto snk = gr::blocks::vector_sink_c::make(nrange);
    tb->connect(src, 0, f, 0);
    tb->connect(f, 0, snk, 0);
    tb->run();
    auto t = snk->tags();
    std::sort(t.begin(), t.end(), gr::tag_t::offset_compare);
    framed r{ snk->data(), t, f->dropped_cpis(), f->emitted_cpis(), f->backend(), 0 };
    r.nonfinite = f->nonfinite_samples();
    return r;
}

// A stream of `n` samples starting at 10 s, with an overflow of `lost` samples after
// sample `gap_at` (the rx_time tag there jumps by them).
std::vector<gr::tag_t> stream_tags(std::uint64_t gap_at, std::uint64_t lost)
{
    const double fs = 1e6;
    const double t_gap = double(gap_at + lost) / fs;
    return { rx_time_tag(0, 10, 0.0),
             rx_time_tag(gap_at, 10 + std::uint64_t(t_gap), t_gap - std::floor(t_gap)) };
}

void expect_same(const framed& cpu, const framed& gpu)
{
    EXPECT_EQ(gpu.backend, "cuda");
    EXPECT_EQ(gpu.emitted, cpu.emitted);
    EXPECT_EQ(gpu.dropped, cpu.dropped);
    EXPECT_EQ(gpu.nonfinite, cpu.nonfinite);
    ASSERT_EQ(gpu.data.size(), cpu.data.size());
    EXPECT_TRUE(gpu.data == cpu.data) << "copies are exact";
    ASSERT_EQ(gpu.tags.size(), cpu.tags.size());
    for (std::size_t i = 0; i < cpu.tags.size(); ++i) {
        EXPECT_EQ(gpu.tags[i].offset, cpu.tags[i].offset);
        EXPECT_TRUE(pmt::equal(gpu.tags[i].value, cpu.tags[i].value));
    }
}

TEST(PulseFramerBackend, test_001_threshold_trigger_stays_on_the_host)
{
    expect_invalid(
        [] {
            grr::pulse_framer::make(
                100, 0, 50, 4, 1e6, 1e9, "threshold", "trigger", 1.0, "cuda");
        },
        "backend");
    auto f = grr::pulse_framer::make(
        100, 0, 50, 4, 1e6, 1e9, "threshold", "trigger", 1.0, "auto");
    EXPECT_EQ(f->backend(), "cpu");
    expect_invalid(
        [] { grr::pulse_framer::make(100, 0, 50, 4, 1e6, 1e9, "free", "", 0.0, "gpu"); },
        "backend");
}

TEST(PulseFramerCuda, test_010_integer_pri_with_overflow_matches_cpu)
{
    GPURADAR_REQUIRE_CUDA();
    const std::size_t n = 2'000'000;
    const auto x = random_complex(n, 41);
    const auto tags = stream_tags(700'123, 5'000);
    const auto cpu = run(1000.0, 37, 700, 16, x, tags, "cpu");
    const auto gpu = run(1000.0, 37, 700, 16, x, tags, "cuda");
    EXPECT_EQ(cpu.dropped, 1u) << "the overflow discards one partial CPI";
    expect_same(cpu, gpu);
}

TEST(PulseFramerCuda, test_011_fractional_pri_matches_cpu)
{
    GPURADAR_REQUIRE_CUDA();
    const std::size_t n = 1'500'000;
    const auto x = random_complex(n, 42);
    const auto tags = stream_tags(400'000, 777);
    const auto cpu = run(1000.0 / 3.0, 5, 300, 32, x, tags, "cpu");
    const auto gpu = run(1000.0 / 3.0, 5, 300, 32, x, tags, "cuda");
    expect_same(cpu, gpu);
}

// NaN, +Inf, -Inf in real and imaginary parts at random samples; returns how many.
std::size_t
add_nonfinite(std::vector<gr_complex>& x, std::size_t count, std::uint32_t seed)
{
    const float bad[] = { std::nanf(""), INFINITY, -INFINITY };
    std::mt19937 rng(seed);
    for (std::size_t i = 0; i < count; ++i) {
        auto& v = x[rng() % x.size()];
        const float b = bad[rng() % 3];
        v = rng() % 2 ? gr_complex(b, v.imag()) : gr_complex(v.real(), b);
    }
    return count;
}

// The sum of the cpi tags' nonfinite_samples.
std::uint64_t tagged_nonfinite(const framed& f)
{
    std::uint64_t n = 0;
    for (const auto& t : f.tags)
        n += pmt::to_uint64(
            pmt::dict_ref(t.value, pmt::intern("nonfinite_samples"), pmt::PMT_NIL));
    return n;
}

TEST(PulseFramerCuda, test_012_nonfinite_samples_zeroed_and_counted_like_cpu)
{
    GPURADAR_REQUIRE_CUDA();
    for (double pri : { 1000.0, 1000.0 / 3.0 }) {
        auto x = random_complex(1'200'000, 43);
        add_nonfinite(x, 500, 44);
        const auto tags = stream_tags(300'000, 123);
        const auto cpu = run(pri, 5, 300, 16, x, tags, "cpu");
        const auto gpu = run(pri, 5, 300, 16, x, tags, "cuda");
        EXPECT_GT(cpu.nonfinite, 50u) << "many of the samples lie in gates";
        EXPECT_EQ(tagged_nonfinite(cpu), cpu.nonfinite);
        for (const auto& v : gpu.data)
            ASSERT_TRUE(std::isfinite(v.real()) && std::isfinite(v.imag()));
        expect_same(cpu, gpu);
    }
}

} // namespace
} // namespace gpuradar::test

namespace gpuradar::test {
namespace {

// sc16 and sc8 streams (GNU Radio short / byte vectors of 2: a UHD source's sc16 / sc8
// items) framed on the GPU (the integers copied, converted as the gates are cut) and on
// the CPU (VOLK): the same pulses bit for bit, the same tags. Fresh random codes, the
// extremes planted; the GPU's output buffer is fresh device memory on every run.
template <typename Item>
framed run_integers(double pri,
                    const std::vector<Item>& parts,
                    const std::vector<gr::tag_t>& tags,
                    const char* type,
                    const char* backend)
{
    const unsigned nrange = 300, npulses = 16;
    auto tb = gr::make_top_block("framer_integers");
    typename gr::blocks::vector_source<Item>::sptr src =
        gr::blocks::vector_source<Item>::make(parts, false, 2, tags);
    auto f = grr::pulse_framer::make(
        pri, 11, nrange, npulses, 1e6, 1e9, "rx_time", "trigger", 0.0, backend, 0, type);
    auto snk = gr::blocks::vector_sink_c::make(nrange);
    tb->connect(src, 0, f, 0);
    tb->connect(f, 0, snk, 0);
    tb->run();
    auto t = snk->tags();
    std::sort(t.begin(), t.end(), gr::tag_t::offset_compare);
    framed r{ snk->data(), t, f->dropped_cpis(), f->emitted_cpis(), f->backend(), 0 };
    r.nonfinite = f->nonfinite_samples();
    return r;
}

template <typename Item>
std::vector<Item> random_items(std::size_t samples, std::uint32_t seed)
{
    std::mt19937 rng(seed);
    std::vector<Item> v(2 * samples);
    for (auto& x : v)
        x = static_cast<Item>(rng());
    v[0] = std::numeric_limits<Item>::min();
    v[1] = std::numeric_limits<Item>::max();
    return v;
}

// The receiver corrections on the GPU (the framer's output buffer on the device) equal
// the CPU framer's to float rounding (fp64 sums on both, summed in another order), over
// several CPIs so that the running DC and the mean pulse carry state.
std::vector<gr_complex> run_corrected(const std::vector<gr_complex>& x,
                                      const std::string& dc,
                                      const std::string& leakage,
                                      const char* backend,
                                      std::uint64_t& uncorrected)
{
    auto tb = gr::make_top_block("framer");
    auto src = gr::blocks::vector_source_c::make(x, false, 1);
    auto f = grr::pulse_framer::make(300.0,
                                     0,
                                     257,
                                     33,
                                     1e6,
                                     1e9,
                                     "free",
                                     "trigger",
                                     0.0,
                                     backend,
                                     0,
                                     "fc32",
                                     dc,
                                     3.0,
                                     true,
                                     leakage,
                                     0.3,
                                     9);
    auto snk = gr::blocks::vector_sink_c::make(257);
    tb->connect(src, 0, f, 0);
    tb->connect(f, 0, snk, 0);
    tb->run();
    uncorrected = f->iq_uncorrected_cpis();
    return snk->data();
}

TEST(PulseFramerCuda, test_014_corrections_match_cpu)
{
    GPURADAR_REQUIRE_CUDA();
    auto x = random_complex(300 * 33 * 5 + 300, 44);
    for (std::size_t i = 0; i < x.size(); ++i) { // DC, leakage, I/Q imbalance
        gr_complex v = x[i] + gr_complex(1.5f, -0.5f);
        if (i % 300 < 6)
            v += gr_complex(30.0f, 20.0f);
        x[i] = gr_complex(v.real(), 1.1f * v.imag() + 0.08f * v.real());
    }
    for (const auto& [dc, leakage] :
         { std::pair<std::string, std::string>{ "running", "mean_pulse" },
           { "pulse", "blank" } }) {
        std::uint64_t cpu_unc = 9, gpu_unc = 9;
        const auto cpu = run_corrected(x, dc, leakage, "cpu", cpu_unc);
        const auto gpu = run_corrected(x, dc, leakage, "cuda", gpu_unc);
        ASSERT_EQ(cpu.size(), std::size_t(257 * 33 * 5)) << dc << " " << leakage;
        EXPECT_LE(rel_l2(gpu, cpu), 1e-5) << dc << " " << leakage;
        EXPECT_EQ(cpu_unc, 0u);
        EXPECT_EQ(gpu_unc, 0u);
    }
}

TEST(PulseFramerCuda, test_013_sc16_and_sc8_match_cpu_bit_for_bit)
{
    GPURADAR_REQUIRE_CUDA();
    const std::uint32_t seed = std::random_device{}();
    SCOPED_TRACE("seed " + std::to_string(seed));
    const std::size_t n = 1'000'000;
    const auto tags = stream_tags(400'000, 777);
    const auto s16 = random_items<std::int16_t>(n, seed);
    const auto s8 = random_items<unsigned char>(n, seed + 1); // sc8's bytes
    for (double pri : { 1000.0, 1000.0 / 3.0 }) {
        const auto c16 = run_integers(pri, s16, tags, "sc16", "cpu");
        ASSERT_FALSE(c16.data.empty());
        expect_same(c16, run_integers(pri, s16, tags, "sc16", "cuda"));
        const auto c8 = run_integers(pri, s8, tags, "sc8", "cpu");
        ASSERT_FALSE(c8.data.empty());
        expect_same(c8, run_integers(pri, s8, tags, "sc8", "cuda"));
    }
}

} // namespace
} // namespace gpuradar::test
