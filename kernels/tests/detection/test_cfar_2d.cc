/*
 * cfar_2d: the CPU twin against the fp64 direct reference (every variant, edge mode and
 * the local-maximum option), detections, non-finite input, bad parameters; CUDA
 * against the CPU twin (suites named *Cuda*, ctest label gpu).
 */
#include "cfar_test_support.h"
#include "detection/cfar_plan.h" // test_013: the arithmetic both backends share
#include "invalid_argument_check.h"
#include <gpuradar/kernels/detection/cfar_2d.h>
#include <cstring>
#include <set>

namespace gpuradar::test {
namespace {

using kernels::backend;
using kernels::cfar_2d;
using kernels::cfar_2d_params;
using kernels::cfar_detection;
using kernels::cfar_edge;
using kernels::cfar_estimator;
using kernels::cfar_report;

std::size_t index_of(const cfar_2d_params& p,
                     std::size_t cpi,
                     std::size_t r,
                     std::size_t ch,
                     std::size_t d)
{
    return ((cpi * p.nrange + r) * p.channels + ch) * p.ndoppler + d;
}

std::size_t total_cells(const cfar_2d_params& p, std::size_t ncpi)
{
    return ncpi * p.nrange * p.channels * p.ndoppler;
}

/*!
 * Exponential noise, a few strong cells (targets) per map, and in the first and last map
 * non-finite cells (NaN, +Inf, -Inf), so that every comparison also covers them.
 */
std::vector<float>
test_power(const cfar_2d_params& p, std::size_t ncpi, std::uint64_t seed)
{
    auto v = exponential_map(total_cells(p, ncpi), seed);
    fast_rng rng(seed ^ 0x5eed);
    for (std::size_t cpi = 0; cpi < ncpi; ++cpi)
        for (std::size_t ch = 0; ch < p.channels; ++ch)
            for (int t = 0; t < 4; ++t)
                v[index_of(p, cpi, rng.next() % p.nrange, ch, rng.next() % p.ndoppler)] =
                    float(20 + 200 * rng.uniform());
    v[index_of(p, 0, p.nrange / 3, 0, 1)] = NAN;
    v[index_of(p, 0, 0, 0, p.ndoppler - 1)] = INFINITY;
    v[index_of(p, ncpi - 1, p.nrange - 1, p.channels - 1, p.ndoppler / 2)] = -INFINITY;
    return v;
}

ref_window ref_of(const cfar_2d_params& p)
{
    ref_window w;
    w.gr = p.guard_range;
    w.tr = p.train_range;
    w.gc = p.guard_doppler;
    w.tc = p.train_doppler;
    w.row_wrap = p.range_edge == cfar_edge::wrap;
    w.col_wrap = p.doppler_edge == cfar_edge::wrap;
    w.variant = p.variant;
    w.k = p.os_k;
    w.pfa = p.pfa;
    w.local_max = p.local_max;
    w.lm_rows = 1;
    return w;
}

struct run_output {
    std::vector<std::uint8_t> mask;
    std::vector<float> threshold;
    cfar_report report;
    cfar_estimator estimator = cfar_estimator::segmented; // the one that ran
};

run_output
run_cpu(const cfar_2d_params& p, const std::vector<float>& power, std::size_t ncpi)
{
    auto cfar = cfar_2d::make(backend::cpu, p);
    run_output o;
    o.mask.assign(power.size(), 0xAB); // neither 0 nor 1: an unwritten cell fails
    o.threshold.assign(power.size(), NAN);
    cfar->run(power.data(), o.mask.data(), o.threshold.data(), ncpi);
    o.report = cfar->collect();
    return o;
}

//! The detection list must be the mask's cells, in order, with the map's power and T.
//! Power of map cell (cpi, r, ch, d) stepped by (dr, dd), or NaN beyond a clipped edge.
float neighbour_of(const cfar_2d_params& p,
                   const std::vector<float>& power,
                   const cfar_detection& det,
                   int dr,
                   int dd)
{
    const long nr = long(p.nrange), nd = long(p.ndoppler);
    long r = long(det.range_bin) + dr, d = long(det.doppler_bin) + dd;
    if (r < 0 || r >= nr) {
        if (p.range_edge == cfar_edge::clip)
            return NAN;
        r = (r + nr) % nr;
    }
    if (d < 0 || d >= nd) {
        if (p.doppler_edge == cfar_edge::clip)
            return NAN;
        d = (d + nd) % nd;
    }
    const std::size_t cpi = det.map / p.channels, ch = det.map % p.channels;
    return power[index_of(p, cpi, std::size_t(r), ch, std::size_t(d))];
}

//! Equal floats, or both NaN.
bool same_value(float a, float b)
{
    return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof a) == 0;
}

//! The four neighbours a detection carries for interpolation, from the map.
void expect_neighbours_from_map(const cfar_2d_params& p,
                                const std::vector<float>& power,
                                const cfar_detection& g)
{
    EXPECT_TRUE(same_value(g.range_prev, neighbour_of(p, power, g, -1, 0)));
    EXPECT_TRUE(same_value(g.range_next, neighbour_of(p, power, g, 1, 0)));
    EXPECT_TRUE(same_value(g.doppler_prev, neighbour_of(p, power, g, 0, -1)));
    EXPECT_TRUE(same_value(g.doppler_next, neighbour_of(p, power, g, 0, 1)));
}

void expect_list_matches_mask(const cfar_2d_params& p,
                              std::size_t ncpi,
                              const std::vector<float>& power,
                              const run_output& o)
{
    std::vector<cfar_detection> want;
    for (std::size_t cpi = 0; cpi < ncpi; ++cpi)
        for (std::size_t ch = 0; ch < p.channels; ++ch)
            for (std::size_t r = 0; r < p.nrange; ++r)
                for (std::size_t d = 0; d < p.ndoppler; ++d) {
                    const std::size_t i = index_of(p, cpi, r, ch, d);
                    if (o.mask[i])
                        want.push_back({ std::uint32_t(cpi * p.channels + ch),
                                         std::uint32_t(r),
                                         std::uint32_t(d),
                                         power[i],
                                         o.threshold[i],
                                         0.f });
                }
    ASSERT_EQ(o.report.found, want.size());
    ASSERT_EQ(o.report.detections.size(),
              std::min<std::size_t>(want.size(), p.max_detections));
    for (std::size_t i = 0; i < o.report.detections.size(); ++i) {
        const auto& g = o.report.detections[i];
        EXPECT_EQ(g.map, want[i].map);
        EXPECT_EQ(g.range_bin, want[i].range_bin);
        EXPECT_EQ(g.doppler_bin, want[i].doppler_bin);
        EXPECT_EQ(g.power, want[i].power);
        EXPECT_EQ(g.threshold, want[i].threshold);
        EXPECT_GT(g.noise, 0.f);
        EXPECT_LT(g.noise, g.threshold); // alpha > 1 at these pfa
        expect_neighbours_from_map(p, power, g);
    }
}

//! Non-finite cells per map, counted from the input.
std::vector<std::uint64_t> nonfinite_per_map(const cfar_2d_params& p,
                                             std::size_t ncpi,
                                             const std::vector<float>& power)
{
    std::vector<std::uint64_t> n(ncpi * p.channels, 0);
    for (std::size_t cpi = 0; cpi < ncpi; ++cpi)
        for (std::size_t r = 0; r < p.nrange; ++r)
            for (std::size_t ch = 0; ch < p.channels; ++ch)
                for (std::size_t d = 0; d < p.ndoppler; ++d)
                    n[cpi * p.channels + ch] +=
                        !std::isfinite(power[index_of(p, cpi, r, ch, d)]);
    return n;
}

//! CPU output against the fp64 reference: exact masks outside the 1e-6 band.
void expect_matches_reference(const cfar_2d_params& p,
                              std::size_t ncpi,
                              const std::vector<float>& power,
                              const run_output& o)
{
    const std::size_t row_stride = p.channels * p.ndoppler;
    std::size_t soft = 0, detections = 0;
    double worst_t = 0;
    for (std::size_t cpi = 0; cpi < ncpi; ++cpi) {
        for (std::size_t ch = 0; ch < p.channels; ++ch) {
            const std::size_t base = index_of(p, cpi, 0, ch, 0);
            const auto ref = reference_cfar(power.data() + base,
                                            row_stride,
                                            int(p.nrange),
                                            int(p.ndoppler),
                                            ref_of(p));
            for (std::size_t r = 0; r < p.nrange; ++r) {
                for (std::size_t d = 0; d < p.ndoppler; ++d) {
                    const std::size_t i = base + r * row_stride + d;
                    const std::size_t k = r * p.ndoppler + d;
                    const double t = ref.threshold[k];
                    worst_t = std::max(worst_t, threshold_rel_diff(o.threshold[i], t));
                    ASSERT_LE(o.mask[i], 1) << "unwritten mask cell";
                    detections += o.mask[i];
                    if (o.mask[i] == ref.mask[k])
                        continue;
                    ++soft;
                    ASSERT_TRUE(near_threshold(power[i], t))
                        << "mask differs from the fp64 reference at cpi " << cpi << " ch "
                        << ch << " range " << r << " doppler " << d << ": x " << power[i]
                        << " T_ref " << t << " T " << o.threshold[i] << " mask "
                        << int(o.mask[i]);
                }
            }
        }
    }
    // Float sums of N <= 64 cells against fp64: a few ulps of the sum.
    EXPECT_LT(worst_t, 1e-5);
    EXPECT_GT(detections, 0u) << "the case detects nothing: it proves little";
    EXPECT_LE(soft, 2u);
    EXPECT_EQ(o.report.nonfinite, nonfinite_per_map(p, ncpi, power));
    expect_list_matches_mask(p, ncpi, power, o);
}

struct case_2d {
    cfar_variant variant;
    cfar_edge range_edge;
    cfar_edge doppler_edge;
    bool local_max;
};

std::string case_name(const ::testing::TestParamInfo<case_2d>& info)
{
    const auto& c = info.param;
    return std::string(to_string(c.variant)) + "_range_" + to_string(c.range_edge) +
           "_doppler_" + to_string(c.doppler_edge) + (c.local_max ? "_localmax" : "");
}

std::vector<case_2d> all_cases()
{
    std::vector<case_2d> out;
    for (auto v :
         { cfar_variant::ca, cfar_variant::go, cfar_variant::so, cfar_variant::os })
        for (auto re : { cfar_edge::clip, cfar_edge::wrap })
            for (auto de : { cfar_edge::wrap, cfar_edge::clip })
                for (bool lm : { false, true })
                    out.push_back({ v, re, de, lm });
    return out;
}

//! 37 x 23 maps, 2 channels, 2 CPIs; window 9 x 7 with a 3 x 3 guard: N = 54.
cfar_2d_params small_params(const case_2d& c)
{
    cfar_2d_params p;
    p.nrange = 37;
    p.ndoppler = 23;
    p.channels = 2;
    p.guard_range = 1;
    p.train_range = 3;
    p.guard_doppler = 1;
    p.train_doppler = 2;
    p.range_edge = c.range_edge;
    p.doppler_edge = c.doppler_edge;
    p.variant = c.variant;
    p.os_k = 40;
    p.pfa = 1e-2; // detections on noise too, so the masks carry information
    p.local_max = c.local_max;
    p.max_cpi = 2;
    return p;
}

class Cfar2dCpu : public ::testing::TestWithParam<case_2d>
{
};

TEST_P(Cfar2dCpu, test_001_matches_fp64_reference)
{
    const auto p = small_params(GetParam());
    const auto power = test_power(p, 2, 1001);
    expect_matches_reference(p, 2, power, run_cpu(p, power, 2));
}

INSTANTIATE_TEST_SUITE_P(AllVariantsAndEdges,
                         Cfar2dCpu,
                         ::testing::ValuesIn(all_cases()),
                         case_name);

TEST(Cfar2dWindows, test_002_window_shapes_match_reference)
{
    // {guard_range, train_range, guard_doppler, train_doppler}: no range guard, no
    // Doppler training (empty lead half on the first rows), no range training, and the
    // PD window; each with every variant and both edges clipped (most clip classes).
    const int shapes[][4] = {
        { 0, 2, 1, 2 }, { 1, 3, 1, 0 }, { 2, 0, 0, 3 }, { 1, 5, 1, 1 }
    };
    std::uint64_t seed = 2000;
    for (const auto& s : shapes) {
        for (auto v :
             { cfar_variant::ca, cfar_variant::go, cfar_variant::so, cfar_variant::os }) {
            cfar_2d_params p;
            p.nrange = 29;
            p.ndoppler = 17;
            p.channels = 1;
            p.guard_range = s[0];
            p.train_range = s[1];
            p.guard_doppler = s[2];
            p.train_doppler = s[3];
            p.range_edge = cfar_edge::clip;
            p.doppler_edge = cfar_edge::clip;
            p.variant = v;
            const int wr = s[0] + s[1], wd = s[2] + s[3];
            const int n = (2 * wr + 1) * (2 * wd + 1) - (2 * s[0] + 1) * (2 * s[2] + 1);
            p.os_k = kernels::cfar_default_os_k(n);
            p.pfa = 2e-2;
            SCOPED_TRACE(std::string(to_string(v)) + " window " + std::to_string(s[0]) +
                         "," + std::to_string(s[1]) + "," + std::to_string(s[2]) + "," +
                         std::to_string(s[3]));
            const auto power = test_power(p, 1, seed++);
            expect_matches_reference(p, 1, power, run_cpu(p, power, 1));
        }
    }
}

TEST(Cfar2dApi, test_003_training_cells_and_alpha)
{
    cfar_2d_params p; // defaults: the PD window, guard/train range 1,5 and Doppler 1,1
    p.nrange = 64;
    p.ndoppler = 32;
    auto ca = cfar_2d::make(backend::cpu, p);
    EXPECT_EQ(ca->training_cells(), 13 * 5 - 3 * 3);
    EXPECT_NEAR(ca->alpha(), 56 * (std::pow(1e-6, -1.0 / 56) - 1), 1e-12);
    EXPECT_EQ(ca->os_k(), 0);
    p.variant = cfar_variant::os;
    p.os_k = 42;
    auto os = cfar_2d::make(backend::cpu, p);
    EXPECT_EQ(os->os_k(), 42);
    EXPECT_NEAR(
        kernels::cfar_pfa(cfar_variant::os, { 28, 28 }, 42, os->alpha()), 1e-6, 1e-12);
}

TEST(Cfar2dApi, test_004_injected_targets_found_at_their_bins)
{
    cfar_2d_params p;
    p.nrange = 200;
    p.ndoppler = 64;
    p.channels = 2;
    p.max_cpi = 2;
    p.local_max = true;
    p.pfa = 1e-9;
    auto power = exponential_map(total_cells(p, 2), 4242);
    struct target {
        std::size_t cpi, ch, r, d;
        float power;
    };
    // Point targets; one sits on the wrapped Doppler edge, one on the first range bin.
    const std::vector<target> targets = { { 0, 0, 50, 10, 1e3f },
                                          { 0, 1, 120, 63, 5e2f },
                                          { 1, 0, 0, 30, 2e3f },
                                          { 1, 1, 199, 0, 8e2f },
                                          { 1, 1, 77, 40, 3e3f } };
    for (const auto& t : targets)
        power[index_of(p, t.cpi, t.r, t.ch, t.d)] = t.power;
    // An extended target: a 3 x 3 blob around (cpi 0, ch 1, 150, 20), peak in its centre;
    // without local_max all nine cells would be detections.
    for (int dr = -1; dr <= 1; ++dr)
        for (int dd = -1; dd <= 1; ++dd)
            power[index_of(p, 0, 150 + dr, 1, 20 + dd)] = (dr || dd) ? 600.f : 900.f;
    auto cfar = cfar_2d::make(backend::cpu, p);
    std::vector<std::uint8_t> mask(power.size());
    cfar->run(power.data(), mask.data(), nullptr, 2);
    const auto report = cfar->collect();

    std::set<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>> want, got;
    for (const auto& t : targets)
        want.insert({ std::uint32_t(t.cpi * p.channels + t.ch),
                      std::uint32_t(t.r),
                      std::uint32_t(t.d) });
    want.insert({ 1u, 150u, 20u });
    for (const auto& d : report.detections) {
        got.insert({ d.map, d.range_bin, d.doppler_bin });
        EXPECT_EQ(
            d.power,
            power[index_of(
                p, d.map / p.channels, d.range_bin, d.map % p.channels, d.doppler_bin)]);
        // Interference ~1 (unit noise): the reported level is near it.
        EXPECT_GT(d.noise, 0.3f);
        EXPECT_LT(d.noise, 3.0f);
    }
    EXPECT_EQ(got, want);
    EXPECT_FALSE(report.overflow());
}

TEST(Cfar2dApi, test_005_detection_overflow_is_reported)
{
    auto p = small_params({ cfar_variant::ca, cfar_edge::clip, cfar_edge::wrap, false });
    p.max_detections = 5;
    const auto power = test_power(p, 2, 77);
    auto full = p;
    full.max_detections = 1 << 20;
    const auto all = run_cpu(full, power, 2);
    const auto some = run_cpu(p, power, 2);
    ASSERT_GT(all.report.found, 5u);
    EXPECT_EQ(some.report.found, all.report.found);
    EXPECT_TRUE(some.report.overflow());
    ASSERT_EQ(some.report.detections.size(), 5u);
    EXPECT_EQ(some.mask, all.mask);     // the mask is complete regardless
    for (std::size_t i = 0; i < 5; ++i) // CPU keeps the first in memory order
        EXPECT_EQ(some.report.detections[i].range_bin,
                  all.report.detections[i].range_bin);
}

TEST(Cfar2dApi, test_006_nonfinite_cells_never_detected_and_counted)
{
    cfar_2d_params p;
    p.nrange = 40;
    p.ndoppler = 16;
    p.channels = 2;
    p.max_cpi = 1;
    p.pfa = 1e-3;
    for (auto v :
         { cfar_variant::ca, cfar_variant::go, cfar_variant::so, cfar_variant::os }) {
        p.variant = v;
        p.os_k = 42;
        std::vector<float> power(total_cells(p, 1), 1.0f);
        power[index_of(p, 0, 10, 0, 5)] = NAN;
        power[index_of(p, 0, 11, 0, 5)] = INFINITY;
        power[index_of(p, 0, 30, 1, 3)] = -INFINITY;
        power[index_of(p, 0, 30, 1, 5)] = 1e4f; // target beside bad data
        power[index_of(p, 0, 25, 0, 8)] = 1e4f; // target far from it
        const auto o = run_cpu(p, power, 1);
        EXPECT_EQ(o.report.nonfinite, (std::vector<std::uint64_t>{ 2, 1 }))
            << to_string(v);
        EXPECT_EQ(o.mask[index_of(p, 0, 10, 0, 5)], 0);
        EXPECT_EQ(o.mask[index_of(p, 0, 11, 0, 5)], 0);
        EXPECT_EQ(o.mask[index_of(p, 0, 30, 1, 3)], 0);
        EXPECT_EQ(o.mask[index_of(p, 0, 25, 0, 8)], 1) << to_string(v);
        // The -Inf cell is a training cell of (30, 5), in its lead half (same range row,
        // Doppler - 2): ca and go see +Inf interference; so uses the lag half, os ranks
        // it last.
        const bool beside = v == cfar_variant::so || v == cfar_variant::os;
        EXPECT_EQ(o.mask[index_of(p, 0, 30, 1, 5)], beside ? 1 : 0) << to_string(v);
        if (!beside)
            EXPECT_TRUE(std::isinf(o.threshold[index_of(p, 0, 30, 1, 5)]));
        expect_matches_reference(p, 1, power, o);
    }
}

/*!
 * A map of exponential noise and targets, and the same map with huge finite cells (3e38
 * in clusters of three, within each other's training windows, and 1e35 singles): in
 * float the training sums of windows holding two 3e38 cells overflowed to +Inf. With the
 * training cap (cfar_max_training_power) every variant matches the fp64 reference that
 * caps the same way, the huge cells themselves are detected where they stand above
 * their windows, and every detection of a cell whose window holds no huge cell is the
 * clean map's.
 */
struct huge_map {
    std::vector<float> clean, huge;
    std::set<std::size_t> at; // the huge cells
};

huge_map make_huge_map(const cfar_2d_params& p, std::uint64_t seed)
{
    huge_map m;
    m.clean = exponential_map(total_cells(p, 1), seed);
    fast_rng rng(seed ^ 0xb16);
    for (int t = 0; t < 12; ++t)
        m.clean[index_of(p, 0, rng.next() % p.nrange, 0, rng.next() % p.ndoppler)] =
            float(30 + 300 * rng.uniform());
    m.huge = m.clean;
    for (std::size_t r : { 10u, 40u }) // a cluster: range r, r + 3, r + 6 (guard 1..2)
        for (std::size_t k = 0; k < 3; ++k)
            m.at.insert(index_of(p, 0, r + 3 * k, 0, 5));
    m.at.insert(index_of(p, 0, 25, 0, 12));
    for (std::size_t i : m.at)
        m.huge[i] = (i == index_of(p, 0, 25, 0, 12)) ? 1e35f : 3e38f;
    return m;
}

// True when the window of cell (r, d) (guard + training, wrapped) holds a huge cell;
// with training_only, when its training cells (the window less the guard box) do.
bool window_holds(const cfar_2d_params& p,
                  const huge_map& m,
                  std::size_t r,
                  std::size_t d,
                  bool training_only = false)
{
    const long wr = long(p.guard_range + p.train_range);
    const long wd = long(p.guard_doppler + p.train_doppler);
    for (long dr = -wr; dr <= wr; ++dr)
        for (long dd = -wd; dd <= wd; ++dd) {
            if (training_only && std::labs(dr) <= long(p.guard_range) &&
                std::labs(dd) <= long(p.guard_doppler))
                continue;
            const long rr = long(r) + dr,
                       cc = (long(d) + dd + long(p.ndoppler)) % long(p.ndoppler);
            if (rr < 0 || rr >= long(p.nrange))
                continue;
            if (m.at.count(index_of(p, 0, std::size_t(rr), 0, std::size_t(cc))))
                return true;
        }
    return false;
}

//! The window and map of the huge-cell tests (test_016 and its CUDA twin test_028).
cfar_2d_params huge_map_params()
{
    cfar_2d_params p;
    p.nrange = 64;
    p.ndoppler = 32;
    p.channels = 1; // make_huge_map and window_holds index channel 0
    p.max_cpi = 1;
    p.guard_range = 2;
    p.train_range = 6;
    p.guard_doppler = 1;
    p.train_doppler = 3;
    p.pfa = 1e-4;
    p.range_edge = cfar_edge::clip;
    p.doppler_edge = cfar_edge::wrap; // window_holds wraps Doppler
    return p;
}

TEST(Cfar2dApi, test_016_huge_finite_cells_cannot_overflow_the_training_sums)
{
    cfar_2d_params p = huge_map_params();
    const auto m = make_huge_map(p, 31);
    for (auto v :
         { cfar_variant::ca, cfar_variant::go, cfar_variant::so, cfar_variant::os }) {
        SCOPED_TRACE(to_string(v));
        p.variant = v;
        p.os_k = 60;
        const auto o = run_cpu(p, m.huge, 1);
        expect_matches_reference(p, 1, m.huge, o);
        for (float t : o.threshold)
            ASSERT_FALSE(std::isnan(t));
        // The 3e38 cells stand far above the cap their neighbours count as.
        for (std::size_t i : m.at)
            EXPECT_EQ(o.mask[i], 1) << "huge cell " << i;
        const auto ref = run_cpu(p, m.clean, 1);
        std::size_t kept = 0;
        for (std::size_t r = 0; r < p.nrange; ++r)
            for (std::size_t d = 0; d < p.ndoppler; ++d) {
                if (window_holds(p, m, r, d))
                    continue;
                const std::size_t i = index_of(p, 0, r, 0, d);
                ASSERT_EQ(o.mask[i], ref.mask[i]) << "range " << r << " doppler " << d;
                ASSERT_EQ(o.threshold[i], ref.threshold[i]) << r << " " << d;
                kept += o.mask[i];
            }
        EXPECT_GT(kept, 3u) << "targets away from the huge cells";
    }
}

//! make() must throw std::invalid_argument naming the stage and holding `needle`.
void expect_rejected(const cfar_2d_params& p, const std::string& needle)
{
    const auto make = [&] { kernels::cfar_2d::make(backend::cpu, p); };
    expect_invalid(make, "gpuradar::cfar_2d: ");
    expect_invalid(make, needle);
}

TEST(Cfar2dApi, test_007_bad_parameters_name_the_parameter)
{
    cfar_2d_params ok;
    ok.nrange = 13; // the smallest map that holds the default window (2 * 6 + 1)
    ok.ndoppler = 5;
    EXPECT_NO_THROW(cfar_2d::make(backend::cpu, ok)); // the boundary passes

    auto p = ok;
    p.nrange = 12; // boundary + 1 fails
    expect_rejected(p, "2 * (guard_range + train_range) + 1 must be <= nrange = 12");
    p = ok;
    p.ndoppler = 4;
    expect_rejected(p, "2 * (guard_doppler + train_doppler) + 1 must be <= ndoppler = 4");
    p.doppler_edge = cfar_edge::clip;
    expect_rejected(p, "doppler_edge=clip");
    p = ok;
    p.range_edge = cfar_edge::wrap;
    p.nrange = 12;
    expect_rejected(p, "range_edge=wrap");

    p = ok;
    p.guard_range = -1;
    expect_rejected(p, "guard_range must be >= 0 (got -1)");
    p = ok;
    p.train_range = -2;
    expect_rejected(p, "train_range must be >= 0 (got -2)");
    p = ok;
    p.guard_doppler = -1;
    expect_rejected(p, "guard_doppler must be >= 0 (got -1)");
    p = ok;
    p.train_doppler = -3;
    expect_rejected(p, "train_doppler must be >= 0 (got -3)");
    p = ok;
    p.train_range = 0;
    p.train_doppler = 0;
    expect_rejected(p, "train_range + train_doppler must be >= 1");

    for (double pfa : { 0.0, 1.0, -0.5, 2.0, double(NAN) }) {
        p = ok;
        p.pfa = pfa;
        expect_rejected(p, "pfa must be in (0, 1)");
    }
    p = ok;
    p.variant = cfar_variant::os;
    for (int k : { 0, 57, -1 }) {
        p.os_k = k;
        expect_rejected(p, "os_k must be in [1, 56]");
    }
    p.os_k = 56; // boundary passes
    EXPECT_NO_THROW(cfar_2d::make(backend::cpu, p));
    p.os_k = 1;
    EXPECT_NO_THROW(cfar_2d::make(backend::cpu, p));

    p = ok;
    p.nrange = 0;
    expect_rejected(p, "nrange must be in [1, 2^31 - 1] (got 0)");
    p = ok;
    p.ndoppler = 0;
    expect_rejected(p, "ndoppler must be");
    p = ok;
    p.channels = 0;
    expect_rejected(p, "channels must be");
    p = ok;
    p.max_cpi = 0;
    expect_rejected(p, "max_cpi must be");
    p = ok;
    p.max_detections = 0;
    expect_rejected(p, "max_detections must be");
    p = ok;
    p.nrange = 1000;
    p.ndoppler = 1000;
    p.train_range = 100;
    p.train_doppler = 100;
    expect_rejected(p, "at most 16384 cells");
}

TEST(Cfar2dApi, test_008_run_checks_its_arguments)
{
    cfar_2d_params p;
    p.nrange = 20;
    p.ndoppler = 8;
    p.max_cpi = 2;
    auto cfar = cfar_2d::make(backend::cpu, p);
    std::vector<float> power(3 * 20 * 8, 1.f);
    std::vector<std::uint8_t> mask(power.size());
    try {
        cfar->run(power.data(), mask.data(), nullptr, 3);
        FAIL() << "no exception";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("ncpi must be <= max_cpi = 2 (got 3)"),
                  std::string::npos)
            << e.what();
    }
    EXPECT_THROW(cfar->run(power.data(), nullptr, nullptr, 1), std::invalid_argument);
    EXPECT_THROW(cfar->run(nullptr, mask.data(), nullptr, 1), std::invalid_argument);
    // Zero CPIs is a valid, empty run.
    cfar->run(nullptr, nullptr, nullptr, 0);
    EXPECT_TRUE(cfar->collect().detections.empty());
}

