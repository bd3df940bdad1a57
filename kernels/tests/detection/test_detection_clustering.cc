/*
 * detection_clustering: the Gaussian peak interpolation against analytic lobes, the
 * merging rules (8-connectivity, wrapped edges, maps kept apart), bad parameters, and the
 * whole chain radar_scene -> pulse_doppler_processor -> cfar_2d -> clustering: one
 * detection per target, sub-bin position within 0.1 bin at 20 dB SNR.
 */
#include "invalid_argument_check.h"
#include "test_support.h"
#include <gpuradar/kernels/common/constants.h>
#include <gpuradar/kernels/common/window.h>
#include <gpuradar/kernels/detection/cfar_2d.h>
#include <gpuradar/kernels/detection/detection_clustering.h>
#include <gpuradar/kernels/pulse_doppler/pulse_compression.h>
#include <gpuradar/kernels/pulse_doppler/pulse_doppler_processor.h>
#include <gpuradar/kernels/scene/radar_scene.h>
#include <algorithm>
#include <cmath>
#include <random>

namespace gpuradar::test {
namespace {

using kernels::cfar_detection;
using kernels::clustered_detection;
using kernels::detection_clustering;
using kernels::gaussian_peak_offset;

constexpr double two_pi = 6.283185307179586;

//! A detection at (map, r, d) of power p with the given neighbours.
cfar_detection det(std::uint32_t map, std::uint32_t r, std::uint32_t d, float p)
{
    cfar_detection x;
    x.map = map;
    x.range_bin = r;
    x.doppler_bin = d;
    x.power = p;
    x.threshold = 1.f;
    x.noise = 0.1f;
    return x;
}

TEST(DetectionClustering, test_001_gaussian_lobe_is_recovered_exactly)
{
    const double sigma = 0.8;
    for (double x0 : { -0.49, -0.3, -0.1, 0.0, 0.05, 0.27, 0.45 }) {
        const auto lobe = [&](double x) {
            return float(7.0 * std::exp(-(x - x0) * (x - x0) / (2 * sigma * sigma)));
        };
        EXPECT_NEAR(gaussian_peak_offset(lobe(-1), lobe(0), lobe(1)), x0, 2e-6)
            << "x0 " << x0;
    }
}

//! Power of the DFT bin k (of n) of a windowed tone at `freq_bins`, no noise.
double windowed_tone_power(const std::vector<double>& w, double freq_bins, int k)
{
    const std::size_t n = w.size();
    std::complex<double> s = 0;
    for (std::size_t i = 0; i < n; ++i)
        s += w[i] * std::polar(1.0, two_pi * (freq_bins - k) * double(i) / double(n));
    return std::norm(s);
}

TEST(DetectionClustering, test_002_hann_windowed_tone_within_a_few_hundredths)
{
    const auto w = kernels::window_coefficients(kernels::window_spec::make("hann"), 64);
    double worst = 0;
    for (double f = -0.5; f <= 0.5; f += 0.05) {
        const double freq = 20 + f;
        const float p0 = float(windowed_tone_power(w, freq, 20));
        const float pm = float(windowed_tone_power(w, freq, 19));
        const float pp = float(windowed_tone_power(w, freq, 21));
        const int peak = pm > p0 ? 19 : (pp > p0 ? 21 : 20);
        const double est =
            peak + gaussian_peak_offset(float(windowed_tone_power(w, freq, peak - 1)),
                                        float(windowed_tone_power(w, freq, peak)),
                                        float(windowed_tone_power(w, freq, peak + 1)));
        worst = std::max(worst, std::abs(est - freq));
    }
    // The Hann main lobe is not exactly Gaussian: a small bias, largest between bins.
    EXPECT_LT(worst, 0.05);
    ::testing::Test::RecordProperty("hann_worst_bias_bins", std::to_string(worst));
}

TEST(DetectionClustering, test_003_missing_or_flat_neighbours_give_the_bin)
{
    EXPECT_EQ(gaussian_peak_offset(NAN, 4.f, 2.f), 0.0);
    EXPECT_EQ(gaussian_peak_offset(1.f, 4.f, NAN), 0.0);
    EXPECT_EQ(gaussian_peak_offset(0.f, 4.f, 2.f), 0.0);
    EXPECT_EQ(gaussian_peak_offset(4.f, 4.f, 4.f), 0.0);   // flat
    EXPECT_EQ(gaussian_peak_offset(5.f, 1.f, 5.f), 0.0);   // a valley
    EXPECT_GT(gaussian_peak_offset(1.f, 4.f, 3.f), 0.0);   // leans to the next bin
    EXPECT_LT(gaussian_peak_offset(3.f, 4.f, 1.f), 0.0);   // to the previous one
    EXPECT_EQ(gaussian_peak_offset(1e-6f, 1.f, 1.f), 0.5); // clamped
}

TEST(DetectionClustering, test_004_touching_cells_merge_others_do_not)
{
    detection_clustering c({ 100, 32, false, true });
    std::vector<cfar_detection> d = {
        // One target: an L of cells, diagonal contact included; peak (10, 5).
        det(0, 10, 5, 50.f),
        det(0, 10, 6, 20.f),
        det(0, 11, 7, 10.f),
        det(0, 9, 4, 12.f),
        // Two bins away: another target.
        det(0, 13, 5, 30.f),
        // Across the Doppler wrap: bins 31 and 0 touch; peak (40, 0).
        det(0, 40, 31, 8.f),
        det(0, 40, 0, 9.f),
        // Range does not wrap: bins 0 and 99 stay apart.
        det(0, 0, 3, 5.f),
        det(0, 99, 3, 6.f),
        // Another map at the first target's cells: its own cluster.
        det(1, 10, 5, 40.f),
    };
    std::reverse(d.begin(), d.end()); // any input order
    const auto out = c.cluster(d);
    ASSERT_EQ(out.size(), 6u);
    const auto find = [&](std::uint32_t map, std::uint32_t r, std::uint32_t dop) {
        for (const auto& x : out)
            if (x.peak.map == map && x.peak.range_bin == r && x.peak.doppler_bin == dop)
                return x.cells;
        return 0u;
    };
    EXPECT_EQ(find(0, 10, 5), 4u);
    EXPECT_EQ(find(0, 13, 5), 1u);
    EXPECT_EQ(find(0, 40, 0), 2u);
    EXPECT_EQ(find(0, 0, 3), 1u);
    EXPECT_EQ(find(0, 99, 3), 1u);
    EXPECT_EQ(find(1, 10, 5), 1u);
    // Sorted by (map, range, Doppler).
    for (std::size_t i = 1; i < out.size(); ++i)
        EXPECT_TRUE(std::tie(out[i - 1].peak.map, out[i - 1].peak.range_bin) <=
                    std::tie(out[i].peak.map, out[i].peak.range_bin));

    detection_clustering wrapped({ 100, 32, true, false });
    const auto out2 = wrapped.cluster(d);
    EXPECT_EQ(out2.size(), 6u); // range 0 / 99 now merge, Doppler 31 / 0 split
}

TEST(DetectionClustering, test_005_interpolated_position_wraps_in_doppler)
{
    detection_clustering c({ 50, 16, false, true });
    auto d = det(0, 7, 0, 10.f);
    d.range_prev = 1.f;
    d.range_next = 1.f;
    d.doppler_prev = 8.f; // bin 15: the peak leans below bin 0
    d.doppler_next = 1.f;
    const auto out = c.cluster({ d });
    ASSERT_EQ(out.size(), 1u);
    EXPECT_DOUBLE_EQ(out[0].range_bin, 7.0);
    EXPECT_GT(out[0].doppler_bin, 15.5);
    EXPECT_LT(out[0].doppler_bin, 16.0);
}

TEST(DetectionClustering, test_006_bad_parameters_name_the_parameter)
{
    expect_invalid(
        [] {
            detection_clustering({ 0, 4, false, true });
        },
        "nrange",
        "gpuradar::detection_clustering");
    expect_invalid(
        [] {
            detection_clustering({ 4, 0, false, true });
        },
        "ndoppler",
        "gpuradar::detection_clustering");
    detection_clustering ok({ 4, 4, false, true });
    EXPECT_TRUE(ok.cluster({}).empty());
}

//! Bins a and b of an axis of n bins touch (differ by at most one, across the edge when
//! it wraps and n >= 3, as detection_clustering's rule).
bool bins_touch(long a, long b, long n, bool wrap)
{
    long d = std::labs(a - b);
    if (wrap && n >= 3)
        d = std::min(d, n - d);
    return d <= 1;
}

//! The clusters by their definition: connected components of touching detections
//! (breadth first over every pair), each its strongest cell (ties: the smallest cell)
//! and its size, sorted by cell.
std::vector<std::pair<cfar_detection, std::uint32_t>>
clusters_reference(const std::vector<cfar_detection>& dets,
                   const kernels::detection_clustering_params& p)
{
    const auto key = [](const cfar_detection& d) {
        return std::make_tuple(d.map, d.range_bin, d.doppler_bin);
    };
    std::vector<int> component(dets.size(), -1);
    std::vector<std::pair<cfar_detection, std::uint32_t>> out;
    for (std::size_t s = 0; s < dets.size(); ++s) {
        if (component[s] >= 0)
            continue;
        std::vector<std::size_t> todo{ s };
        component[s] = int(out.size());
        cfar_detection best = dets[s];
        std::uint32_t cells = 0;
        while (!todo.empty()) {
            const cfar_detection d = dets[todo.back()];
            todo.pop_back();
            ++cells;
            if (d.power > best.power || (d.power == best.power && key(d) < key(best)))
                best = d;
            for (std::size_t j = 0; j < dets.size(); ++j)
                if (component[j] < 0 && dets[j].map == d.map &&
                    bins_touch(
                        dets[j].range_bin, d.range_bin, long(p.nrange), p.range_wrap) &&
                    bins_touch(dets[j].doppler_bin,
                               d.doppler_bin,
                               long(p.ndoppler),
                               p.doppler_wrap)) {
                    component[j] = component[s];
                    todo.push_back(j);
                }
        }
        out.push_back({ best, cells });
    }
    std::sort(out.begin(), out.end(), [&](const auto& a, const auto& b) {
        return key(a.first) < key(b.first);
    });
    return out;
}

/*
 * cluster() against the definition on random sets of cells: dense enough that clusters
 * of many shapes form, on small maps so that both edges are often touched, with each
 * edge wrapping or not, several maps, powers with ties, and the list given sorted (as
 * the CFAR gives it) or shuffled.
 */
TEST(DetectionClustering, test_008_random_sets_match_the_definition)
{
    const std::uint32_t seed = std::random_device{}();
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    for (int trial = 0; trial < 400; ++trial) {
        kernels::detection_clustering_params p;
        p.nrange = 1 + rng() % 12;
        p.ndoppler = 1 + rng() % 12;
        p.range_wrap = rng() % 2;
        p.doppler_wrap = rng() % 2;
        const std::uint32_t maps = 1 + rng() % 3;
        std::vector<cfar_detection> dets;
        for (std::uint32_t m = 0; m < maps; ++m)
            for (std::uint32_t r = 0; r < p.nrange; ++r)
                for (std::uint32_t c = 0; c < p.ndoppler; ++c)
                    if (rng() % 100 < 35)
                        dets.push_back(det(m, r, c, float(1 + rng() % 8)));
        if (trial % 2)
            std::shuffle(dets.begin(), dets.end(), rng);
        const auto got = detection_clustering(p).cluster(dets);
        const auto want = clusters_reference(dets, p);
        ASSERT_EQ(got.size(), want.size()) << "trial " << trial;
        for (std::size_t i = 0; i < got.size(); ++i) {
            EXPECT_EQ(got[i].peak.map, want[i].first.map);
            EXPECT_EQ(got[i].peak.range_bin, want[i].first.range_bin);
            EXPECT_EQ(got[i].peak.doppler_bin, want[i].first.doppler_bin);
            EXPECT_EQ(got[i].cells, want[i].second);
        }
    }
}

//! strongest_across_beams by its definition, pair by pair.
std::vector<std::size_t> strongest_reference(const std::vector<cfar_detection>& dets,
                                             std::uint32_t beams,
                                             long ndoppler)
{
    std::vector<std::size_t> kept;
    for (std::size_t i = 0; i < dets.size(); ++i) {
        const auto& d = dets[i];
        bool outshone = false;
        for (const auto& o : dets) {
            const long dr = std::labs(long(o.range_bin) - long(d.range_bin));
            long dd = std::labs(long(o.doppler_bin) - long(d.doppler_bin));
            dd = std::min(dd, ndoppler - dd); // the Doppler edge wraps
            outshone |= o.map / beams == d.map / beams && o.map != d.map && dr <= 1 &&
                        dd <= 1 &&
                        (o.power > d.power || (o.power == d.power && o.map < d.map));
        }
        if (!outshone)
            kept.push_back(i);
    }
    return kept;
}

TEST(DetectionClustering, test_007_strongest_across_beams_matches_its_definition)
{
    constexpr std::uint32_t beams = 5, ndoppler = 8;
    const std::uint32_t seed = std::random_device{}();
    std::mt19937 rng(seed);
    std::uniform_int_distribution<std::uint32_t> map(0, 2 * beams - 1), bin(0, 7);
    std::uniform_int_distribution<int> level(1, 4); // few levels: ties happen
    for (int trial = 0; trial < 200; ++trial) {
        std::vector<cfar_detection> dets;
        for (int k = 0; k < 30; ++k)
            dets.push_back(det(map(rng), bin(rng), bin(rng), float(level(rng))));
        const auto kept = kernels::strongest_across_beams(dets, beams, ndoppler, true);
        ASSERT_EQ(kept, strongest_reference(dets, beams, ndoppler))
            << "seed " << seed << ", trial " << trial;
    }
    // Two beams of one CPI see one target; the same cell in the next CPI is another.
    const std::vector<cfar_detection> two = { det(0, 3, 7, 2.f),
                                              det(1, 3, 0, 5.f),
                                              det(beams, 3, 7, 1.f) };
    EXPECT_EQ(kernels::strongest_across_beams(two, beams, ndoppler, true),
              (std::vector<std::size_t>{ 1, 2 }));
    // Without the wrap, Doppler bins 7 and 0 are far apart.
    EXPECT_EQ(kernels::strongest_across_beams(two, beams, ndoppler, false),
              (std::vector<std::size_t>{ 0, 1, 2 }));
    expect_invalid([] { kernels::strongest_across_beams({}, 0, 8, true); },
                   "beams",
                   "gpuradar::strongest_across_beams");
    expect_invalid([] { kernels::strongest_across_beams({}, 4, 0, true); },
                   "ndoppler",
                   "gpuradar::strongest_across_beams");
}

/*!
 * The S-band scene of the chain test: one map of 500 range x 64 Doppler bins, sampled at
 * the chirp's bandwidth, so that a bin is a resolution cell in both dimensions (at twice
 * the bandwidth the range bins are half cells and the same position error, 0.07 cell
 * rms, reads as 0.13 bin).
 */
struct chain_setup {
    static constexpr double fs = 5e6, fc = 3e9, prf = 10e3;
    static constexpr std::size_t npulses = 64, nrange = 500;
    double bin_m() const { return kernels::speed_of_light / (2 * fs); }
    double bin_mps() const { return prf / npulses * kernels::speed_of_light / (2 * fc); }
};

TEST(DetectionClustering, test_010_scene_one_detection_per_target_within_a_tenth_bin)
{
    const chain_setup s;
    const auto waveform = kernels::lfm_chirp(5e6, 10e-6, s.fs);
    // Per-sample SNR for about 20 dB in the map: coherent gain L * P (35 dB) less the
    // windows' losses.
    const double snr_sample_db = -12.0;
    // Targets on range bins (the simulator delays by whole samples) and between Doppler
    // bins: offsets -0.4 .. +0.45 of a bin; slow enough to stay in their range bin.
    const double range_bins[] = { 60, 150, 256, 388 };
    const double doppler_bins[] = { 40.25, 20.0, 50.45, 9.6 }; // fftshift: 32 = 0 m/s

    kernels::pulse_doppler_processor::params pp;
    pp.npulses = s.npulses;
    pp.nrange = s.nrange;
    pp.waveform = waveform;
    pp.range_window = kernels::window_spec::make("hamming");
    pp.doppler_window = kernels::window_spec::make("hann");
    pp.fftshift = true;
    auto proc = kernels::pulse_doppler_processor::make(kernels::backend::cpu, pp);

    kernels::cfar_2d_params cp;
    cp.nrange = s.nrange;
    cp.ndoppler = s.npulses;
    cp.guard_range = 2;
    cp.train_range = 8;
    cp.guard_doppler = 2;
    cp.train_doppler = 4;
    cp.pfa = 1e-6;
    auto cfar = kernels::cfar_2d::make(kernels::backend::cpu, cp);
    detection_clustering clustering({ s.nrange, s.npulses, false, true });

    double sum_sq_r = 0, sum_sq_d = 0, worst_r = 0, worst_d = 0, snr_sum = 0;
    std::size_t n = 0, merged_cells = 0, raw = 0;
    for (std::uint64_t trial = 0; trial < 10; ++trial) {
        kernels::scene_config sc;
        sc.fs = s.fs;
        sc.fc = s.fc;
        sc.prf = s.prf;
        sc.waveform = waveform;
        sc.noise_power = 1.0;
        sc.seed = 100 + trial;
        for (std::size_t t = 0; t < 4; ++t)
            sc.targets.push_back({ range_bins[t] * s.bin_m(),
                                   (doppler_bins[t] - 32.0) * s.bin_mps(),
                                   snr_sample_db });
        kernels::radar_scene scene(sc);
        std::vector<cfloat> cpi(s.npulses * s.nrange);
        scene.generate(cpi.data(), cpi.size());
        std::vector<float> map(s.nrange * s.npulses);
        std::vector<std::uint8_t> mask(map.size());
        proc->run(cpi.data(), map.data());
        cfar->run(map.data(), mask.data(), nullptr, 1);
        const auto report = cfar->collect();
        raw += report.detections.size();
        const auto clusters = clustering.cluster(report.detections);
        for (std::size_t t = 0; t < 4; ++t) {
            std::vector<clustered_detection> near;
            for (const auto& c : clusters)
                if (std::abs(c.range_bin - range_bins[t]) < 4 &&
                    std::abs(c.doppler_bin - doppler_bins[t]) < 4)
                    near.push_back(c);
            ASSERT_EQ(near.size(), 1u) << "trial " << trial << " target " << t;
            const double er = near[0].range_bin - range_bins[t];
            const double ed = near[0].doppler_bin - doppler_bins[t];
            sum_sq_r += er * er;
            sum_sq_d += ed * ed;
            worst_r = std::max(worst_r, std::abs(er));
            worst_d = std::max(worst_d, std::abs(ed));
            snr_sum += 10 * std::log10(near[0].peak.power / near[0].peak.noise);
            merged_cells += near[0].cells;
            ++n;
        }
        // Nothing else: no target split into two, at most a stray false alarm.
        EXPECT_LE(clusters.size(), 5u) << "trial " << trial;
    }
    const double mean_snr = snr_sum / double(n);
    const double rms_r = std::sqrt(sum_sq_r / double(n));
    const double rms_d = std::sqrt(sum_sq_d / double(n));
    // The test is at the SNR it claims.
    EXPECT_GT(mean_snr, 17.0);
    EXPECT_LT(mean_snr, 23.0);
    EXPECT_GT(merged_cells, n); // the targets did light several cells each
    EXPECT_LE(rms_r, 0.1);
    EXPECT_LE(rms_d, 0.1);
    for (const auto& [k, v] :
         { std::pair<const char*, double>{ "mean_peak_snr_db", mean_snr },
           { "rms_range_err_bins", rms_r },
           { "rms_doppler_err_bins", rms_d },
           { "worst_range_err_bins", worst_r },
           { "worst_doppler_err_bins", worst_d },
           { "cells_per_target", double(merged_cells) / double(n) },
           { "raw_detections", double(raw) } })
        ::testing::Test::RecordProperty(k, std::to_string(v));
    std::printf("peak SNR %.1f dB, rms error range %.3f Doppler %.3f bins, worst %.3f / "
                "%.3f, %.1f cells per target\n",
                mean_snr,
                rms_r,
                rms_d,
                worst_r,
                worst_d,
                double(merged_cells) / double(n));
}


//! Unit-mean exponential noise plus `targets` Gaussian blobs 30 dB up at random cells of
//! each map (some straddling an edge), `maps` maps of nrange x ndoppler in cfar_2d's
//! layout (channels = maps, one CPI).
std::vector<float> blob_maps(std::size_t nrange,
                             std::size_t ndoppler,
                             std::size_t maps,
                             std::size_t targets,
                             std::uint32_t seed)
{
    std::mt19937 rng(seed);
    std::exponential_distribution<float> noise(1.f);
    std::uniform_real_distribution<double> u(0, 1);
    std::vector<float> power(nrange * maps * ndoppler);
    for (auto& x : power)
        x = noise(rng);
    for (std::size_t m = 0; m < maps; ++m)
        for (std::size_t t = 0; t < targets; ++t) {
            const double r0 = double(nrange) * u(rng), d0 = double(ndoppler) * u(rng);
            const double width = 0.5 + u(rng);
            for (long dr = -3; dr <= 3; ++dr)
                for (long dd = -3; dd <= 3; ++dd) {
                    const long r = (long(r0) + dr + long(nrange)) % long(nrange);
                    const long d = (long(d0) + dd + long(ndoppler)) % long(ndoppler);
                    const double x = double(long(r0) + dr) - r0,
                                 y = double(long(d0) + dd) - d0;
                    power[(std::size_t(r) * maps + m) * ndoppler + std::size_t(d)] +=
                        float(1e3 * std::exp(-(x * x + y * y) / (2 * width * width)));
                }
        }
    return power;
}

void expect_same_clusters(const kernels::cfar_report& got,
                          const kernels::cfar_report& want)
{
    EXPECT_EQ(got.found, want.found);
    EXPECT_EQ(got.clustered_cells, want.clustered_cells);
    EXPECT_TRUE(got.detections.empty());
    ASSERT_EQ(got.clusters.size(), want.clusters.size());
    for (std::size_t i = 0; i < got.clusters.size(); ++i) {
        const auto &a = got.clusters[i], &b = want.clusters[i];
        SCOPED_TRACE("cluster " + std::to_string(i));
        EXPECT_EQ(a.peak.map, b.peak.map);
        EXPECT_EQ(a.peak.range_bin, b.peak.range_bin);
        EXPECT_EQ(a.peak.doppler_bin, b.peak.doppler_bin);
        EXPECT_EQ(a.peak.power, b.peak.power);
        EXPECT_EQ(a.cells, b.cells);
        EXPECT_EQ(a.range_bin, b.range_bin);
        EXPECT_EQ(a.doppler_bin, b.doppler_bin);
    }
}

/*
 * cfar_2d's cluster option: the report's clusters are cluster() of the detections the
 * same CFAR lists without it, over the CFAR's own edges (each edge wrapping or not, the
 * result differs when the edge setting is ignored: blobs straddle the edges).
 */
TEST(DetectionClustering, test_011_cfar_cluster_option_clusters_its_own_detections)
{
    const std::uint32_t seed = std::random_device{}();
    SCOPED_TRACE("seed " + std::to_string(seed));
    for (auto re : { kernels::cfar_edge::clip, kernels::cfar_edge::wrap })
        for (auto de : { kernels::cfar_edge::wrap, kernels::cfar_edge::clip }) {
            kernels::cfar_2d_params p;
            p.nrange = 96;
            p.ndoppler = 40;
            p.channels = 3;
            p.range_edge = re;
            p.doppler_edge = de;
            p.pfa = 1e-3;
            const auto power = blob_maps(p.nrange, p.ndoppler, p.channels, 6, seed);
            std::vector<std::uint8_t> mask(power.size());
            auto plain = kernels::cfar_2d::make(kernels::backend::cpu, p);
            plain->run(power.data(), mask.data(), nullptr, 1);
            const auto cells = plain->collect();
            p.cluster = true;
            auto merged = kernels::cfar_2d::make(kernels::backend::cpu, p);
            merged->run(power.data(), mask.data(), nullptr, 1);
            const auto got = merged->collect();

            kernels::cfar_report want;
            want.found = cells.found;
            want.clustered_cells = cells.detections.size();
            want.clusters = detection_clustering({ p.nrange,
                                                   p.ndoppler,
                                                   re == kernels::cfar_edge::wrap,
                                                   de == kernels::cfar_edge::wrap })
                                .cluster(cells.detections);
            EXPECT_GT(cells.detections.size(), want.clusters.size()); // blobs merged
            expect_same_clusters(got, want);
            EXPECT_FALSE(got.overflow());
        }
}

//! With the list full, the clusters are those of the cells listed and the report says
//! that cells were dropped.
TEST(DetectionClustering, test_012_cfar_cluster_option_reports_overflow)
{
    kernels::cfar_2d_params p;
    p.nrange = 96;
    p.ndoppler = 40;
    p.pfa = 1e-3;
    p.max_detections = 5;
    p.cluster = true;
    const auto power = blob_maps(p.nrange, p.ndoppler, 1, 6, 12);
    std::vector<std::uint8_t> mask(power.size());
    auto cfar = kernels::cfar_2d::make(kernels::backend::cpu, p);
    cfar->run(power.data(), mask.data(), nullptr, 1);
    const auto r = cfar->collect();
    EXPECT_EQ(r.clustered_cells, 5u);
    EXPECT_GT(r.found, 5u);
    EXPECT_TRUE(r.overflow());
    std::uint32_t cells = 0;
    for (const auto& c : r.clusters)
        cells += c.cells;
    EXPECT_EQ(cells, 5u);
}

TEST(DetectionClustering, test_013_from_peaks_needs_a_count_per_peak)
{
    const detection_clustering c({ 10, 10, false, true });
    expect_invalid([&] { c.from_peaks({ det(0, 1, 1, 2.f) }, {}); },
                   "cells must be one count per peak",
                   "gpuradar::detection_clustering");
}

/*
 * The CUDA CFAR merges on the device: the same clusters as the CPU twin (peaks, cell
 * counts, bit for bit the same sub-bin positions), on fresh random maps with blobs
 * across the edges, several maps per run, each edge wrapping or not; each CFAR runs
 * twice on different maps so that the first run's clusters stand in the buffers the
 * second one fills. A list longer than cfar_device_cluster_limit goes back whole and is
 * clustered on the host: the same result.
 */
TEST(DetectionClusteringCuda, test_014_device_clusters_equal_the_cpu_twins)
{
    GPURADAR_REQUIRE_CUDA();
    const std::uint32_t seed = std::random_device{}();
    SCOPED_TRACE("seed " + std::to_string(seed));
    kernels::cuda_stream stream;
    struct shape {
        std::size_t nrange, ndoppler, channels, targets;
        double pfa;
    };
    // The last shape lists more cells than the device clusters (the host path).
    const shape shapes[] = { { 96, 40, 3, 6, 1e-3 },
                             { 512, 64, 2, 30, 1e-4 },
                             { 300, 128, 2, 20, 0.03 } };
    std::uint32_t s = seed;
    bool device_path = false, host_path = false;
    for (const auto& sh : shapes)
        for (auto re : { kernels::cfar_edge::clip, kernels::cfar_edge::wrap })
            for (auto de : { kernels::cfar_edge::wrap, kernels::cfar_edge::clip }) {
                kernels::cfar_2d_params p;
                p.nrange = sh.nrange;
                p.ndoppler = sh.ndoppler;
                p.channels = sh.channels;
                p.range_edge = re;
                p.doppler_edge = de;
                p.pfa = sh.pfa;
                p.cluster = true;
                SCOPED_TRACE(std::to_string(sh.nrange) + "x" +
                             std::to_string(sh.ndoppler) + " range " + to_string(re) +
                             " doppler " + to_string(de));
                auto cpu = kernels::cfar_2d::make(kernels::backend::cpu, p);
                auto gpu =
                    kernels::cfar_2d::make(kernels::backend::cuda, p, stream.ref());
                for (int round = 0; round < 2; ++round) {
                    const auto power =
                        blob_maps(sh.nrange, sh.ndoppler, sh.channels, sh.targets, s++);
                    std::vector<std::uint8_t> mask(power.size());
                    cpu->run(power.data(), mask.data(), nullptr, 1);
                    const auto want = cpu->collect();
                    const auto d_power = to_device(power, stream);
                    kernels::device_memory d_mask(power.size());
                    gpu->run(d_power.as<float>(), d_mask.as<std::uint8_t>(), nullptr, 1);
                    const auto got = gpu->collect();
                    expect_same_clusters(got, want);
                    ASSERT_GT(want.clusters.size(), 0u);
                    (want.clustered_cells > kernels::cfar_device_cluster_limit
                         ? host_path
                         : device_path) = true;
                }
            }
    EXPECT_TRUE(device_path);
    EXPECT_TRUE(host_path);
}

} // namespace
} // namespace gpuradar::test
