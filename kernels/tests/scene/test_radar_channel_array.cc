/*
 * radar_channel with a receive array: each channel's echo and leakage carry the
 * channel's gain and phase error and the echo the array phase of the target's azimuth;
 * the noise is independent per channel; one channel without an array is the
 * single-channel output to the bit.
 */
#include "invalid_argument_check.h"
#include "test_support.h"
#include <gpuradar/kernels/scene/radar_channel.h>

namespace gpuradar::test {
namespace {

using namespace gpuradar::kernels;
using cdouble = std::complex<double>;
constexpr double c0 = 299792458.0;
constexpr double pi = 3.14159265358979323846;

channel_config config(std::size_t nch, double azimuth_deg)
{
    channel_config c;
    c.fs = 1e6;
    c.fc = 5e9;
    c.noise_power = 0.0;
    scene_target t;
    t.range_m = 3000;
    t.velocity_mps = 15;
    t.snr_db = 6;
    t.azimuth_deg = azimuth_deg;
    c.targets = { t };
    c.array = array_config::make(nch, 0.5, {}, c.fc, {}, {}, radar_channel::stage);
    return c;
}

std::vector<std::vector<cfloat>>
run(radar_channel& ch, const std::vector<cfloat>& in, std::size_t ncalls)
{
    std::vector<std::vector<cfloat>> y(ch.nchannels(), std::vector<cfloat>(in.size()));
    const std::size_t step = in.size() / ncalls;
    for (std::size_t pos = 0; pos < in.size(); pos += step) {
        const std::size_t n = std::min(step, in.size() - pos);
        std::vector<cfloat*> out;
        for (auto& v : y)
            out.push_back(v.data() + pos);
        ch.process(in.data() + pos, out.data(), n);
    }
    return y;
}

TEST(RadarChannelArray, test_001_echo_phase_per_channel)
{
    const std::size_t nch = 5;
    const double az = -35.0;
    auto cfg = config(nch, az);
    cfg.array.gain_db = { 0, -6, 0, 3, 0 };
    cfg.array.phase_deg = { 0, 0, 90, 0, -10 };
    radar_channel ch(cfg);
    const auto x = random_complex(6000, 5);
    const auto y = run(ch, x, 3);
    for (std::size_t c = 1; c < nch; ++c) {
        const cdouble want = std::pow(10.0, cfg.array.gain_db[c] / 20) *
                             std::polar(1.0,
                                        pi * double(c) * std::sin(az * pi / 180) +
                                            cfg.array.phase_deg[c] * pi / 180);
        std::vector<cdouble> predicted;
        for (const auto& v : y[0])
            predicted.push_back(cdouble(v) * want);
        EXPECT_LT(rel_l2(y[c], predicted), 1e-5) << "channel " << c;
    }
}

TEST(RadarChannelArray, test_002_leakage_errors_and_independent_noise)
{
    auto cfg = config(3, 0.0);
    cfg.targets.clear();
    cfg.leakage_amplitude = 0.5;
    cfg.noise_power = 1.0;
    cfg.array.gain_db = { 0, 6, 0 };
    cfg.array.phase_deg = { 0, 0, 180 };
    radar_channel ch(cfg);
    const std::size_t n = 30000;
    const auto x = random_complex(n, 9, 4.0f); // leakage power 0.25 * 32 = 8
    const auto y = run(ch, x, 2);
    const cdouble gain[3] = { 0.5, 0.5 * std::pow(10.0, 6.0 / 20), -0.5 };
    for (std::size_t c = 0; c < 3; ++c) {
        // Leakage = gain * x; what is left is the channel's noise of power 1.
        std::vector<cdouble> resid(n);
        double p = 0;
        for (std::size_t i = 0; i < n; ++i) {
            resid[i] = cdouble(y[c][i]) - gain[c] * cdouble(x[i]);
            p += std::norm(resid[i]);
        }
        EXPECT_NEAR(p / n, 1.0, 0.05) << "channel " << c;
        if (c == 0)
            continue;
        cdouble r = 0;
        for (std::size_t i = 0; i < n; ++i)
            r += (cdouble(y[0][i]) - gain[0] * cdouble(x[i])) * std::conj(resid[i]);
        EXPECT_LT(std::abs(r) / n, 5.0 / std::sqrt(double(n))) << "channel " << c;
    }
}

TEST(RadarChannelArray, test_003_one_channel_is_the_single_channel_output)
{
    auto cfg = config(1, 60.0);
    cfg.noise_power = 1.0;
    cfg.leakage_amplitude = 0.3;
    cfg.system_delay = 7;
    ASSERT_TRUE(cfg.array.elements.empty());
    auto single = cfg;
    single.targets[0].azimuth_deg = 0.0;
    radar_channel a(cfg), b(single);
    const auto x = random_complex(5000, 3);
    std::vector<cfloat> ya(x.size()), yb(x.size());
    a.process(x.data(), ya.data(), x.size());
    b.process(x.data(), yb.data(), x.size());
    EXPECT_EQ(0, std::memcmp(ya.data(), yb.data(), ya.size() * sizeof(cfloat)));
}

TEST(RadarChannelArray, test_004_bad_array_parameters_name_themselves)
{
    const char* who = radar_channel::stage;
    expect_invalid([&] { array_config::make(0, 0.5, {}, 1e9, {}, {}, who); },
                   "nchannels");
    expect_invalid(
        [&] {
            array_config::make(3, 0.5, { 0, 0, 0 }, 1e9, {}, {}, who);
        },
        "element_positions_m");
    expect_invalid([&] { array_config::make(3, -0.5, {}, 1e9, {}, {}, who); },
                   "element_spacing_wl");
    expect_invalid([&] { array_config::make(3, 0.5, {}, 0.0, {}, {}, who); }, "fc");
    expect_invalid(
        [&] {
            array_config::make(3, 0.5, {}, 1e9, { 1, 2 }, {}, who);
        },
        "channel_gain_db");
    expect_invalid(
        [&] {
            array_config::make(2, 0.5, {}, 1e9, {}, { 1, NAN }, who);
        },
        "channel_phase_deg[1]");
    auto cfg = config(2, -90.5);
    expect_invalid([&] { radar_channel ch(cfg); }, "azimuths_deg[0]");
    std::vector<scene_target> targets(2);
    expect_invalid([&] { radar_scene::set_directions(targets, { 1.0 }, {}, who); },
                   "azimuths_deg");
}

TEST(RadarChannelArray, test_005_elevation_reaches_a_planar_array)
{
    // One element above another (z, half a wavelength): the elevation alone sets their
    // phase difference, pi sin(el), whatever the azimuth.
    const double az = -35.0, el = -25.0;
    auto cfg = config(2, az);
    cfg.targets[0].elevation_deg = el;
    const double h = 0.5 * c0 / cfg.fc;
    cfg.array.elements = { { 0, 0, 0 }, { 0, 0, h } };
    radar_channel ch(cfg);
    const auto y = run(ch, random_complex(6000, 7), 2);
    const cdouble want = std::polar(1.0, pi * std::sin(el * pi / 180));
    std::vector<cdouble> predicted;
    for (const auto& v : y[0])
        predicted.push_back(cdouble(v) * want);
    EXPECT_LT(rel_l2(y[1], predicted), 1e-5);
    cfg.targets[0].elevation_deg = NAN;
    expect_invalid([&] { radar_channel bad(cfg); }, "elevations_deg[0]");
}

} // namespace
} // namespace gpuradar::test