TEST(Cfar2dApi, test_009_threshold_output_is_optional)
{
    const auto p =
        small_params({ cfar_variant::go, cfar_edge::clip, cfar_edge::wrap, true });
    const auto power = test_power(p, 2, 99);
    const auto with = run_cpu(p, power, 2);
    auto cfar = cfar_2d::make(backend::cpu, p);
    std::vector<std::uint8_t> mask(power.size(), 0xAB);
    cfar->run(power.data(), mask.data(), nullptr, 2);
    EXPECT_EQ(mask, with.mask);
    EXPECT_EQ(cfar->collect().found, with.report.found);
}

TEST(Cfar2dApi, test_010_parse_names)
{
    EXPECT_EQ(kernels::parse_cfar_variant("so"), cfar_variant::so);
    EXPECT_EQ(kernels::parse_cfar_edge("clip", "range_edge"), cfar_edge::clip);
    EXPECT_EQ(kernels::parse_cfar_estimator("summed_area"), cfar_estimator::summed_area);
    try {
        kernels::parse_cfar_edge("mirror", "doppler_edge");
        FAIL() << "no exception";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("doppler_edge"), std::string::npos);
        EXPECT_NE(std::string(e.what()).find("mirror"), std::string::npos);
    }
    EXPECT_THROW(kernels::parse_cfar_variant("max"), std::invalid_argument);
    EXPECT_THROW(kernels::parse_cfar_estimator("fast"), std::invalid_argument);
}

