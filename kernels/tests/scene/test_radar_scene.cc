/* radar_scene: echoes against a direct fp64 reference (delays, Doppler phase continuous
 * across pulses and calls, range walk, range-ambiguous echoes), noise/SNR/clutter powers,
 * leakage, and bad input naming the parameter or the target entry. */
#include "invalid_argument_check.h"
#include "test_support.h"
#include <gpuradar/kernels/pulse_doppler/pulse_compression.h>
#include <gpuradar/kernels/scene/radar_scene.h>
#include <gtest/gtest.h>
#include <cmath>
#include <complex>
#include <random>

namespace gpuradar::test {
namespace {

using namespace gpuradar::kernels;
constexpr double c0 = 299792458.0;
constexpr double two_pi = 6.283185307179586476925;

// PRI 1000.5 samples: pulse k starts at floor(1000.5 k + 1/2) = (2001 k + 1) div 2.
std::uint64_t start_of(std::uint64_t k) { return (2001 * k + 1) / 2; }

scene_config base()
{
    scene_config c;
    c.fs = 2e6;
    c.fc = 3e9;
    c.prf = 2e6 / 1000.5;
    c.waveform = lfm_chirp(1e6, 50e-6, 2e6); // 100 samples
    c.noise_power = 0.0;
    return c;
}

// Direct reference: x[n] = sum_t sum_k a s[n - p_k - d_k] exp(-j4pi fc R(t_n)/c).
std::vector<std::complex<double>> reference(const scene_config& c, std::size_t n)
{
    std::vector<std::complex<double>> x(n);
    const std::size_t L = c.waveform.size();
    double wp = 0;
    for (auto s : c.waveform)
        wp += std::norm(std::complex<double>(s));
    wp /= L;
    const double P = c.noise_power > 0 ? c.noise_power : 1.0;
    for (const auto& t : c.targets) {
        const double a = std::sqrt(P * std::pow(10.0, t.snr_db / 10) / wp);
        for (std::uint64_t k = 0; start_of(k) < n; ++k) {
            const double tk = start_of(k) / c.fs;
            const double d = 2 * (t.range_m - t.velocity_mps * tk) * c.fs / c0;
            const std::uint64_t e0 =
                start_of(k) + static_cast<std::uint64_t>(std::llround(d));
            for (std::size_t m = 0; m < L && e0 + m < n; ++m) {
                const double tn = (e0 + m) / c.fs;
                const double ph =
                    -2 * two_pi * c.fc * (t.range_m - t.velocity_mps * tn) / c0;
                x[e0 + m] += a * std::complex<double>(c.waveform[m]) *
                             std::polar(1.0, std::remainder(ph, two_pi));
            }
        }
    }
    return x;
}

std::vector<cfloat> generate_chunked(radar_scene& s, std::size_t n, std::uint32_t seed)
{
    std::mt19937 rng(seed);
    std::vector<cfloat> x(n);
    std::size_t pos = 0;
    while (pos < n) {
        const std::size_t m = std::min<std::size_t>(n - pos, 1 + rng() % 2500);
        s.generate(x.data() + pos, m);
        pos += m;
    }
    return x;
}

TEST(RadarScene, test_001_echoes_match_fp64_reference_across_chunks)
{
    auto c = base();
    // A slow and a fast target (the fast one walks ~3 samples over the run), one beyond
    // the unambiguous range c/(2 prf) = 75 km (its echoes land one pulse later).
    c.targets = { { 15000.0, 20.0, 10.0 },
                  { 30000.0, -2500.0, 3.0 },
                  { 80000.0, 300.0, 0.0 } };
    radar_scene s(c);
    const std::size_t n = 400000;
    const auto x = generate_chunked(s, n, 1);
    const auto ref = reference(c, n);
    EXPECT_LT(rel_l2(x, ref), 1e-6);
    EXPECT_EQ(s.position(), n);
}

TEST(RadarScene, test_002_truth_and_echo_position)
{
    auto c = base();
    c.targets = { { 12345.0, 0.0, 20.0 } };
    radar_scene s(c);
    const auto t = s.truth(0, 7);
    EXPECT_EQ(t.sample, start_of(7));
    EXPECT_DOUBLE_EQ(t.delay_samples, 2 * 12345.0 * 2e6 / c0);
    EXPECT_DOUBLE_EQ(t.doppler_hz, 0.0);
    std::vector<cfloat> x(start_of(8));
    s.generate(x.data(), x.size());
    const std::uint64_t e0 = start_of(7) + std::llround(t.delay_samples);
    EXPECT_EQ(x[e0 - 1], cfloat(0, 0));
    EXPECT_NEAR(std::abs(x[e0]), t.amplitude, 1e-5);
    EXPECT_NEAR(t.amplitude * t.amplitude, std::pow(10.0, 2.0), 1e-5); // |s| = 1 in float
    // Doppler truth of a closing target is positive: f_d = 2 v fc / c.
    c.targets = { { 1000.0, 30.0, 0.0 } };
    EXPECT_NEAR(radar_scene(c).truth(0, 0).doppler_hz, 2 * 30.0 * 3e9 / c0, 1e-9);
    EXPECT_NEAR(radar_scene(c).truth(0, 1000).range_m,
                1000.0 - 30.0 * start_of(1000) / 2e6,
                1e-9);
}

TEST(RadarScene, test_003_noise_power_and_snr)
{
    auto c = base();
    c.noise_power = 2.5;
    c.targets = { { 9000.0, 0.0, 6.0 } };
    radar_scene s(c);
    const std::size_t n = 1000000;
    std::vector<cfloat> x(n);
    s.generate(x.data(), n);
    // Noise power from the samples outside echoes: n / PRI pulses x 100 echo samples
    // excluded. 1e6 samples: relative std. dev. of the estimate ~ 0.1%; allow 1%.
    const std::uint64_t d = std::llround(2 * 9000.0 * 2e6 / c0);
    double noise = 0, echo = 0;
    std::size_t nn = 0, ne = 0;
    for (std::uint64_t k = 0; start_of(k + 1) <= n; ++k)
        for (std::uint64_t i = start_of(k); i < start_of(k + 1); ++i) {
            const bool in_echo = i >= start_of(k) + d && i < start_of(k) + d + 100;
            (in_echo ? echo : noise) += std::norm(std::complex<double>(x[i]));
            ++(in_echo ? ne : nn);
        }
    EXPECT_NEAR(noise / nn, 2.5, 0.025);
    // Echo samples: |a s|^2 + noise, SNR 6 dB over 2.5 (~100k samples, ~0.5% of 12.5).
    EXPECT_NEAR(echo / ne - 2.5, 2.5 * std::pow(10.0, 0.6), 0.1);
}

TEST(RadarScene, test_004_leakage_and_stationary_clutter)
{
    auto c = base();
    c.leakage_amplitude = 30.0;
    c.clutter_cnr_db = 20.0;
    c.clutter_start_m = 3000.0;
    c.clutter_stop_m = 30000.0;
    c.noise_power = 1.0;
    radar_scene s(c);
    std::vector<cfloat> x(start_of(40));
    s.generate(x.data(), x.size());
    // Leakage: the waveform x 30 at each pulse start (noise and clutter are far smaller
    // at the start: clutter begins 40 samples later).
    for (std::uint64_t k = 0; k < 40; ++k)
        EXPECT_NEAR(std::abs(x[start_of(k)] - cfloat(30.0f) * c.waveform[0]), 0.0, 6.0);
    // Clutter: stationary (the same in every pulse, up to the noise) and with power
    // CNR x noise where fully overlapped.
    const double cell = c0 / (2 * c.fs);
    const std::uint64_t d0 = std::ceil(3000.0 / cell) + 100,
                        d1 = std::floor(30000.0 / cell);
    double p = 0, diff = 0;
    std::size_t m = 0;
    for (std::uint64_t k = 1; k + 1 < 40; ++k)
        for (std::uint64_t i = d0; i < d1; ++i) {
            p += std::norm(std::complex<double>(x[start_of(k) + i]));
            diff += std::norm(std::complex<double>(x[start_of(k) + i]) -
                              std::complex<double>(x[start_of(k + 1) + i]));
            ++m;
        }
    // ~270 independent clutter cells (correlated over 100 samples): allow 25%.
    EXPECT_NEAR(p / m, 101.0, 25.0);
    EXPECT_NEAR(diff / m, 2.0, 0.2); // only the two noises differ
}

TEST(RadarScene, test_005_targets_from_lists_and_rcs)
{
    const auto t =
        radar_scene::make_targets({ 1000, 2000 }, { 5, -5 }, { 10, 1 }, "rcs_m2", 150.0);
    ASSERT_EQ(t.size(), 2u);
    EXPECT_NEAR(t[0].snr_db, 150.0 + 10 - 120, 1e-12);
    EXPECT_NEAR(t[1].snr_db, 150.0 + 0 - 40 * std::log10(2000.0), 1e-12);
    const auto u = radar_scene::make_targets({ 1000 }, { 5 }, { -3 }, "snr_db", 0);
    EXPECT_EQ(u[0].snr_db, -3);
    EXPECT_TRUE(radar_scene::make_targets({}, {}, {}, "snr_db", 0).empty());
}

TEST(RadarScene, test_006_bad_input_names_parameter_or_entry)
{
    auto mk = [](auto mutate) {
        auto c = base();
        mutate(c);
        radar_scene s(c);
    };
    EXPECT_NO_THROW(mk([](scene_config&) {}));
    expect_invalid([&] { mk([](scene_config& c) { c.fs = 0; }); }, "fs");
    expect_invalid([&] { mk([](scene_config& c) { c.fc = -1; }); }, "fc");
    expect_invalid([&] { mk([](scene_config& c) { c.prf = 0; }); }, "prf");
    // The pulse must fit in the PRI: prf = fs / L passes, a little more throws.
    EXPECT_NO_THROW(mk([](scene_config& c) { c.prf = c.fs / 100; }));
    expect_invalid([&] { mk([](scene_config& c) { c.prf = c.fs / 99.9; }); }, "prf");
    expect_invalid([&] { mk([](scene_config& c) { c.waveform.clear(); }); }, "waveform");
    expect_invalid([&] { mk([](scene_config& c) { c.waveform.assign(10, 0); }); },
                   "waveform");
    expect_invalid([&] { mk([](scene_config& c) { c.noise_power = -1; }); },
                   "noise_power");
    expect_invalid([&] { mk([](scene_config& c) { c.leakage_amplitude = -1; }); },
                   "leakage_amplitude");
    expect_invalid(
        [&] {
            mk([](scene_config& c) { c.clutter_start_m = -5, c.clutter_stop_m = 5; });
        },
        "clutter_start_m");
    expect_invalid(
        [&] { mk([](scene_config& c) {
                  c.targets = { { 100, 0, 0 }, { -1, 0, 0 } };
              }); },
        "ranges[1]");
    expect_invalid([&] { mk([](scene_config& c) {
                             c.targets = { { 100, NAN, 0 } };
                         }); },
                   "velocities[0]");
    expect_invalid(
        [&] { mk([](scene_config& c) {
                  c.targets = { { 100, 0, INFINITY } };
              }); },
        "amplitudes[0]");
    // Parallel lists.
    expect_invalid(
        [] {
            radar_scene::make_targets({ 1, 2 }, { 0 }, { 0, 0 }, "snr_db", 0);
        },
        "velocities");
    expect_invalid(
        [] {
            radar_scene::make_targets({ 1, 2 }, { 0, 0 }, { 0 }, "snr_db", 0);
        },
        "amplitudes");
    expect_invalid(
        [] {
            radar_scene::make_targets({ 1, 0 }, { 0, 0 }, { 0, 0 }, "snr_db", 0);
        },
        "ranges[1]");
    expect_invalid(
        [] {
            radar_scene::make_targets({ 1, 2 }, { 0, 0 }, { 1, 0 }, "rcs_m2", 0);
        },
        "amplitudes[1]");
    expect_invalid([] { radar_scene::make_targets({ 1 }, { 0 }, { 1 }, "dbsm", 0); },
                   "amplitude_unit");
}

} // namespace
} // namespace gpuradar::test
