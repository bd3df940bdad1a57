/*
 * The CFAR CPU twins on the CPU pool (cpu_threads.h): at every thread count, cfar_2d (ca,
 * go, so, os; clipped and wrapped edges; several CPIs and channels) and cfar_1d give, bit
 * for bit, the mask, the thresholds and the report (detection list, found, non-finite
 * counts) of one thread, on fresh random maps with targets and non-finite cells, row
 * counts that no count above one divides, and a detection list too small for all.
 */
#include "cfar_test_support.h"
#include "cpu_threads_support.h"
#include <gpuradar/kernels/detection/cfar_1d.h>
#include <gpuradar/kernels/detection/cfar_2d.h>
#include <functional>

namespace gpuradar::test {
namespace {

using kernels::backend;
using kernels::cfar_edge;
using kernels::cfar_report;

//! Everything a CFAR run gives back.
struct cfar_outputs {
    std::vector<std::uint8_t> mask;
    std::vector<float> threshold;
    cfar_report report;
};

//! Exponential noise with targets 30x the mean every 97 cells and a NaN, +Inf and -Inf.
std::vector<float> noisy_map(std::size_t n, std::uint64_t seed)
{
    auto map = exponential_map(n, seed);
    for (std::size_t i = 13; i < n; i += 97)
        map[i] *= 30.f;
    map[n / 3] = NAN;
    map[n / 2] = INFINITY;
    map[n - 5] = -INFINITY;
    return map;
}

//! run(power, mask, threshold) of one stage, made once, at every pool count; each
//! run's outputs poisoned first.
std::vector<cfar_outputs>
outputs_at_counts(std::size_t n,
                  const std::function<void(std::uint8_t*, float*)>& run,
                  const std::function<cfar_report()>& collect)
{
    thread_count_guard guard;
    std::vector<cfar_outputs> out;
    for (const int c : pool_test_counts()) {
        kernels::set_cpu_threads(c);
        cfar_outputs o{ std::vector<std::uint8_t>(n, 0xAB),
                        std::vector<float>(n, NAN),
                        {} };
        run(o.mask.data(), o.threshold.data());
        o.report = collect();
        out.push_back(std::move(o));
    }
    return out;
}

void expect_same_as_one_thread(const std::vector<cfar_outputs>& outs)
{
    const cfar_outputs& one = outs[0];
    for (const auto m : one.mask)
        ASSERT_LE(m, 1) << "a mask cell left unwritten";
    for (std::size_t i = 1; i < outs.size(); ++i) {
        const int threads = pool_test_counts()[i];
        EXPECT_TRUE(bitwise_equal(one.mask, outs[i].mask)) << threads << " threads";
        EXPECT_TRUE(bitwise_equal(one.threshold, outs[i].threshold))
            << threads << " threads";
        EXPECT_TRUE(bitwise_equal(one.report.detections, outs[i].report.detections))
            << threads << " threads: " << outs[i].report.detections.size()
            << " detections against " << one.report.detections.size();
        EXPECT_EQ(one.report.found, outs[i].report.found) << threads << " threads";
        EXPECT_EQ(one.report.nonfinite, outs[i].report.nonfinite)
            << threads << " threads";
    }
}

struct cfar_2d_case {
    cfar_variant variant;
    cfar_edge range_edge, doppler_edge;
};

class CpuThreadsCfar2d : public ::testing::TestWithParam<cfar_2d_case>
{
};

TEST_P(CpuThreadsCfar2d, test_001_same_as_one_thread)
{
    const cfar_2d_case k = GetParam();
    kernels::cfar_2d_params p;
    p.nrange = 293; // prime: no band split divides it
    p.ndoppler = 64;
    p.channels = 2;
    p.max_cpi = 3;
    p.guard_range = 2;
    p.train_range = 4;
    p.guard_doppler = 1;
    p.train_doppler = 3;
    p.range_edge = k.range_edge;
    p.doppler_edge = k.doppler_edge;
    p.variant = k.variant;
    if (k.variant == cfar_variant::os)
        p.os_k = 60;
    p.pfa = 1e-3;
    p.local_max = true;
    const std::size_t n = p.max_cpi * p.nrange * p.channels * p.ndoppler;
    const auto power = noisy_map(n, 101 + std::uint64_t(k.variant));
    // Made at one thread: later counts grow its workspaces.
    thread_count_guard guard;
    kernels::set_cpu_threads(1);
    auto cfar = kernels::cfar_2d::make(backend::cpu, p);
    const auto outs = outputs_at_counts(
        n,
        [&](std::uint8_t* m, float* t) { cfar->run(power.data(), m, t, p.max_cpi); },
        [&] { return cfar->collect(); });
    ASSERT_GT(outs[0].report.found, 10u) << "too few detections to compare";
    ASSERT_EQ(outs[0].report.nonfinite.size(), p.max_cpi * p.channels);
    std::uint64_t nonfinite = 0;
    for (const auto v : outs[0].report.nonfinite)
        nonfinite += v;
    ASSERT_EQ(nonfinite, 3u);
    expect_same_as_one_thread(outs);
}

INSTANTIATE_TEST_SUITE_P(
    VariantsAndEdges,
    CpuThreadsCfar2d,
    ::testing::Values(cfar_2d_case{ cfar_variant::ca, cfar_edge::clip, cfar_edge::wrap },
                      cfar_2d_case{ cfar_variant::ca, cfar_edge::wrap, cfar_edge::clip },
                      cfar_2d_case{ cfar_variant::go, cfar_edge::clip, cfar_edge::clip },
                      cfar_2d_case{ cfar_variant::so, cfar_edge::wrap, cfar_edge::wrap },
                      cfar_2d_case{ cfar_variant::os, cfar_edge::clip, cfar_edge::wrap },
                      cfar_2d_case{
                          cfar_variant::os, cfar_edge::wrap, cfar_edge::clip }));

TEST(CpuThreadsCfar, test_002_full_detection_list_keeps_the_first)
{
    // Room for 7 of the detections: every count keeps the same first 7 in memory order.
    kernels::cfar_2d_params p;
    p.nrange = 301;
    p.ndoppler = 32;
    p.max_cpi = 2;
    p.pfa = 1e-2;
    p.max_detections = 7;
    const std::size_t n = p.max_cpi * p.nrange * p.ndoppler;
    const auto power = noisy_map(n, 202);
    auto cfar = kernels::cfar_2d::make(backend::cpu, p);
    const auto outs = outputs_at_counts(
        n,
        [&](std::uint8_t* m, float* t) { cfar->run(power.data(), m, t, p.max_cpi); },
        [&] { return cfar->collect(); });
    ASSERT_TRUE(outs[0].report.overflow());
    ASSERT_EQ(outs[0].report.detections.size(), 7u);
    expect_same_as_one_thread(outs);
}

TEST(CpuThreadsCfar, test_003_cfar_1d_lines)
{
    // 1 row per map: the bands are runs of whole lines.
    for (const cfar_variant v : { cfar_variant::ca, cfar_variant::os }) {
        kernels::cfar_1d_params p;
        p.nrange = 509;
        p.channels = 3;
        p.max_items = 67;
        p.variant = v;
        if (v == cfar_variant::os)
            p.os_k = 12;
        p.pfa = 1e-3;
        p.local_max = true;
        const std::size_t n = p.max_items * p.channels * p.nrange;
        const auto power = noisy_map(n, 303 + std::uint64_t(v));
        auto cfar = kernels::cfar_1d::make(backend::cpu, p);
        const auto outs = outputs_at_counts(
            n,
            [&](std::uint8_t* m, float* t) {
                cfar->run(power.data(), m, t, p.max_items);
            },
            [&] { return cfar->collect(); });
        ASSERT_GT(outs[0].report.found, 10u);
        expect_same_as_one_thread(outs);
    }
}

TEST(CpuThreadsCfar, test_004_threshold_output_optional)
{
    // Without a threshold output each participant uses its own row buffer.
    kernels::cfar_2d_params p;
    p.nrange = 257;
    p.ndoppler = 48;
    p.pfa = 1e-3;
    const std::size_t n = p.nrange * p.ndoppler;
    const auto power = noisy_map(n, 404);
    for (const cfar_variant v : { cfar_variant::ca, cfar_variant::os }) {
        p.variant = v;
        p.os_k = v == cfar_variant::os ? 40 : 0;
        auto cfar = kernels::cfar_2d::make(backend::cpu, p);
        const auto outs = outputs_at_counts(
            n,
            [&](std::uint8_t* m, float* t) {
                cfar->run(power.data(), m, nullptr, 1);
                std::fill(t, t + n, 0.f); // not an output here
            },
            [&] { return cfar->collect(); });
        ASSERT_GT(outs[0].report.found, 0u);
        expect_same_as_one_thread(outs);
    }
}

} // namespace
} // namespace gpuradar::test