TEST(Cfar2dApi, test_011_cuda_without_device_is_a_clear_error)
{
    if (kernels::cuda_available())
        GTEST_SKIP() << "a CUDA device is present";
    cfar_2d_params p;
    p.nrange = 20;
    p.ndoppler = 8;
    try {
        cfar_2d::make(backend::cuda, p);
        FAIL() << "no exception";
    } catch (const kernels::cuda_error& e) {
        EXPECT_NE(std::string(e.what()).find("cfar_2d"), std::string::npos);
    }
}

/*!
 * The CPU twin forms a whole row of cells at a time (chunks of 16 Doppler bins in vector
 * lanes, a scalar tail) from a ring of the window's 2 Wr + 1 rows of row sums. Shapes
 * with Doppler extents at, above and between chunk multiples, many more range rows than
 * the ring holds, and windows wider and taller than the PD one; every variant and edge.
 */
TEST(Cfar2dWindows, test_012_rows_spanning_chunks_and_ring_match_reference)
{
    // {guard_range, train_range, guard_doppler, train_doppler}
    const int shapes[][4] = { { 1, 5, 1, 1 }, { 0, 4, 2, 3 }, { 1, 1, 3, 9 } };
    const std::size_t dopplers[] = { 32, 37, 100 }; // 2 chunks; 2 + 5; 6 + 4
    std::uint64_t seed = 12000;
    for (const auto& s : shapes)
        for (const std::size_t nd : dopplers)
            for (auto v : { cfar_variant::ca,
                            cfar_variant::go,
                            cfar_variant::so,
                            cfar_variant::os })
                for (auto re : { cfar_edge::clip, cfar_edge::wrap })
                    for (auto de : { cfar_edge::wrap, cfar_edge::clip }) {
                        cfar_2d_params p;
                        p.nrange = 61;
                        p.ndoppler = nd;
                        p.channels = 2;
                        p.guard_range = s[0];
                        p.train_range = s[1];
                        p.guard_doppler = s[2];
                        p.train_doppler = s[3];
                        p.range_edge = re;
                        p.doppler_edge = de;
                        p.variant = v;
                        const int wr = s[0] + s[1], wd = s[2] + s[3];
                        const int n =
                            (2 * wr + 1) * (2 * wd + 1) - (2 * s[0] + 1) * (2 * s[2] + 1);
                        p.os_k = kernels::cfar_default_os_k(n);
                        p.pfa = 1e-2;
                        p.local_max = nd == 37; // one Doppler extent with the option
                        p.max_cpi = 2;
                        SCOPED_TRACE(std::string(to_string(v)) + " window " +
                                     std::to_string(s[0]) + "," + std::to_string(s[1]) +
                                     "," + std::to_string(s[2]) + "," +
                                     std::to_string(s[3]) + " ndoppler " +
                                     std::to_string(nd) + " range " + to_string(re) +
                                     " doppler " + to_string(de));
                        const auto power = test_power(p, 2, seed++);
                        expect_matches_reference(p, 2, power, run_cpu(p, power, 2));
                    }
}

