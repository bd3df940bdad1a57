/* pulse_framer on both backends: the CUDA framer (gates cut on the GPU) gives exactly the
 * CPU framer's pulses, tags and counts, for integer and fractional PRIs and across an
 * injected overflow; the threshold trigger stays on the host. */
#include "invalid_argument_check.h"
#include "stream_tags.h"
#include "test_support.h"
#include <gnuradio/blocks/vector_sink.h>
#include <gnuradio/blocks/vector_source.h>
#include <gnuradio/gpuradar/pulse_framer.h>
#include <gnuradio/top_block.h>
#include <pmt/pmt.h>
#include <algorithm>

namespace gpuradar::test {
namespace {

namespace grr = gr::gpuradar;

struct framed {
    std::vector<gr_complex> data;
    std::vector<gr::tag_t> tags;
    std::uint64_t dropped, emitted;
    std::string backend;
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
    return { snk->data(), t, f->dropped_cpis(), f->emitted_cpis(), f->backend() };
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

} // namespace
} // namespace gpuradar::test
