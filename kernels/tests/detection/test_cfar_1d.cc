/*
 * cfar_1d: the CPU twin against the fp64 direct reference, detections, bad parameters;
 * CUDA against the CPU twin (suites named *Cuda*, ctest label gpu).
 */
#include "cfar_test_support.h"
#include "invalid_argument_check.h"
#include <gpuradar/kernels/detection/cfar_1d.h>
#include <set>

namespace gpuradar::test {
namespace {

using kernels::backend;
using kernels::cfar_1d;
using kernels::cfar_1d_params;
using kernels::cfar_edge;
using kernels::cfar_estimator;
using kernels::cfar_report;

struct run_output {
    std::vector<std::uint8_t> mask;
    std::vector<float> threshold;
    cfar_report report;
};

std::size_t lines_of(const cfar_1d_params& p, std::size_t nitems)
{
    return nitems * p.channels;
}

//! Exponential noise, strong cells, and non-finite cells in the first and last line.
std::vector<float>
test_power(const cfar_1d_params& p, std::size_t nitems, std::uint64_t seed)
{
    const std::size_t lines = lines_of(p, nitems);
    auto v = exponential_map(lines * p.nrange, seed);
    fast_rng rng(seed ^ 0xfeed);
    for (std::size_t l = 0; l < lines; ++l)
        for (int t = 0; t < 2; ++t)
            v[l * p.nrange + rng.next() % p.nrange] = float(30 + 300 * rng.uniform());
    v[p.nrange / 2] = NAN;
    v[0] = INFINITY;
    v[lines * p.nrange - 1] = -INFINITY;
    return v;
}

run_output run_on(backend b,
                  const cfar_1d_params& p,
                  const std::vector<float>& power,
                  std::size_t nitems)
{
    run_output o;
    if (b == backend::cpu) {
        auto cfar = cfar_1d::make(b, p);
        o.mask.assign(power.size(), 0xAB);
        o.threshold.assign(power.size(), NAN);
        cfar->run(power.data(), o.mask.data(), o.threshold.data(), nitems);
        o.report = cfar->collect();
        return o;
    }
    kernels::cuda_stream stream;
    auto cfar = cfar_1d::make(b, p, stream.ref());
    auto d_power = to_device(power, stream);
    kernels::device_memory d_mask(power.size());
    kernels::device_memory d_thr(power.size() * sizeof(float));
    poison(d_mask, stream);
    poison(d_thr, stream);
    cfar->run(d_power.as<float>(), d_mask.as<std::uint8_t>(), d_thr.as<float>(), nitems);
    o.report = cfar->collect();
    o.mask = to_host<std::uint8_t>(d_mask, power.size(), stream);
    o.threshold = to_host<float>(d_thr, power.size(), stream);
    return o;
}

ref_window ref_of(const cfar_1d_params& p)
{
    ref_window w;
    w.gc = p.guard;
    w.tc = p.train;
    w.col_wrap = p.edge == cfar_edge::wrap;
    w.variant = p.variant;
    w.k = p.os_k;
    w.pfa = p.pfa;
    w.local_max = p.local_max;
    w.lm_rows = 0;
    return w;
}

struct case_1d {
    cfar_variant variant;
    cfar_edge edge;
    bool local_max;
};

std::string case_name(const ::testing::TestParamInfo<case_1d>& info)
{
    return std::string(to_string(info.param.variant)) + "_" + to_string(info.param.edge) +
           (info.param.local_max ? "_localmax" : "");
}

std::vector<case_1d> all_cases()
{
    std::vector<case_1d> out;
    for (auto v :
         { cfar_variant::ca, cfar_variant::go, cfar_variant::so, cfar_variant::os })
        for (auto e : { cfar_edge::clip, cfar_edge::wrap })
            for (bool lm : { false, true })
                out.push_back({ v, e, lm });
    return out;
}

//! 101 range bins, 3 channels, 2 items; guard 2, train 6 per side: N = 12.
cfar_1d_params small_params(const case_1d& c)
{
    cfar_1d_params p;
    p.nrange = 101;
    p.channels = 3;
    p.guard = 2;
    p.train = 6;
    p.edge = c.edge;
    p.variant = c.variant;
    p.os_k = 9;
    p.pfa = 2e-2;
    p.local_max = c.local_max;
    p.max_items = 2;
    return p;
}

class Cfar1dCpu : public ::testing::TestWithParam<case_1d>
{
};

TEST_P(Cfar1dCpu, test_001_matches_fp64_reference)
{
    const auto p = small_params(GetParam());
    const auto power = test_power(p, 2, 11);
    const auto o = run_on(backend::cpu, p, power, 2);
    std::size_t soft = 0, detections = 0;
    std::vector<std::uint64_t> nonfinite(lines_of(p, 2), 0);
    std::vector<kernels::cfar_detection> want;
    for (std::size_t l = 0; l < lines_of(p, 2); ++l) {
        const float* line = power.data() + l * p.nrange;
        const auto ref = reference_cfar(line, p.nrange, 1, int(p.nrange), ref_of(p));
        for (std::size_t r = 0; r < p.nrange; ++r) {
            const std::size_t i = l * p.nrange + r;
            nonfinite[l] += !std::isfinite(line[r]);
            EXPECT_LT(threshold_rel_diff(o.threshold[i], ref.threshold[r]), 1e-5);
            ASSERT_LE(o.mask[i], 1);
            detections += o.mask[i];
            if (o.mask[i])
                want.push_back({ std::uint32_t(l),
                                 std::uint32_t(r),
                                 0,
                                 line[r],
                                 o.threshold[i],
                                 0 });
            if (o.mask[i] != ref.mask[r]) {
                ++soft;
                ASSERT_TRUE(near_threshold(line[r], ref.threshold[r]))
                    << "line " << l << " bin " << r << " x " << line[r] << " T_ref "
                    << ref.threshold[r];
            }
        }
    }
    EXPECT_GT(detections, 0u);
    EXPECT_LE(soft, 2u);
    EXPECT_EQ(o.report.nonfinite, nonfinite);
    ASSERT_EQ(o.report.detections.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
        const auto& g = o.report.detections[i];
        EXPECT_EQ(std::tie(g.map, g.range_bin, g.doppler_bin),
                  std::tie(want[i].map, want[i].range_bin, want[i].doppler_bin));
        EXPECT_EQ(g.power, want[i].power);
        EXPECT_EQ(g.threshold, want[i].threshold);
        // The range neighbours for interpolation, from the line; no Doppler neighbours.
        const float* line = power.data() + std::size_t(g.map) * p.nrange;
        const long r = long(g.range_bin), n = long(p.nrange);
        const bool wrap = p.edge == kernels::cfar_edge::wrap;
        const auto at = [&](long j) -> float {
            if (j < 0 || j >= n)
                return wrap ? line[(j + n) % n] : NAN;
            return line[j];
        };
        const auto same = [](float a, float b) {
            return (std::isnan(a) && std::isnan(b)) || a == b;
        };
        EXPECT_TRUE(same(g.range_prev, at(r - 1))) << "detection " << i;
        EXPECT_TRUE(same(g.range_next, at(r + 1))) << "detection " << i;
        EXPECT_TRUE(std::isnan(g.doppler_prev) && std::isnan(g.doppler_next));
    }
}

INSTANTIATE_TEST_SUITE_P(AllVariantsAndEdges,
                         Cfar1dCpu,
                         ::testing::ValuesIn(all_cases()),
                         case_name);

TEST(Cfar1dApi, test_002_injected_targets_found_at_their_bins)
{
    cfar_1d_params p;
    p.nrange = 4000;
    p.channels = 2;
    p.max_items = 3;
    p.guard = 2;
    p.train = 16;
    p.pfa = 1e-8;
    p.local_max = true;
    auto power = exponential_map(3 * 2 * p.nrange, 7);
    const std::set<std::pair<std::uint32_t, std::uint32_t>> want = {
        { 0, 0 }, { 0, 1234 }, { 3, 3999 }, { 5, 2000 }
    };
    for (const auto& [line, bin] : want)
        power[line * p.nrange + bin] = 2000.f;
    // A target spread over three bins reports once, at its peak.
    power[2 * p.nrange + 499] = 800.f;
    power[2 * p.nrange + 500] = 1500.f;
    power[2 * p.nrange + 501] = 700.f;
    auto expected = want;
    expected.insert({ 2, 500 });
    auto cfar = cfar_1d::make(backend::cpu, p);
    std::vector<std::uint8_t> mask(power.size());
    cfar->run(power.data(), mask.data(), nullptr, 3);
    std::set<std::pair<std::uint32_t, std::uint32_t>> got;
    for (const auto& d : cfar->collect().detections) {
        got.insert({ d.map, d.range_bin });
        EXPECT_EQ(d.doppler_bin, 0u);
    }
    EXPECT_EQ(got, expected);
}

//! make() must throw std::invalid_argument naming the stage and holding `needle`.
void expect_rejected(const cfar_1d_params& p, const std::string& needle)
{
    const auto make = [&] { kernels::cfar_1d::make(backend::cpu, p); };
    expect_invalid(make, "gpuradar::cfar_1d: ");
    expect_invalid(make, needle);
}

TEST(Cfar1dApi, test_003_bad_parameters_name_the_parameter)
{
    cfar_1d_params ok;
    ok.nrange = 19; // 2 * (1 + 8) + 1: the boundary passes
    EXPECT_NO_THROW(cfar_1d::make(backend::cpu, ok));
    auto p = ok;
    p.nrange = 18;
    expect_rejected(p, "2 * (guard + train) + 1 must be <= nrange = 18");
    p.edge = cfar_edge::wrap;
    expect_rejected(p, "edge=wrap");
    p = ok;
    p.guard = -1;
    expect_rejected(p, "guard must be >= 0 (got -1)");
    p = ok;
    p.train = 0;
    expect_rejected(p, "train must be >= 1");
    p.train = -4;
    expect_rejected(p, "train must be >= 1");
    p = ok;
    p.pfa = 1.5;
    expect_rejected(p, "pfa must be in (0, 1) (got 1.5)");
    p = ok;
    p.variant = cfar_variant::os;
    p.os_k = 17;
    expect_rejected(p, "os_k must be in [1, 16]");
    p.os_k = 16;
    EXPECT_NO_THROW(cfar_1d::make(backend::cpu, p));
    p = ok;
    p.channels = 0;
    expect_rejected(p, "channels must be");
    p = ok;
    p.max_items = 0;
    expect_rejected(p, "max_items must be");
    p = ok;
    p.nrange = 0;
    expect_rejected(p, "nrange must be");
}

TEST(Cfar1dApi, test_004_run_checks_its_arguments)
{
    cfar_1d_params p;
    p.nrange = 64;
    auto cfar = cfar_1d::make(backend::cpu, p);
    std::vector<float> power(128, 1.f);
    std::vector<std::uint8_t> mask(128);
    EXPECT_THROW(cfar->run(power.data(), mask.data(), nullptr, 2), std::invalid_argument);
    EXPECT_THROW(cfar->run(power.data(), nullptr, nullptr, 1), std::invalid_argument);
}

class Cfar1dCuda : public ::testing::TestWithParam<case_1d>
{
};

TEST_P(Cfar1dCuda, test_010_matches_cpu_twin)
{
    GPURADAR_REQUIRE_CUDA();
    for (auto est : { cfar_estimator::segmented, cfar_estimator::summed_area }) {
        if (GetParam().variant == cfar_variant::os && est != cfar_estimator::segmented)
            continue;
        // 1003 bins (not a multiple of 32), 3 channels x 37 items = 111 lines: the lines
        // run as the rows of one map on the device.
        auto p = small_params(GetParam());
        p.nrange = 1003;
        p.max_items = 37;
        p.estimator = est;
        const auto power = test_power(p, 37, 21);
        const auto cpu = run_on(backend::cpu, p, power, 37);
        const auto gpu = run_on(backend::cuda, p, power, 37);
        std::size_t soft = 0;
        for (std::size_t i = 0; i < power.size(); ++i) {
            ASSERT_LE(gpu.mask[i], 1) << "unwritten mask cell " << i;
            EXPECT_LE(threshold_rel_diff(gpu.threshold[i], cpu.threshold[i]),
                      est == cfar_estimator::segmented ? 1e-6 : 2e-5);
            if (gpu.mask[i] != cpu.mask[i]) {
                ++soft;
                EXPECT_TRUE(may_differ(power[i], cpu.threshold[i], gpu.threshold[i]))
                    << i;
            }
        }
        EXPECT_LE(soft, 2u);
        EXPECT_EQ(gpu.report.nonfinite, cpu.report.nonfinite);
        if (soft == 0) {
            ASSERT_EQ(gpu.report.detections.size(), cpu.report.detections.size());
            for (std::size_t i = 0; i < cpu.report.detections.size(); ++i) {
                const auto& g = gpu.report.detections[i];
                const auto& c = cpu.report.detections[i];
                EXPECT_EQ(std::tie(g.map, g.range_bin, g.doppler_bin),
                          std::tie(c.map, c.range_bin, c.doppler_bin));
                // The neighbours for interpolation: the same map values, or both NaN.
                for (const auto& [x, y] : { std::pair{ g.range_prev, c.range_prev },
                                            std::pair{ g.range_next, c.range_next },
                                            std::pair{ g.doppler_prev, c.doppler_prev },
                                            std::pair{ g.doppler_next, c.doppler_next } })
                    EXPECT_TRUE((std::isnan(x) && std::isnan(y)) || x == y)
                        << "detection " << i << ": " << x << " vs " << y;
            }
        }
    }
}

INSTANTIATE_TEST_SUITE_P(AllVariantsAndEdges,
                         Cfar1dCuda,
                         ::testing::ValuesIn(all_cases()),
                         case_name);

} // namespace
} // namespace gpuradar::test