/*!
 * ca, go, so on the CPU add the same floats in the same order as cfar_math.h's per-cell
 * functions, which the CUDA segmented estimator calls too: the thresholds are equal bit
 * for bit to a per-cell evaluation of those functions on a padded plane (wrapped edges
 * copied round, clipped ones zero, non-finite cells +Inf), whatever the loop order.
 */
TEST(Cfar2dWindows, test_013_thresholds_bitwise_equal_the_shared_per_cell_arithmetic)
{
    namespace d = kernels::detail;
    std::uint64_t seed = 13000;
    for (auto v : { cfar_variant::ca, cfar_variant::go, cfar_variant::so })
        for (auto re : { cfar_edge::clip, cfar_edge::wrap })
            for (auto de : { cfar_edge::wrap, cfar_edge::clip }) {
                cfar_2d_params p;
                p.nrange = 45;
                p.ndoppler = 53;
                p.guard_range = 1;
                p.train_range = 4;
                p.guard_doppler = 2;
                p.train_doppler = 3;
                p.range_edge = re;
                p.doppler_edge = de;
                p.variant = v;
                p.pfa = 1e-3;
                SCOPED_TRACE(std::string(to_string(v)) + " range " + to_string(re) +
                             " doppler " + to_string(de));
                auto power = test_power(p, 1, seed++);
                power[7 * p.ndoppler + 30] = 1e30f; // sums far from the noise's scale
                const auto got = run_cpu(p, power, 1);

                d::cfar_plan_request q;
                q.guard_rows = p.guard_range;
                q.train_rows = p.train_range;
                q.guard_cols = p.guard_doppler;
                q.train_cols = p.train_doppler;
                q.row_edge = re;
                q.col_edge = de;
                q.variant = v;
                q.pfa = p.pfa;
                const d::cfar_plan plan = d::make_cfar_plan(q);
                const int rows = int(p.nrange), cols = int(p.ndoppler);
                const int wr = plan.wr(), wc = plan.wc();
                const int pcols = cols + 2 * wc;
                std::vector<float> padded(std::size_t(rows + 2 * wr) * pcols, 0.f);
                for (int pr = 0; pr < rows + 2 * wr; ++pr)
                    for (int pc = 0; pc < pcols; ++pc) {
                        int r = pr - wr, c = pc - wc;
                        if (re == cfar_edge::wrap)
                            r = (r + rows) % rows;
                        if (de == cfar_edge::wrap)
                            c = (c + cols) % cols;
                        if (r >= 0 && r < rows && c >= 0 && c < cols)
                            padded[std::size_t(pr) * pcols + pc] =
                                d::cfar_sanitize(power[std::size_t(r) * cols + c]);
                    }
                const auto row_sums = [&](int pr, int c) {
                    const float* x = padded.data() + std::size_t(pr) * pcols + c;
                    return d::cfar_row_sums_of(
                        [x](int u) { return x[u]; }, q.guard_cols, q.train_cols);
                };
                std::size_t differ = 0;
                for (int r = 0; r < rows; ++r)
                    for (int c = 0; c < cols; ++c) {
                        const d::cfar_row_sums own = row_sums(r + wr, c);
                        float lead, lag;
                        d::cfar_halves(
                            [&](int dr) { return row_sums(r + wr + dr, c).full; },
                            [&](int dr) { return row_sums(r + wr + dr, c).side; },
                            own.lo,
                            own.hi,
                            q.guard_rows,
                            q.train_rows,
                            lead,
                            lag);
                        const auto& e =
                            plan.entry(d::cfar_clip_class(r, rows, wr, plan.row_wrap()),
                                       d::cfar_clip_class(c, cols, wc, plan.col_wrap()));
                        float want = 0;
                        switch (v) {
                        case cfar_variant::go:
                            want = d::cfar_sum_threshold<cfar_variant::go>(lead, lag, e);
                            break;
                        case cfar_variant::so:
                            want = d::cfar_sum_threshold<cfar_variant::so>(lead, lag, e);
                            break;
                        default:
                            want = d::cfar_sum_threshold<cfar_variant::ca>(lead, lag, e);
                        }
                        const float have = got.threshold[std::size_t(r) * cols + c];
                        differ += std::memcmp(&want, &have, sizeof want) != 0;
                    }
                EXPECT_EQ(differ, 0u) << "thresholds not bit-identical";
            }
}

