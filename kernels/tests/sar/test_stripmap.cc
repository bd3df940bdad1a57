/*
 * stripmap_params and the stripmap raw-echo simulator: echoes against the hand formula
 * in double, chunked streams equal one made at once, derived quantities, bad input.
 */
#include "invalid_argument_check.h"
#include "test_support.h"
#include <gpuradar/kernels/common/constants.h>
#include <gpuradar/kernels/sar/stripmap.h>
#include <cmath>

namespace gpuradar::test {
namespace {

using kernels::speed_of_light;
using kernels::stripmap_params;
namespace sim = kernels::stripmap_sim;
constexpr double pi = 3.14159265358979323846;

stripmap_params small_params()
{
    stripmap_params p;
    p.nrange = 512;
    p.pulse_width_s = 1e-6;
    return p;
}

//! The echo of one target, sample k of the pulse with antenna at y_a, written out.
std::complex<double> hand_echo_at(const stripmap_params& p,
                                  const sim::point_target& t,
                                  double x_a,
                                  double y_a,
                                  double z_a,
                                  int k)
{
    const double R =
        std::sqrt((t.x_m - x_a) * (t.x_m - x_a) + (t.y_m - y_a) * (t.y_m - y_a) +
                  (t.z_m - z_a) * (t.z_m - z_a));
    const double tau = 2 * R / speed_of_light;
    const double t_k = 2 * p.near_range_m / speed_of_light + k / p.fs_hz;
    if (std::abs(t_k - tau) > p.pulse_width_s / 2)
        return 0.0;
    const double lambda = speed_of_light / p.fc_hz;
    const double theta = std::asin((t.y_m - y_a) / R);
    const double u = p.antenna_length_m * std::sin(theta - p.squint_rad) / lambda;
    const double g = u == 0 ? 1.0 : std::sin(pi * u) / (pi * u);
    const double K = (p.up_chirp ? 1 : -1) * p.bandwidth_hz / p.pulse_width_s;
    // Carrier phase reduced in long double: 4 pi fc R / c is ~1e6 rad here.
    const long double turns = 2.0L * R * p.fc_hz / speed_of_light;
    const double frac = static_cast<double>(turns - std::floor(turns));
    return t.amplitude * g * g *
           std::polar(1.0, pi * K * (t_k - tau) * (t_k - tau) - 2 * pi * frac);
}

std::complex<double>
hand_echo(const stripmap_params& p, const sim::point_target& t, double y_a, int k)
{
    return hand_echo_at(p, t, 0.0, y_a, p.altitude_m, k);
}

TEST(Stripmap, EchoDelayAndPhaseMatchTheHandFormula)
{
    for (bool up : { true, false }) {
        auto p = small_params();
        p.up_chirp = up;
        p.squint_rad = 0.1;
        const sim::point_target t{
            7535.0, 810.0, 5.0, { 0.8, -0.3 }
        }; // in the squinted beam
        const std::size_t first = 10, n = 5;
        const double y0 = -3.0;
        const auto raw = sim::simulate(p, { t }, first, n, y0);
        ASSERT_EQ(raw.size(), n * p.nrange);
        double worst = 0, energy = 0;
        for (std::size_t j = 0; j < n; ++j) {
            const double y_a = y0 + double(first + j) * p.velocity_mps / p.prf_hz;
            for (int k = 0; k < int(p.nrange); ++k) {
                const auto ref = hand_echo(p, t, y_a, k);
                worst = std::max(
                    worst, std::abs(std::complex<double>(raw[j * p.nrange + k]) - ref));
                energy += std::norm(ref);
            }
        }
        EXPECT_GT(energy, 100.0); // the echo lies inside the window
        EXPECT_LT(worst, 2e-6) << "up_chirp=" << up;
    }
}

TEST(Stripmap, EchoPeaksWhereTheDelaySaysAfterMatchedFilter)
{
    // The correlation of the raw pulse with the chirp peaks at the sample of 2R/c.
    auto p = small_params();
    const sim::point_target t{ 7739.0, 0.0, 0.0, { 1.0, 0.0 } };
    const auto raw = sim::simulate(p, { t }, 0, 1);
    const double R = std::hypot(t.x_m, p.altitude_m);
    const double expected = (R - p.near_range_m) / p.range_spacing_m();
    const double K = p.chirp_rate_hz_per_s();
    const int half = int(p.pulse_width_s * p.fs_hz / 2);
    double best = -1;
    int best_k = -1;
    for (int k = 0; k < int(p.nrange); ++k) {
        std::complex<double> acc = 0;
        for (int m = -half; m <= half; ++m) {
            const int s = k + m;
            if (s < 0 || s >= int(p.nrange))
                continue;
            const double dt = m / p.fs_hz;
            acc += std::complex<double>(raw[s]) * std::polar(1.0, -pi * K * dt * dt);
        }
        if (std::abs(acc) > best) {
            best = std::abs(acc);
            best_k = k;
        }
    }
    EXPECT_LE(std::abs(best_k - expected), 0.5);
}

TEST(Stripmap, ChunkedStreamEqualsWhole)
{
    auto p = small_params();
    const std::vector<sim::point_target> targets{ { 7200.0, 1.0, 0.0, { 1.0, 0.5 } },
                                                  { 7600.0, 3.0, 0.0, { 0.2, 0.0 } } };
    const auto whole = sim::simulate(p, targets, 100, 12, 2.0, 0.3, 7);
    auto a = sim::simulate(p, targets, 100, 5, 2.0, 0.3, 7);
    const auto b = sim::simulate(p, targets, 105, 7, 2.0, 0.3, 7);
    a.insert(a.end(), b.begin(), b.end());
    ASSERT_EQ(a.size(), whole.size());
    for (std::size_t i = 0; i < a.size(); ++i)
        ASSERT_EQ(a[i], whole[i]) << i;
    // A different seed changes the noise; noise power is 2 sigma^2.
    const auto other = sim::simulate(p, {}, 100, 12, 2.0, 0.3, 8);
    const auto noise = sim::simulate(p, {}, 100, 12, 2.0, 0.3, 7);
    double pw = 0;
    std::size_t same = 0;
    for (std::size_t i = 0; i < noise.size(); ++i) {
        pw += std::norm(std::complex<double>(noise[i]));
        same += noise[i] == other[i];
    }
    EXPECT_EQ(same, 0u);
    EXPECT_NEAR(pw / double(noise.size()), 2 * 0.3 * 0.3, 0.02);
}

//! Two-way main lobe test of the hand formula: |L sin(theta - squint) / lambda| < 1.
bool in_main_lobe(const stripmap_params& p, const sim::point_target& t, double y_a)
{
    const double R = std::sqrt(t.x_m * t.x_m + (t.y_m - y_a) * (t.y_m - y_a) +
                               (t.z_m - p.altitude_m) * (t.z_m - p.altitude_m));
    const double lambda = speed_of_light / p.fc_hz;
    const double theta = std::asin((t.y_m - y_a) / R);
    return std::abs(p.antenna_length_m * std::sin(theta - p.squint_rad) / lambda) < 1.0;
}

//! Cells inside / outside the main lobe over the pulses of one comparison.
struct lobe_counts {
    std::size_t inside = 0, outside = 0;
};

/*!
 * simulate(p, {extra}, g, first, n) against the hand formula summed over `extra` (whole
 * pattern) and every cell of g inside the main lobe, sample by sample.
 */
lobe_counts expect_scene_matches_hand(const stripmap_params& p,
                                      const sim::reflectivity_grid& g,
                                      const sim::point_target& extra,
                                      std::size_t first,
                                      std::size_t n)
{
    const auto raw = sim::simulate(p, { extra }, g, first, n, 0.0);
    EXPECT_EQ(raw.size(), n * p.nrange);
    lobe_counts counts;
    double worst = 0, energy = 0;
    for (std::size_t j = 0; j < n; ++j) {
        const double y_a = double(first + j) * p.velocity_mps / p.prf_hz;
        std::vector<std::complex<double>> ref(p.nrange);
        for (int k = 0; k < int(p.nrange); ++k)
            ref[k] = hand_echo(p, extra, y_a, k);
        for (std::size_t c = 0; c < g.reflectivity.size(); ++c) {
            const sim::point_target cell{ g.x0_m + double(c % g.nx) * g.spacing_m,
                                          g.y0_m + double(c / g.nx) * g.spacing_m,
                                          0.0,
                                          std::complex<double>(g.reflectivity[c]) };
            const bool in = in_main_lobe(p, cell, y_a);
            (in ? counts.inside : counts.outside) += 1;
            if (in)
                for (int k = 0; k < int(p.nrange); ++k)
                    ref[k] += hand_echo(p, cell, y_a, k);
        }
        for (int k = 0; k < int(p.nrange); ++k) {
            worst = std::max(
                worst, std::abs(std::complex<double>(raw[j * p.nrange + k]) - ref[k]));
            energy += std::norm(ref[k]);
        }
    }
    EXPECT_GT(energy, 10.0);
    EXPECT_LT(worst, 1e-5);
    return counts;
}

TEST(Stripmap, SceneCellsAreMainLobeScatterersAtTheirCentres)
{
    auto p = small_params();
    // Rows at y 10, 135, 260 m: the main lobe's edge (first null) lies near 254-257 m
    // from the antenna, so the last row does not echo.
    sim::reflectivity_grid g;
    g.nx = 2;
    g.x0_m = 7535.0;
    g.y0_m = 10.0;
    g.spacing_m = 125.0;
    g.reflectivity = { { 1.0f, 0.5f },  { -0.3f, 0.2f }, { 0.7f, 0.0f },
                       { 0.0f, -0.9f }, { 0.4f, 0.4f },  { -1.0f, 0.1f } };
    const sim::point_target extra{ 7600.0, 20.0, 0.0, { 0.5, 0.0 } };
    const auto counts = expect_scene_matches_hand(p, g, extra, 3, 4);
    EXPECT_GT(counts.inside, 0u);
    EXPECT_GT(counts.outside, 0u);
    // The scene is not ignored: without it only the extra target remains.
    const auto with = sim::simulate(p, { extra }, g, 3, 4, 0.0);
    const auto without = sim::simulate(p, { extra }, 3, 4, 0.0);
    double diff = 0;
    for (std::size_t i = 0; i < with.size(); ++i)
        diff += std::norm(std::complex<double>(with[i] - without[i]));
    EXPECT_GT(diff, 1.0);
}

TEST(Stripmap, SceneRowsOutsideTheMainLobeAreSkippedExactly)
{
    // Squinted beam, a grid reaching far along track (201 rows every 10 m), pulses
    // (antenna at 0 m and 750 m) whose main lobe covers a few rows: the rows
    // the simulator skips without testing each cell must be exactly those with no cell
    // inside the main lobe, at either edge, for both signs of squint.
    for (double squint : { 0.2, -0.3 }) {
        auto p = small_params();
        p.squint_rad = squint;
        sim::reflectivity_grid g;
        g.nx = 3;
        g.x0_m = 7300.0;
        // The beam centre lies rho tan(squint) along track from the antenna (rho about
        // 7.9 km here); the grid runs from 600 m behind it to 1400 m ahead.
        g.y0_m = std::hypot(7300.0, p.altitude_m) * std::tan(squint) - 600.0;
        g.spacing_m = 10.0;
        for (int c = 0; c < 3 * 201; ++c)
            g.reflectivity.emplace_back(0.2f + 0.01f * float(c % 7), 0.1f * float(c % 3));
        const sim::point_target extra{ 7400.0, g.y0_m + 700.0, 0.0, { 0.5, 0.0 } };
        for (std::size_t first : { std::size_t(0), std::size_t(5000) }) {
            SCOPED_TRACE("squint " + std::to_string(squint) + ", first pulse " +
                         std::to_string(first));
            const auto counts = expect_scene_matches_hand(p, g, extra, first, 3);
            EXPECT_GT(counts.inside, 3u);
            EXPECT_GT(counts.outside, counts.inside);
        }
    }
}

TEST(Stripmap, BadSceneIsNamed)
{
    const auto p = small_params();
    const auto check = [&](auto change, const char* name) {
        sim::reflectivity_grid g;
        g.nx = 2;
        g.reflectivity.assign(6, { 1.0f, 0.0f });
        change(g);
        expect_invalid([&] { g.validate("stripmap_sim"); }, name);
        expect_invalid([&] { sim::simulate(p, {}, g, 0, 1); }, name);
    };
    check([](sim::reflectivity_grid& g) { g.nx = 0; }, "scene_nx");
    check([](sim::reflectivity_grid& g) { g.nx = 4; }, "scene_nx");
    check([](sim::reflectivity_grid& g) { g.spacing_m = 0; }, "scene_spacing");
    check([](sim::reflectivity_grid& g) { g.spacing_m = NAN; }, "scene_spacing");
    check([](sim::reflectivity_grid& g) { g.x0_m = INFINITY; }, "scene_x0");
    check([](sim::reflectivity_grid& g) { g.y0_m = NAN; }, "scene_y0");
    check(
        [](sim::reflectivity_grid& g) {
            g.reflectivity[4] = { 0.0f, NAN };
        },
        "scene_reflectivity[4]");
    EXPECT_NO_THROW(sim::reflectivity_grid{}.validate("stripmap_sim")); // no scene
}

TEST(Stripmap, DerivedQuantities)
{
    auto p = small_params();
    p.squint_rad = 0.2;
    const double lambda = speed_of_light / p.fc_hz;
    EXPECT_DOUBLE_EQ(p.wavelength_m(), lambda);
    EXPECT_DOUBLE_EQ(p.chirp_rate_hz_per_s(), p.bandwidth_hz / p.pulse_width_s);
    p.up_chirp = false;
    EXPECT_DOUBLE_EQ(p.chirp_rate_hz_per_s(), -p.bandwidth_hz / p.pulse_width_s);
    EXPECT_DOUBLE_EQ(p.range_spacing_m(), speed_of_light / (2 * p.fs_hz));
    EXPECT_NEAR(
        p.doppler_centroid_hz(), 2 * p.velocity_mps * std::sin(0.2) / lambda, 1e-9);
    EXPECT_NEAR(
        p.doppler_bandwidth_hz(), 0.886 * 2 * p.velocity_mps / p.antenna_length_m, 1e-9);
    // Small beam: aperture ~ R beam / cos^2(squint) metres.
    const double R = 9000, beam = 0.886 * lambda / p.antenna_length_m;
    EXPECT_NEAR(p.aperture_pulses(R),
                R * beam / std::pow(std::cos(0.2), 2) * p.prf_hz / p.velocity_mps,
                1e-3 * p.aperture_pulses(R));
    EXPECT_DOUBLE_EQ(p.centre_range_m(),
                     p.near_range_m + 0.5 * double(p.nrange - 1) * p.range_spacing_m());
    const auto za = sim::closest_approach(p, { 3000.0, 12.0, 100.0, { 1, 0 } });
    EXPECT_DOUBLE_EQ(za.range_m, std::hypot(3000.0, 100.0 - p.altitude_m));
    EXPECT_DOUBLE_EQ(za.y_m, 12.0);
}

TEST(Stripmap, BadParametersAreNamed)
{
    const auto check = [](auto change, const char* name) {
        auto p = small_params();
        change(p);
        expect_invalid([&] { p.validate("stripmap"); }, name, "gpuradar::stripmap");
        expect_invalid([&] { sim::simulate(p, {}, 0, 1); }, name);
    };
    check([](stripmap_params& p) { p.prf_hz = 0; }, "prf_hz");
    check([](stripmap_params& p) { p.prf_hz = -5; }, "prf_hz");
    check([](stripmap_params& p) { p.velocity_mps = 0; }, "velocity_mps");
    check([](stripmap_params& p) { p.bandwidth_hz = -1; }, "bandwidth_hz");
    check([](stripmap_params& p) { p.bandwidth_hz = 2 * p.fs_hz; }, "bandwidth_hz");
    check([](stripmap_params& p) { p.pulse_width_s = 0; }, "pulse_width_s");
    check([](stripmap_params& p) { p.fs_hz = NAN; }, "fs_hz");
    check([](stripmap_params& p) { p.fc_hz = 0; }, "fc_hz");
    check([](stripmap_params& p) { p.antenna_length_m = 0; }, "antenna_length_m");
    check([](stripmap_params& p) { p.pulse_width_s = 1e-5; }, "range window");
    check([](stripmap_params& p) { p.squint_rad = 0.36; }, "squint_rad");
    check([](stripmap_params& p) { p.squint_rad = -0.4; }, "squint_rad");
    check([](stripmap_params& p) { p.prf_hz = 200; }, "Doppler bandwidth");
    check([](stripmap_params& p) { p.nrange = 1; }, "nrange");
    check([](stripmap_params& p) { p.near_range_m = 100; }, "near_range_m");
    check([](stripmap_params& p) { p.altitude_m = -1; }, "altitude_m");
    // The limits themselves are allowed.
    auto p = small_params();
    p.squint_rad = kernels::max_squint_rad;
    p.prf_hz = p.doppler_bandwidth_hz();
    EXPECT_NO_THROW(p.validate());
    expect_invalid([&] { sim::simulate(p, {}, 0, 1, 0.0, -1.0); }, "noise_sigma");
}

sim::motion_errors sinusoidal_errors()
{
    sim::motion_errors m;
    m.velocity_error_mps = 0.3;
    m.cross_track.sinusoids = { { 0.02, 0.7, 0.4 }, { 0.005, 0.13, -1.0 } };
    m.vertical.sinusoids = { { 0.01, 1.1, 0.2 } };
    return m;
}

TEST(StripmapMotion, EchoesComeFromTheTrueTrackTheModelGives)
{
    const auto p = small_params();
    const sim::point_target t{ 7535.0, 60.0, 5.0, { 0.8, -0.3 } };
    const auto m = sinusoidal_errors();
    sim::track_errors e(p, m);
    const std::size_t first = 300, n = 6;
    const auto raw = sim::simulate(p, { t }, {}, first, n, 0.0, 0.0, 1, &e);
    const auto nominal = sim::simulate(p, { t }, first, n, 0.0);
    double worst = 0, energy = 0, moved = 0;
    for (std::size_t j = 0; j < n; ++j) {
        const double ti = double(first + j) / p.prf_hz;
        // measured (nominal) - true = e; cross track is -x, vertical +z
        const double cross = 0.02 * std::sin(2 * pi * ti / 0.7 + 0.4) +
                             0.005 * std::sin(2 * pi * ti / 0.13 - 1.0);
        const double up = 0.01 * std::sin(2 * pi * ti / 1.1 + 0.2);
        const double x = cross, y = ti * p.velocity_mps - 0.3 * ti, z = p.altitude_m - up;
        const auto pos = e.true_position(first + j, ti * p.velocity_mps);
        EXPECT_NEAR(pos[0], x, 1e-12);
        EXPECT_NEAR(pos[1], y, 1e-9);
        EXPECT_NEAR(pos[2], z, 1e-12);
        for (int k = 0; k < int(p.nrange); ++k) {
            const auto ref = hand_echo_at(p, t, x, y, z, k);
            const auto got = std::complex<double>(raw[j * p.nrange + k]);
            worst = std::max(worst, std::abs(got - ref));
            moved = std::max(
                moved, std::abs(got - std::complex<double>(nominal[j * p.nrange + k])));
            energy += std::norm(ref);
        }
    }
    EXPECT_GT(energy, 100.0);
    EXPECT_LT(worst, 2e-6);
    EXPECT_GT(moved, 0.5); // centimetres at X band: radians of phase
}

TEST(StripmapMotion, OffOrZeroIsTheNominalPassBitForBit)
{
    const auto p = small_params();
    const std::vector<sim::point_target> t{ { 7535.0, 30.0, 0.0, { 1.0, 0.0 } } };
    const auto plain = sim::simulate(p, t, 0, 40, -2.0, 0.1, 9);
    sim::motion_errors zero;
    zero.cross_track.sinusoids = { { 0.0, 1.0, 0.0 } };
    EXPECT_FALSE(zero.any());
    EXPECT_TRUE(sinusoidal_errors().any());
    sim::track_errors e(p, zero);
    EXPECT_EQ(sim::simulate(p, t, {}, 0, 40, -2.0, 0.1, 9, &e), plain);
    EXPECT_EQ(sim::simulate(p, t, {}, 0, 40, -2.0, 0.1, 9, nullptr), plain);
}

TEST(StripmapMotion, RandomPartsHaveTheirStatisticsAndStreamInChunks)
{
    auto p = small_params();
    sim::motion_errors m;
    m.cross_track.random_walk = 0.05; // m / sqrt(s)
    m.vertical.white_m = 0.002;
    m.seed = 4;
    sim::track_errors e(p, m);
    const std::size_t n = 20000;
    std::vector<double> cross(n), up(n);
    for (std::size_t i = 0; i < n; ++i) {
        const auto v = e.at(i);
        EXPECT_EQ(v[0], 0.0);
        cross[i] = v[1];
        up[i] = v[2];
    }
    EXPECT_EQ(cross[0], 0.0); // the walk starts at 0
    double s2 = 0, u2 = 0, um = 0;
    for (std::size_t i = 1; i < n; ++i)
        s2 += (cross[i] - cross[i - 1]) * (cross[i] - cross[i - 1]);
    for (double u : up) {
        um += u;
        u2 += u * u;
    }
    // Step variance sigma^2 / PRF, white variance; 4 standard errors (n = 2e4: 4 %).
    EXPECT_NEAR(s2 / (n - 1), 0.05 * 0.05 / p.prf_hz, 0.04 * 0.05 * 0.05 / p.prf_hz);
    EXPECT_NEAR(u2 / n, 0.002 * 0.002, 0.04 * 0.002 * 0.002);
    EXPECT_NEAR(um / n, 0.0, 4 * 0.002 / std::sqrt(double(n)));
    // Asked again (earlier pulses: the walk restarts) or by another object: the same.
    sim::track_errors again(p, m);
    for (std::size_t i : { std::size_t(5), std::size_t(19999), std::size_t(3) }) {
        const auto a = e.at(i), b = again.at(i);
        EXPECT_EQ(a[1], cross[i]);
        EXPECT_EQ(b[1], cross[i]);
        EXPECT_EQ(a[2], up[i]);
    }
    // Pulses simulated in chunks equal pulses simulated at once.
    const std::vector<sim::point_target> t{ { 7535.0, 30.0, 0.0, { 1.0, 0.0 } } };
    sim::track_errors whole(p, m), chunks(p, m);
    const auto all = sim::simulate(p, t, {}, 0, 30, 0.0, 0.0, 1, &whole);
    auto a = sim::simulate(p, t, {}, 0, 12, 0.0, 0.0, 1, &chunks);
    const auto b = sim::simulate(p, t, {}, 12, 18, 0.0, 0.0, 1, &chunks);
    a.insert(a.end(), b.begin(), b.end());
    EXPECT_EQ(a, all);
}

TEST(StripmapMotion, BadErrorsAreNamed)
{
    const auto p = small_params();
    const auto check = [&](auto change, const char* name) {
        sim::motion_errors m;
        change(m);
        expect_invalid([&] { m.validate("stripmap_source"); }, name);
        expect_invalid([&] { sim::track_errors(p, m); }, name);
    };
    check([](sim::motion_errors& m) { m.velocity_error_mps = NAN; },
          "motion_velocity_error");
    check(
        [](sim::motion_errors& m) {
            m.cross_track.sinusoids = { { -1.0, 1.0, 0.0 } };
        },
        "cross_track_amplitude");
    check(
        [](sim::motion_errors& m) {
            m.vertical.sinusoids = { { 1.0, 0.0, 0.0 } };
        },
        "vertical_period");
    check(
        [](sim::motion_errors& m) {
            m.vertical.sinusoids = { { 1.0, 1.0, INFINITY } };
        },
        "vertical_phase");
    check([](sim::motion_errors& m) { m.cross_track.random_walk = -1; },
          "cross_track_walk");
    check([](sim::motion_errors& m) { m.vertical.white_m = NAN; }, "vertical_noise");
}

} // namespace
} // namespace gpuradar::test
