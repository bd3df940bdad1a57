/*
 * radar_scene with a receive array: each channel's echo carries the array phase of the
 * target's azimuth and the channel's gain and phase error, the noise is independent per
 * channel, channel 0 of a one-element scene is the single-channel stream to the bit, and
 * the beamformer finds the target in the beam steered at its azimuth.
 */
#include "invalid_argument_check.h"
#include "test_support.h"
#include <gpuradar/kernels/array/beamformer.h>
#include <gpuradar/kernels/pulse_doppler/pulse_compression.h>
#include <gpuradar/kernels/scene/radar_scene.h>
#include <algorithm>

namespace gpuradar::test {
namespace {

using namespace gpuradar::kernels;
using cdouble = std::complex<double>;
constexpr double c0 = 299792458.0;
constexpr double pi = 3.14159265358979323846;

scene_config array_scene(std::size_t nch, double azimuth_deg)
{
    scene_config c;
    c.fs = 2e6;
    c.fc = 3e9;
    c.prf = 2e6 / 1000;
    c.waveform = lfm_chirp(1e6, 50e-6, 2e6);
    c.noise_power = 0.0;
    scene_target t;
    t.range_m = 30e3;
    t.velocity_mps = 40;
    t.snr_db = 10;
    t.azimuth_deg = azimuth_deg;
    c.targets = { t };
    c.array.elements = ula_positions(nch, 0.5, c0 / c.fc);
    return c;
}

std::vector<std::vector<cfloat>> generate_all(radar_scene& s, std::size_t n)
{
    std::vector<std::vector<cfloat>> x(s.nchannels(), std::vector<cfloat>(n));
    std::vector<cfloat*> ptr;
    for (auto& v : x)
        ptr.push_back(v.data());
    // Two calls: the stream continues across them in every channel.
    s.generate(ptr.data(), n / 3);
    for (auto& p : ptr)
        p += n / 3;
    s.generate(ptr.data(), n - n / 3);
    return x;
}

TEST(RadarSceneArray, test_001_channels_carry_the_array_phase_and_errors)
{
    const std::size_t nch = 4, n = 5000;
    const double az = 25.0;
    auto cfg = array_scene(nch, az);
    cfg.array.gain_db = { 0.0, 6.0, -3.0, 0.0 };
    cfg.array.phase_deg = { 0.0, 30.0, 0.0, -45.0 };
    radar_scene s(cfg);
    ASSERT_EQ(s.nchannels(), nch);
    const auto x = generate_all(s, n);
    // Written from the geometry: element c sits (c - 1.5) half wavelengths along x.
    for (std::size_t c = 1; c < nch; ++c) {
        const cdouble want = std::pow(10.0, cfg.array.gain_db[c] / 20) *
                             std::polar(1.0,
                                        pi * double(c) * std::sin(az * pi / 180) +
                                            cfg.array.phase_deg[c] * pi / 180);
        std::vector<cdouble> predicted;
        for (const auto& v : x[0])
            predicted.push_back(cdouble(v) * want);
        EXPECT_LT(rel_l2(x[c], predicted), 1e-5) << "channel " << c;
    }
    double power = 0;
    for (const auto& v : x[0])
        power += std::norm(v);
    EXPECT_GT(power, 0.0); // the echo is in the window
}

TEST(RadarSceneArray, test_002_one_element_is_the_single_channel_stream)
{
    for (bool with_element : { false, true }) {
        auto cfg = array_scene(1, 40.0);
        cfg.noise_power = 1.0;
        cfg.leakage_amplitude = 2.0;
        cfg.clutter_cnr_db = 10;
        cfg.clutter_start_m = 3e3;
        cfg.clutter_stop_m = 6e3;
        if (!with_element)
            cfg.array.elements.clear();
        auto single = cfg;
        single.targets[0].azimuth_deg = 0;
        single.array = array_config();
        radar_scene a(cfg), b(single);
        std::vector<cfloat> xa(4000), xb(4000);
        a.generate(xa.data(), xa.size());
        b.generate(xb.data(), xb.size());
        if (with_element) // an element at the origin: no array phase at any azimuth
            EXPECT_LT(rel_l2(xa, std::vector<cdouble>(xb.begin(), xb.end())), 1e-6);
        else
            EXPECT_EQ(0, std::memcmp(xa.data(), xb.data(), xa.size() * sizeof(cfloat)));
    }
}

TEST(RadarSceneArray, test_003_noise_is_independent_per_channel)
{
    auto cfg = array_scene(3, 0.0);
    cfg.targets.clear();
    cfg.noise_power = 2.0;
    cfg.array.gain_db = { 10.0, 10.0, 10.0 }; // errors scale signals, never the noise
    radar_scene s(cfg);
    const std::size_t n = 40000;
    const auto x = generate_all(s, n);
    for (std::size_t c = 0; c < 3; ++c) {
        double p = 0;
        for (const auto& v : x[c])
            p += std::norm(v);
        EXPECT_NEAR(p / n, 2.0, 0.1) << "channel " << c;
        for (std::size_t d = c + 1; d < 3; ++d) {
            cdouble r = 0;
            for (std::size_t i = 0; i < n; ++i)
                r += cdouble(x[c][i]) * std::conj(cdouble(x[d][i]));
            EXPECT_LT(std::abs(r) / (2.0 * n), 5.0 / std::sqrt(double(n)))
                << "channels " << c << ", " << d;
        }
    }
}

TEST(RadarSceneArray, test_004_target_lands_in_the_beam_steered_at_it)
{
    const std::size_t nch = 8, n = 4000;
    const auto angles = beam_fan_deg(13, -60, 60);
    for (double az : { -30.0, 10.0, 50.0 }) {
        auto cfg = array_scene(nch, az);
        cfg.noise_power = 1.0;
        radar_scene s(cfg);
        const auto x = generate_all(s, n);
        std::vector<cfloat> item; // one channel-major item of nch x n
        for (const auto& v : x)
            item.insert(item.end(), v.begin(), v.end());
        const auto w = beamformer_weights(cfg.array.elements, c0 / cfg.fc, angles, {});
        std::vector<cfloat> beams(angles.size() * n);
        beamformer::make(backend::cpu, nch, angles.size(), n, w)
            ->run(item.data(), beams.data(), 1);
        std::size_t best = 0;
        double best_energy = 0;
        for (std::size_t b = 0; b < angles.size(); ++b) {
            double e = 0;
            for (std::size_t i = 0; i < n; ++i)
                e += std::norm(beams[b * n + i]);
            if (e > best_energy) {
                best_energy = e;
                best = b;
            }
        }
        EXPECT_DOUBLE_EQ(angles[best], az);
    }
}

TEST(RadarSceneArray, test_005_bad_array_parameters_name_themselves)
{
    auto mk = [](auto edit) {
        auto c = array_scene(4, 0.0);
        edit(c);
        radar_scene s(c);
    };
    expect_invalid([&] { mk([](scene_config& c) {
                             c.array.gain_db = { 0, 0 };
                         }); },
                   "channel_gain_db");
    expect_invalid([&] { mk([](scene_config& c) {
                             c.array.phase_deg = { 0, 0, 0 };
                         }); },
                   "channel_phase_deg");
    expect_invalid(
        [&] { mk([](scene_config& c) {
                  c.array.phase_deg = { 0, NAN, 0, 0 };
              }); },
        "channel_phase_deg[1]");
    expect_invalid([&] { mk([](scene_config& c) { c.targets[0].azimuth_deg = 91; }); },
                   "azimuths_deg[0]");
}

TEST(RadarSceneArray, test_006_elevation_reaches_a_planar_array)
{
    // A 2 x 2 array in the x-z plane, half a wavelength apart; the target at 20 deg
    // azimuth and 30 deg elevation. Element c's phase over channel 0's, written from
    // the convention u = (sin az cos el, cos az cos el, sin el): pi (dx ux + dz uz) for
    // offsets dx, dz in half wavelengths.
    const double az = 20.0, el = 30.0;
    auto cfg = array_scene(4, az);
    cfg.targets[0].elevation_deg = el;
    const double h = 0.5 * c0 / cfg.fc;
    cfg.array.elements = { { 0, 0, 0 }, { h, 0, 0 }, { 0, 0, h }, { h, 0, h } };
    radar_scene s(cfg);
    const auto x = generate_all(s, 5000);
    const double ux = std::sin(az * pi / 180) * std::cos(el * pi / 180),
                 uz = std::sin(el * pi / 180);
    const double dx[4] = { 0, 1, 0, 1 }, dz[4] = { 0, 0, 1, 1 };
    for (std::size_t c = 1; c < 4; ++c) {
        const cdouble want = std::polar(1.0, pi * (dx[c] * ux + dz[c] * uz));
        std::vector<cdouble> predicted;
        for (const auto& v : x[0])
            predicted.push_back(cdouble(v) * want);
        EXPECT_LT(rel_l2(x[c], predicted), 1e-5) << "channel " << c;
    }
    EXPECT_EQ(s.truth(0, 0).elevation_deg, el);
    cfg.targets[0].elevation_deg = 90.5;
    expect_invalid([&] { radar_scene bad(cfg); }, "elevations_deg[0]");
    std::vector<scene_target> targets(2);
    expect_invalid(
        [&] {
            radar_scene::set_directions(targets, {}, { 1.0, 2.0, 3.0 });
        },
        "elevations_deg");
    radar_scene::set_directions(targets, {}, { 1.0, -2.0 });
    EXPECT_EQ(targets[1].elevation_deg, -2.0);
    EXPECT_EQ(targets[1].azimuth_deg, 0.0);
}

} // namespace
} // namespace gpuradar::test