/*!
 * os on the CPU selects with a comparator network over a vector of cells up to 1024
 * training cells and with nth_element per cell beyond (and at clipped edges and row
 * tails): windows on either side of that bound, every edge mode, against fp64.
 */
TEST(Cfar2dWindows, test_014_os_network_and_per_cell_selection_match_reference)
{
    const int train[] = { 15, 16 }; // N = 31^2 - 1 = 960 (network), 33^2 - 1 = 1088
    std::uint64_t seed = 14000;
    for (const int tr : train)
        for (auto re : { cfar_edge::clip, cfar_edge::wrap })
            for (auto de : { cfar_edge::wrap, cfar_edge::clip }) {
                cfar_2d_params p;
                p.nrange = 40;
                p.ndoppler = 43;
                p.guard_range = 0;
                p.train_range = tr;
                p.guard_doppler = 0;
                p.train_doppler = tr;
                p.range_edge = re;
                p.doppler_edge = de;
                p.variant = cfar_variant::os;
                p.os_k = kernels::cfar_default_os_k((2 * tr + 1) * (2 * tr + 1) - 1);
                p.pfa = 1e-2;
                SCOPED_TRACE("train " + std::to_string(tr) + " range " + to_string(re) +
                             " doppler " + to_string(de));
                const auto power = test_power(p, 1, seed++);
                expect_matches_reference(p, 1, power, run_cpu(p, power, 1));
            }
}

// ---- CUDA against the CPU twin
// ---------------------------------------------------------

run_output run_cuda(const cfar_2d_params& p,
                    const std::vector<float>& power,
                    std::size_t ncpi,
                    bool with_threshold = true)
{
    kernels::cuda_stream stream;
    auto cfar = cfar_2d::make(backend::cuda, p, stream.ref());
    auto d_power = to_device(power, stream);
    kernels::device_memory d_mask(power.size());
    kernels::device_memory d_thr(power.size() * sizeof(float));
    poison(d_mask, stream);
    poison(d_thr, stream);
    cfar->run(d_power.as<float>(),
              d_mask.as<std::uint8_t>(),
              with_threshold ? d_thr.as<float>() : nullptr,
              ncpi);
    run_output o;
    o.report = cfar->collect();
    o.estimator = cfar->estimator();
    o.mask = to_host<std::uint8_t>(d_mask, power.size(), stream);
    o.threshold = to_host<float>(d_thr, power.size(), stream);
    return o;
}

//! Relative threshold tolerance of a CUDA estimator against the CPU twin for windows of
//! n training cells: the segmented estimator adds the CPU's floats in the CPU's order
//! (equal); the summed-area one sums in fp64, while the CPU's float sums carry rounding
//! growing with n (a few ulps per 64 cells); os selects exactly.
double t_tolerance(cfar_estimator e, int n)
{
    return e == cfar_estimator::segmented ? 1e-6 : 2e-5 * std::max(1.0, n / 64.0);
}

/*!
 * CUDA against the CPU twin. Masks agree except where x lies between the two backends'
 * thresholds widened by the 1e-6 band (rounding of the sums may legitimately flip it);
 * the thresholds agree to t_tolerance. Detection lists agree up to the same cells.
 */
void expect_cuda_matches_cpu(const cfar_2d_params& p,
                             std::size_t ncpi,
                             const std::vector<float>& power)
{
    const auto cpu = run_cpu(p, power, ncpi);
    const auto gpu = run_cuda(p, power, ncpi);
    const int n = cfar_2d::make(backend::cpu, p)->training_cells();
    const double t_tol =
        p.variant == cfar_variant::os ? 1e-6 : t_tolerance(gpu.estimator, n);
    if (p.estimator != cfar_estimator::automatic && p.variant != cfar_variant::os)
        EXPECT_EQ(gpu.estimator, p.estimator);
    double worst_t = 0;
    std::size_t soft = 0, detections = 0;
    for (std::size_t i = 0; i < power.size(); ++i) {
        ASSERT_LE(gpu.mask[i], 1) << "unwritten mask cell " << i;
        worst_t =
            std::max(worst_t, threshold_rel_diff(gpu.threshold[i], cpu.threshold[i]));
        detections += gpu.mask[i];
        if (gpu.mask[i] == cpu.mask[i])
            continue;
        ++soft;
        ASSERT_TRUE(may_differ(power[i], cpu.threshold[i], gpu.threshold[i]))
            << "mask differs at " << i << ": x " << power[i] << " T_cpu "
            << cpu.threshold[i] << " T_cuda " << gpu.threshold[i];
    }
    EXPECT_LE(worst_t, t_tol) << "largest relative threshold difference";
    ::testing::Test::RecordProperty("worst_threshold_rel_diff", std::to_string(worst_t));
    EXPECT_LE(soft, 3u);
    EXPECT_GT(detections, 0u);
    EXPECT_EQ(gpu.report.nonfinite, cpu.report.nonfinite);
    EXPECT_LE(std::max(gpu.report.found, cpu.report.found) -
                  std::min(gpu.report.found, cpu.report.found),
              soft);
    if (soft == 0 && !cpu.report.overflow()) {
        ASSERT_EQ(gpu.report.detections.size(), cpu.report.detections.size());
        for (std::size_t i = 0; i < cpu.report.detections.size(); ++i) {
            const auto& g = gpu.report.detections[i];
            const auto& c = cpu.report.detections[i];
            EXPECT_EQ(std::tie(g.map, g.range_bin, g.doppler_bin),
                      std::tie(c.map, c.range_bin, c.doppler_bin));
            EXPECT_EQ(g.power, c.power);
            EXPECT_LE(threshold_rel_diff(g.threshold, c.threshold), t_tol);
            EXPECT_LE(threshold_rel_diff(g.noise, c.noise), t_tol + 1e-6);
            EXPECT_TRUE(same_value(g.range_prev, c.range_prev) &&
                        same_value(g.range_next, c.range_next) &&
                        same_value(g.doppler_prev, c.doppler_prev) &&
                        same_value(g.doppler_next, c.doppler_next))
                << "neighbours of detection " << i;
        }
    }
}

struct cuda_case {
    case_2d c;
    cfar_estimator estimator;
};

std::string cuda_case_name(const ::testing::TestParamInfo<cuda_case>& info)
{
    return case_name({ info.param.c, info.index }) + "_" +
           to_string(info.param.estimator);
}

std::vector<cuda_case> all_cuda_cases()
{
    std::vector<cuda_case> out;
    for (const auto& c : all_cases()) {
        out.push_back({ c, cfar_estimator::segmented });
        if (c.variant != cfar_variant::os)
            out.push_back({ c, cfar_estimator::summed_area });
    }
    return out;
}

class Cfar2dCuda : public ::testing::TestWithParam<cuda_case>
{
};

TEST_P(Cfar2dCuda, test_020_matches_cpu_twin)
{
    GPURADAR_REQUIRE_CUDA();
    // 301 x 130: neither a multiple of the 32 x 32 tile; 2 channels, 2 CPIs.
    auto p = small_params(GetParam().c);
    p.nrange = 301;
    p.ndoppler = 130;
    p.estimator = GetParam().estimator;
    const auto power = test_power(p, 2, 3001);
    expect_cuda_matches_cpu(p, 2, power);
}

INSTANTIATE_TEST_SUITE_P(AllVariantsEdgesEstimators,
                         Cfar2dCuda,
                         ::testing::ValuesIn(all_cuda_cases()),
                         cuda_case_name);

TEST(Cfar2dCudaShapes, test_021_windows_and_map_shapes)
{
    GPURADAR_REQUIRE_CUDA();
    struct shape {
        std::size_t nrange, ndoppler, channels;
        int gr, tr, gd, td;
    };
    // The PD window on a PD-like shape; range-only and Doppler-only windows; an os
    // window of N = 90 (radix select) and N = 24 (32-register sort); a 33 x 33 window
    // (N = 1080, the summed-area side of the automatic choice); maps narrower than a
    // tile.
    const shape shapes[] = { { 1000, 128, 2, 1, 5, 1, 1 }, { 257, 33, 1, 2, 6, 0, 0 },
                             { 97, 250, 3, 0, 0, 2, 9 },   { 150, 70, 1, 1, 4, 1, 3 },
                             { 60, 40, 1, 1, 1, 1, 2 },    { 200, 100, 1, 2, 16, 2, 16 },
                             { 40, 7, 2, 1, 3, 1, 2 } };
    std::uint64_t seed = 5000;
    for (const auto& s : shapes) {
        for (auto v :
             { cfar_variant::ca, cfar_variant::go, cfar_variant::so, cfar_variant::os }) {
            for (auto est : { cfar_estimator::automatic,
                              cfar_estimator::segmented,
                              cfar_estimator::summed_area }) {
                if (v == cfar_variant::os && est != cfar_estimator::automatic)
                    continue;
                cfar_2d_params p;
                p.nrange = s.nrange;
                p.ndoppler = s.ndoppler;
                p.channels = s.channels;
                p.guard_range = s.gr;
                p.train_range = s.tr;
                p.guard_doppler = s.gd;
                p.train_doppler = s.td;
                p.variant = v;
                p.estimator = est;
                p.max_cpi = 2;
                p.pfa = 1e-2;
                p.local_max = seed % 2 == 0;
                const int n = (2 * (s.gr + s.tr) + 1) * (2 * (s.gd + s.td) + 1) -
                              (2 * s.gr + 1) * (2 * s.gd + 1);
                p.os_k = kernels::cfar_default_os_k(n);
                SCOPED_TRACE(std::string(to_string(v)) + " " + to_string(est) + " N " +
                             std::to_string(n) + " map " + std::to_string(s.nrange) +
                             "x" + std::to_string(s.ndoppler));
                const auto power = test_power(p, 2, seed++);
                expect_cuda_matches_cpu(p, 2, power);
            }
        }
    }
}

/*!
 * CONVENTIONS.md's window (range 1/5, Doppler 1/1) on maps whose Doppler rows are whole
 * float4s: the CUDA backend's row-vector kernel (128 columns per warp, 32 rows per
 * block). Doppler extents below, at and between multiples of 128 (the last column tile
 * part-full: its halo wraps or clips inside the tile), range extents not multiples of 32,
 * 1-3 channels, every sum variant and edge, local maxima on half the cases; thresholds
 * bitwise equal to the CPU twin's (same floats, same order). Then the same map from an
 * input pointer one float off 16-byte alignment (the generic kernel) gives the same
 * thresholds, and no threshold output leaves the mask unchanged.
 */
//! The same mask, counts and bit-identical thresholds (the row-vector kernel adds the
//! CPU twin's floats in the CPU twin's order).
void expect_bitwise_equal(const run_output& gpu, const run_output& cpu)
{
    ASSERT_EQ(gpu.mask, cpu.mask);
    EXPECT_EQ(gpu.report.found, cpu.report.found);
    EXPECT_EQ(gpu.report.nonfinite, cpu.report.nonfinite);
    ASSERT_EQ(gpu.report.detections.size(), cpu.report.detections.size());
    for (std::size_t i = 0; i < cpu.report.detections.size(); ++i) {
        const auto& g = gpu.report.detections[i];
        const auto& c = cpu.report.detections[i];
        EXPECT_TRUE(same_value(g.range_prev, c.range_prev) &&
                    same_value(g.range_next, c.range_next) &&
                    same_value(g.doppler_prev, c.doppler_prev) &&
                    same_value(g.doppler_next, c.doppler_next))
            << "neighbours of detection " << i;
    }
    ASSERT_EQ(gpu.threshold.size(), cpu.threshold.size());
    for (std::size_t i = 0; i < cpu.threshold.size(); ++i)
        ASSERT_EQ(std::memcmp(&gpu.threshold[i], &cpu.threshold[i], 4), 0)
            << "threshold " << i << ": CPU " << cpu.threshold[i] << " CUDA "
            << gpu.threshold[i];
}

TEST(Cfar2dCudaShapes, test_028_huge_finite_cells_like_the_cpu_twin)
{
    // test_016's map on the GPU: the segmented estimators (the automatic choice here)
    // equal the CPU twin bit for bit; the summed-area one counts the capped cells as
    // non-finite (T = +Inf where one is a training cell) and equals the twin's decisions
    // everywhere else, its thresholds within its fp64 tolerance.
    GPURADAR_REQUIRE_CUDA();
    cfar_2d_params p = huge_map_params();
    const auto m = make_huge_map(p, 32);
    for (auto v : { cfar_variant::ca, cfar_variant::go, cfar_variant::os }) {
        SCOPED_TRACE(to_string(v));
        p.variant = v;
        p.os_k = 60;
        p.estimator = cfar_estimator::automatic;
        const auto cpu = run_cpu(p, m.huge, 1);
        const auto gpu = run_cuda(p, m.huge, 1);
        EXPECT_TRUE(gpu.mask == cpu.mask);
        EXPECT_EQ(std::memcmp(gpu.threshold.data(),
                              cpu.threshold.data(),
                              cpu.threshold.size() * sizeof(float)),
                  0);
        if (v == cfar_variant::os)
            continue;
        p.estimator = cfar_estimator::summed_area;
        const auto sat = run_cuda(p, m.huge, 1);
        for (std::size_t r = 0; r < p.nrange; ++r)
            for (std::size_t d = 0; d < p.ndoppler; ++d) {
                const std::size_t i = index_of(p, 0, r, 0, d);
                // A huge cell in the guard box or under test is in no training sum.
                if (window_holds(p, m, r, d, true)) {
                    EXPECT_TRUE(std::isinf(sat.threshold[i])) << r << " " << d;
                    continue;
                }
                EXPECT_EQ(sat.mask[i], cpu.mask[i]) << r << " " << d;
                EXPECT_NEAR(sat.threshold[i], cpu.threshold[i], 2e-5 * cpu.threshold[i]);
            }
    }
}

TEST(Cfar2dCudaShapes, test_023_row_vector_kernel_matches_cpu_bitwise)
{
    GPURADAR_REQUIRE_CUDA();
    struct shape {
        std::size_t nrange, ndoppler, channels;
    };
    const shape shapes[] = {
        { 301, 132, 2 }, { 77, 68, 1 }, { 45, 260, 3 }, { 13, 8, 1 }
    };
    std::uint64_t seed = 7000;
    for (const auto& s : shapes)
        for (auto v : { cfar_variant::ca, cfar_variant::go, cfar_variant::so })
            for (auto re : { cfar_edge::clip, cfar_edge::wrap })
                for (auto de : { cfar_edge::wrap, cfar_edge::clip }) {
                    cfar_2d_params p; // CONVENTIONS.md's window is the default
                    p.nrange = s.nrange;
                    p.ndoppler = s.ndoppler;
                    p.channels = s.channels;
                    p.variant = v;
                    p.range_edge = re;
                    p.doppler_edge = de;
                    p.max_cpi = 2;
                    p.pfa = 1e-2;
                    p.local_max = seed % 2 == 0;
                    SCOPED_TRACE(std::string(to_string(v)) + " range " + to_string(re) +
                                 " doppler " + to_string(de) + " map " +
                                 std::to_string(s.nrange) + "x" +
                                 std::to_string(s.ndoppler) + "x" +
                                 std::to_string(s.channels));
                    const auto power = test_power(p, 2, seed++);
                    // The 13 x 8 map may hold no detection at all (go, both edges
                    // wrapped); the exact checks below still cover it.
                    if (s.nrange * s.ndoppler >= 1000)
                        expect_cuda_matches_cpu(p, 2, power);
                    const auto cpu = run_cpu(p, power, 2);
                    expect_bitwise_equal(run_cuda(p, power, 2), cpu);
                    EXPECT_EQ(run_cuda(p, power, 2, false).mask, cpu.mask);
                }

    // One float off alignment: the generic kernel, the same thresholds.
    cfar_2d_params p;
    p.nrange = 301;
    p.ndoppler = 132;
    p.channels = 2;
    p.pfa = 1e-2;
    p.local_max = true;
    p.max_cpi = 2;
    const auto power = test_power(p, 2, 7777);
    const auto cpu = run_cpu(p, power, 2);
    kernels::cuda_stream stream;
    auto cfar = cfar_2d::make(backend::cuda, p, stream.ref());
    std::vector<float> shifted(power.size() + 1, 1.f);
    std::copy(power.begin(), power.end(), shifted.begin() + 1);
    auto d_power = to_device(shifted, stream);
    kernels::device_memory d_mask(power.size());
    kernels::device_memory d_thr(power.size() * sizeof(float));
    poison(d_mask, stream);
    poison(d_thr, stream);
    cfar->run(d_power.as<float>() + 1, d_mask.as<std::uint8_t>(), d_thr.as<float>(), 2);
    const auto r = cfar->collect();
    EXPECT_EQ(r.found, cpu.report.found);
    EXPECT_EQ(r.nonfinite, cpu.report.nonfinite);
    EXPECT_EQ(to_host<std::uint8_t>(d_mask, power.size(), stream), cpu.mask);
    const auto thr = to_host<float>(d_thr, power.size(), stream);
    for (std::size_t i = 0; i < power.size(); ++i)
        ASSERT_EQ(std::memcmp(&thr[i], &cpu.threshold[i], 4), 0) << "threshold " << i;
}

/*!
 * The row-vector kernel's two load forms: runs whose maps fit in the L2 cache read them
 * with evict-first loads (test_023's maps), larger runs with plain loads (fits_in_l2).
 * A map of 1.25 x the device's L2: the same mask and bit-identical thresholds as the CPU.
 */
TEST(Cfar2dCudaShapes, test_025_row_vector_kernel_on_a_map_larger_than_l2)
{
    GPURADAR_REQUIRE_CUDA();
    const std::size_t l2 = kernels::current_device_properties().l2_bytes;
    cfar_2d_params p; // CONVENTIONS.md's window is the default
    p.ndoppler = 1024;
    p.nrange = (l2 + l2 / 4) / (p.ndoppler * sizeof(float)) + 1;
    p.max_cpi = 1;
    p.pfa = 1e-4;
    const auto power = test_power(p, 1, 9100);
    ASSERT_GT(power.size() * sizeof(float), l2);
    expect_bitwise_equal(run_cuda(p, power, 1), run_cpu(p, power, 1));
}

TEST(Cfar2dCudaShapes, test_022_overflow_threshold_null_and_reuse)
{
    GPURADAR_REQUIRE_CUDA();
    auto p = small_params({ cfar_variant::ca, cfar_edge::clip, cfar_edge::wrap, false });
    p.nrange = 300;
    p.ndoppler = 64;
    p.max_detections = 7;
    const auto power = test_power(p, 2, 6001);
    auto full = p;
    full.max_detections = 1 << 20;
    const auto cpu = run_cpu(full, power, 2);
    ASSERT_GT(cpu.report.found, 7u);

    kernels::cuda_stream stream;
    auto cfar = cfar_2d::make(backend::cuda, p, stream.ref());
    auto d_power = to_device(power, stream);
    kernels::device_memory d_mask(power.size());
    for (int rep = 0; rep < 2; ++rep) { // a second run resets the counters
        poison(d_mask, stream);
        cfar->run(d_power.as<float>(), d_mask.as<std::uint8_t>(), nullptr, 2);
        const auto r = cfar->collect();
        EXPECT_EQ(r.found, cpu.report.found);
        EXPECT_TRUE(r.overflow());
        ASSERT_EQ(r.detections.size(), 7u);
        std::set<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>> all;
        for (const auto& d : cpu.report.detections)
            all.insert({ d.map, d.range_bin, d.doppler_bin });
        for (const auto& d : r.detections) // an arbitrary subset of the true detections
            EXPECT_TRUE(all.count({ d.map, d.range_bin, d.doppler_bin }));
        EXPECT_EQ(to_host<std::uint8_t>(d_mask, power.size(), stream), cpu.mask);
    }
    // One CPI of two: only the first CPI's maps are touched and reported.
    cfar->run(d_power.as<float>(), d_mask.as<std::uint8_t>(), nullptr, 1);
    EXPECT_EQ(cfar->collect().nonfinite.size(), p.channels);
}

/*!
 * os without a threshold map: the rank test decides, and only detections select their
 * order statistic. Windows of N = 24, 54 and 90 training cells, every edge, local maxima
 * on and off, pfa 1e-2 (detections on noise too): the mask, the counts and every
 * detection's power, threshold and noise are bitwise the CPU twin's; the same run with a
 * threshold map gives the same mask and list.
 */
TEST(Cfar2dCudaShapes, test_026_os_without_threshold_map_is_the_cpu_twin_bitwise)
{
    GPURADAR_REQUIRE_CUDA();
    struct window {
        int gr, tr, gd, td;
    };
    std::uint64_t seed = 7100;
    for (const window w :
         { window{ 1, 2, 1, 1 }, window{ 1, 3, 1, 2 }, window{ 2, 4, 1, 3 } })
        for (const auto& c : all_cases()) {
            if (c.variant != cfar_variant::os)
                continue;
            auto p = small_params(c);
            p.nrange = 301;
            p.ndoppler = 130;
            p.guard_range = w.gr;
            p.train_range = w.tr;
            p.guard_doppler = w.gd;
            p.train_doppler = w.td;
            const int n = (2 * (w.gr + w.tr) + 1) * (2 * (w.gd + w.td) + 1) -
                          (2 * w.gr + 1) * (2 * w.gd + 1);
            p.os_k = kernels::cfar_default_os_k(n);
            SCOPED_TRACE("N " + std::to_string(n) + " " + case_name({ c, 0 }));
            const auto power = test_power(p, 2, seed++);
            const auto cpu = run_cpu(p, power, 2);
            const auto rank = run_cuda(p, power, 2, false);
            const auto full = run_cuda(p, power, 2, true);
            ASSERT_GT(cpu.report.found, 0u);
            ASSERT_FALSE(cpu.report.overflow());
            EXPECT_EQ(rank.mask, cpu.mask);
            EXPECT_EQ(full.mask, cpu.mask);
            EXPECT_EQ(rank.report.found, cpu.report.found);
            EXPECT_EQ(rank.report.nonfinite, cpu.report.nonfinite);
            ASSERT_EQ(rank.report.detections.size(), cpu.report.detections.size());
            for (std::size_t i = 0; i < cpu.report.detections.size(); ++i) {
                const auto& g = rank.report.detections[i];
                const auto& e = cpu.report.detections[i];
                EXPECT_EQ(std::tie(g.map, g.range_bin, g.doppler_bin),
                          std::tie(e.map, e.range_bin, e.doppler_bin));
                EXPECT_EQ(std::memcmp(&g.power, &e.power, 4), 0);
                EXPECT_EQ(std::memcmp(&g.threshold, &e.threshold, 4), 0) << i;
                EXPECT_EQ(std::memcmp(&g.noise, &e.noise, 4), 0) << i;
            }
        }
}

/*!
 * Every run starts from zeroed counters and reports only its own detections: one object
 * runs several times, with different CPI counts, twice without a collect in between,
 * with lists longer than the head copied back with the counters (the rest is a second
 * copy in collect), on the row-vector kernel (CONVENTIONS.md's window, ndoppler % 4 == 0)
 * and on the generic one. Lists, counts, masks and thresholds equal the CPU twin's.
 */
TEST(Cfar2dCudaShapes, test_024_repeated_runs_report_their_own_detections)
{
    GPURADAR_REQUIRE_CUDA();
    for (bool vec : { true, false }) {
        SCOPED_TRACE(vec ? "row-vector kernel" : "generic kernel");
        cfar_2d_params p; // CONVENTIONS.md's window
        p.nrange = 515;
        p.ndoppler = vec ? 132 : 131;
        p.channels = 2;
        p.max_cpi = 2;
        p.pfa = 1e-2; // ~2700 detections per run of 2 CPIs: past the 1024-entry head
        const auto power_a = test_power(p, 2, 9101);
        const auto power_b = test_power(p, 2, 9102);
        kernels::cuda_stream stream;
        auto cfar = cfar_2d::make(backend::cuda, p, stream.ref());
        auto d_a = to_device(power_a, stream);
        auto d_b = to_device(power_b, stream);
        kernels::device_memory d_mask(power_a.size());
        std::uint64_t found = 0;
        const auto check = [&](const std::vector<float>& power, std::size_t ncpi) {
            const auto cpu = run_cpu(p, power, ncpi);
            found = cpu.report.found;
            const auto r = cfar->collect();
            EXPECT_EQ(r.found, cpu.report.found);
            EXPECT_EQ(r.nonfinite, cpu.report.nonfinite);
            ASSERT_EQ(r.detections.size(), cpu.report.detections.size());
            for (std::size_t i = 0; i < r.detections.size(); ++i) {
                const auto& g = r.detections[i];
                const auto& c = cpu.report.detections[i];
                ASSERT_EQ(std::tie(g.map, g.range_bin, g.doppler_bin, g.power),
                          std::tie(c.map, c.range_bin, c.doppler_bin, c.power))
                    << "detection " << i;
                EXPECT_EQ(g.threshold, c.threshold);
                EXPECT_TRUE(same_value(g.range_prev, c.range_prev) &&
                            same_value(g.range_next, c.range_next) &&
                            same_value(g.doppler_prev, c.doppler_prev) &&
                            same_value(g.doppler_next, c.doppler_next))
                    << "neighbours of detection " << i;
            }
            const std::size_t cells = total_cells(p, ncpi);
            auto mask = to_host<std::uint8_t>(d_mask, power.size(), stream);
            mask.resize(cells);
            EXPECT_EQ(
                mask,
                std::vector<std::uint8_t>(cpu.mask.begin(), cpu.mask.begin() + cells));
        };
        const auto run = [&](kernels::device_memory& d, std::size_t ncpi) {
            poison(d_mask, stream);
            cfar->run(d.as<float>(), d_mask.as<std::uint8_t>(), nullptr, ncpi);
        };
        run(d_a, 2);
        check(power_a, 2);
        EXPECT_GT(found, 1024u);
        run(d_b, 1);
        check(power_b, 1);
        run(d_a, 2); // not collected: the next run starts from zero all the same
        run(d_b, 2);
        check(power_b, 2);
        EXPECT_GT(found, 1024u);
        run(d_a, 2);
        check(power_a, 2);
    }
}

/*!
 * channel_powers: for every detection of a two-CPI, three-channel run, the value of each
 * channel at the detection's cell, read from the map by its layout (cfar_2d.h).
 */
TEST(Cfar2dApi, test_015_channel_powers_are_the_cell_in_every_channel)
{
    auto p = small_params({ cfar_variant::ca, cfar_edge::clip, cfar_edge::wrap, false });
    p.channels = 3;
    p.pfa = 1e-2; // detections on noise too, in every map
    const auto power = test_power(p, 2, 7001);
    auto cfar = cfar_2d::make(backend::cpu, p);
    std::vector<std::uint8_t> mask(power.size());
    cfar->run(power.data(), mask.data(), nullptr, 2);
    const auto r = cfar->collect();
    ASSERT_GT(r.detections.size(), 10u);
    const auto got = cfar->channel_powers(power.data(), r.detections);
    ASSERT_EQ(got.size(), r.detections.size() * p.channels);
    for (std::size_t i = 0; i < r.detections.size(); ++i) {
        const auto& d = r.detections[i];
        for (std::size_t c = 0; c < p.channels; ++c)
            EXPECT_EQ(
                got[i * p.channels + c],
                power[index_of(p, d.map / p.channels, d.range_bin, c, d.doppler_bin)]);
        EXPECT_EQ(got[i * p.channels + d.map % p.channels], d.power);
    }
    EXPECT_TRUE(cfar->channel_powers(power.data(), {}).empty());
}

//! The CUDA gather of channel_powers from device memory equals the CPU twin's.
TEST(Cfar2dCudaShapes, test_027_channel_powers_match_cpu_twin)
{
    GPURADAR_REQUIRE_CUDA();
    auto p = small_params({ cfar_variant::ca, cfar_edge::clip, cfar_edge::wrap, false });
    p.channels = 3;
    p.pfa = 1e-2;
    const auto power = test_power(p, 2, 7002);
    const auto cpu = run_cpu(p, power, 2);
    auto cpu_cfar = cfar_2d::make(backend::cpu, p);
    kernels::cuda_stream stream;
    auto cfar = cfar_2d::make(backend::cuda, p, stream.ref());
    auto d_power = to_device(power, stream);
    kernels::device_memory d_mask(power.size());
    poison(d_mask, stream);
    cfar->run(d_power.as<float>(), d_mask.as<std::uint8_t>(), nullptr, 2);
    const auto r = cfar->collect();
    ASSERT_GT(r.detections.size(), 10u);
    EXPECT_EQ(cfar->channel_powers(d_power.as<float>(), r.detections),
              cpu_cfar->channel_powers(power.data(), r.detections));
}

} // namespace
} // namespace gpuradar::test
