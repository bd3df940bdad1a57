/*
 * Elevation for planar arrays: the direction geometry (elevation 0 is the azimuth-only
 * geometry bit for bit), the URA, beams steered in azimuth and elevation, and the grid
 * monopulse: exact directions without noise, and at 20 dB per channel on an 8 x 4 URA
 * RMS azimuth and elevation errors within 1.5x of the whole array's Cramer-Rao bound
 * (derived here from the geometry, both angles and the amplitude unknown) with reported
 * standard deviations that match the spread.
 */
#include "invalid_argument_check.h"
#include "test_support.h"
#include <gpuradar/kernels/array/monopulse.h>

namespace gpuradar::test {
namespace {

using kernels::beam_directions;
using kernels::grid_monopulse;
using kernels::window_spec;
using cdouble = std::complex<double>;

constexpr double pi = 3.14159265358979323846;
constexpr double deg = pi / 180;
constexpr std::size_t nx = 8, nz = 4, nch = nx * nz;

//! Element n = iz nx + ix of the centred half-wavelength URA in the x-z plane
//! (wavelengths), written from its definition.
std::array<double, 3> element_wl(std::size_t n)
{
    return { (double(n % nx) - 0.5 * (nx - 1)) * 0.5,
             0.0,
             (double(n / nx) - 0.5 * (nz - 1)) * 0.5 };
}

//! u(az, el) and its derivatives, from the convention (boresight +y, el towards +z).
std::array<double, 3> u_of(double az, double el)
{
    return { std::sin(az) * std::cos(el), std::cos(az) * std::cos(el), std::sin(el) };
}
std::array<double, 3> du_daz(double az, double el)
{
    return { std::cos(az) * std::cos(el), -std::sin(az) * std::cos(el), 0.0 };
}
std::array<double, 3> du_del(double az, double el)
{
    return { -std::sin(az) * std::sin(el), -std::cos(az) * std::sin(el), std::cos(el) };
}

double dot(const std::array<double, 3>& a, const std::array<double, 3>& b)
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/*
 * Cramer-Rao bounds (radians) of azimuth and elevation for one snapshot
 * x_n = A a_n + noise (power 1 per channel), a_n = exp(j 2 pi p_n . u), A unknown:
 * J_ij = 2 |A|^2 Re(d_i^H P d_j), d_i = da/d(angle i), P the projection orthogonal to
 * a (the amplitude's nuisance); the bounds are the diagonal of J^-1.
 */
std::pair<double, double> crb_rad(double az, double el, double snr)
{
    std::vector<cdouble> a(nch), d1(nch), d2(nch);
    for (std::size_t n = 0; n < nch; ++n) {
        const auto p = element_wl(n);
        a[n] = std::polar(1.0, 2 * pi * dot(p, u_of(az, el)));
        d1[n] = cdouble(0, 2 * pi * dot(p, du_daz(az, el))) * a[n];
        d2[n] = cdouble(0, 2 * pi * dot(p, du_del(az, el))) * a[n];
    }
    const auto inner = [&](const std::vector<cdouble>& x, const std::vector<cdouble>& y) {
        cdouble s = 0;
        for (std::size_t n = 0; n < nch; ++n)
            s += std::conj(x[n]) * y[n];
        return s;
    };
    const auto projected = [&](const std::vector<cdouble>& x,
                               const std::vector<cdouble>& y) {
        return (inner(x, y) - inner(x, a) * inner(a, y) / double(nch)).real();
    };
    const double j11 = 2 * snr * projected(d1, d1), j22 = 2 * snr * projected(d2, d2),
                 j12 = 2 * snr * projected(d1, d2);
    const double det = j11 * j22 - j12 * j12;
    return { std::sqrt(j22 / det), std::sqrt(j11 / det) };
}

//! An azimuth fan of 15 beams 6 deg apart (about half the 8-wide beam) times 5
//! elevations 12 deg apart (about half the 4-high beam).
struct grid_setup {
    std::vector<double> az = kernels::beam_fan_deg(15, -42, 42);
    std::vector<double> el = kernels::beam_fan_deg(5, -24, 24);
    beam_directions beams = kernels::beam_grid_deg(az, el);
    std::vector<cfloat> weights;
    std::unique_ptr<grid_monopulse> mp;
    std::unique_ptr<kernels::beamformer> bf;
    explicit grid_setup(const window_spec& taper)
    {
        const auto elements = kernels::ura_positions(nx, nz, 0.5, 0.5, 1.0);
        weights = kernels::steering_weights(
            elements, 1.0, beams, kernels::ura_taper(taper, nx, nz));
        mp = std::make_unique<grid_monopulse>(elements, 1.0, weights, beams);
        bf = kernels::beamformer::make(
            kernels::backend::cpu, nch, beams.azimuths_deg.size(), 1, weights);
    }
    std::size_t nbeams() const { return beams.azimuths_deg.size(); }
    //! Beam b's noise power for unit channel noise.
    double beam_noise(std::size_t b) const
    {
        double g = 0;
        for (std::size_t n = 0; n < nch; ++n)
            g += std::norm(weights[b * nch + n]);
        return g;
    }
};

//! ntrials snapshots of a wave from (az, el) degrees with amplitude `amp` (random
//! phase) plus unit-power channel noise when noisy; then the beams' powers.
std::vector<float> beam_powers(const grid_setup& s,
                               double az_deg,
                               double el_deg,
                               double amp,
                               std::size_t ntrials,
                               bool noisy,
                               std::uint32_t seed)
{
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> phase(0, 2 * pi);
    std::normal_distribution<double> g(0, std::sqrt(0.5));
    std::vector<cfloat> x(ntrials * nch);
    const auto u = u_of(az_deg * deg, el_deg * deg);
    for (std::size_t t = 0; t < ntrials; ++t) {
        const double phi = phase(rng);
        for (std::size_t n = 0; n < nch; ++n) {
            cdouble v = std::polar(amp, phi + 2 * pi * dot(element_wl(n), u));
            if (noisy)
                v += cdouble(g(rng), g(rng));
            x[t * nch + n] = cfloat(v);
        }
    }
    std::vector<cfloat> y(ntrials * s.nbeams());
    s.bf->run(x.data(), y.data(), ntrials);
    std::vector<float> p(y.size());
    for (std::size_t i = 0; i < y.size(); ++i)
        p[i] = std::norm(y[i]);
    return p;
}

TEST(ArrayElevation, test_001_elevation_zero_is_the_azimuth_geometry_bit_for_bit)
{
    const kernels::position_m p{ 0.37, -1.25, 0.8 };
    for (double az : { -63.0, -7.5, 0.0, 21.0, 89.0 }) {
        const double old_phase =
            2.0 * pi / 0.03 * (p[0] * std::sin(az * deg) + p[1] * std::cos(az * deg));
        EXPECT_EQ(kernels::arrival_phase_rad(p, 0.03, az * deg), old_phase);
        EXPECT_EQ(kernels::arrival_phase_rad(p, 0.03, az * deg, 0.0), old_phase);
    }
    // Elevation moves the phase by the element's height: straight up, only z counts.
    EXPECT_NEAR(
        kernels::arrival_phase_rad(p, 0.03, 0.3, pi / 2), 2 * pi / 0.03 * 0.8, 1e-9);
    const auto u = kernels::direction_vector(20 * deg, -35 * deg);
    const auto want = u_of(20 * deg, -35 * deg);
    for (int k = 0; k < 3; ++k)
        EXPECT_NEAR(u[k], want[k], 1e-15);
}

TEST(ArrayElevation, test_002_ura_layout_and_beams_steered_in_elevation)
{
    const auto e = kernels::ura_positions(nx, nz, 0.5, 0.5, 2.0);
    ASSERT_EQ(e.size(), nch);
    for (std::size_t n = 0; n < nch; ++n)
        for (int k = 0; k < 3; ++k)
            EXPECT_DOUBLE_EQ(e[n][k], 2.0 * element_wl(n)[k]) << n;
    // Beam-major grid: row r at elevation r, azimuths fastest.
    const auto g = kernels::beam_grid_deg({ -10.0, 0.0, 10.0 }, { -5.0, 15.0 });
    EXPECT_EQ(g.azimuths_deg, (std::vector<double>{ -10, 0, 10, -10, 0, 10 }));
    EXPECT_EQ(g.elevations_deg, (std::vector<double>{ -5, -5, -5, 15, 15, 15 }));
    // A unit wave from each beam's (az, el) gives 1 in that beam; swapped, it does not.
    grid_setup s(window_spec::make("hamming"));
    for (std::size_t b : { 0u, 17u, 37u, 74u }) {
        const double az = s.beams.azimuths_deg[b], el = s.beams.elevations_deg[b];
        const auto p = beam_powers(s, az, el, 1.0, 1, false, 1);
        EXPECT_NEAR(p[b], 1.0, 1e-5) << b;
        if (az != el) {
            const auto q = beam_powers(s, el, az, 1.0, 1, false, 1);
            EXPECT_LT(q[b], 0.9) << b;
        }
    }
}

TEST(ArrayElevation, test_003_noise_free_directions_are_exact_and_not_swapped)
{
    grid_setup s(window_spec::make("rectangular"));
    EXPECT_EQ(s.mp->shape().naz, 15u);
    EXPECT_EQ(s.mp->shape().nel, 5u);
    // Off the beam centres, az != el so that a swap would show.
    for (auto [az, el] : { std::pair{ 9.0, 5.0 },
                           { -17.0, -8.0 },
                           { 31.5, 17.0 },
                           { -2.0, 20.0 },
                           { 40.0, -22.0 } }) {
        const auto p = beam_powers(s, az, el, 1e3, 1, false, 3);
        // The beam steered nearest the target peaks.
        const std::size_t peak = std::max_element(p.begin(), p.end()) - p.begin();
        EXPECT_NEAR(s.beams.azimuths_deg[peak], az, 3.0 + 1e-9);
        EXPECT_NEAR(s.beams.elevations_deg[peak], el, 6.0 + 1e-9);
        const auto e = s.mp->estimate_from_powers(p.data(), 0, s.beam_noise(0));
        ASSERT_TRUE(e.has_azimuth && e.has_elevation);
        EXPECT_NEAR(e.azimuth.angle_deg, az, 1e-3) << az << ", " << el;
        EXPECT_NEAR(e.elevation.angle_deg, el, 1e-3) << az << ", " << el;
        // The groups used surround the strongest beam in its row and column.
        EXPECT_EQ(e.azimuth.beam / 15, peak / 15);
        EXPECT_EQ(e.elevation.beam % 15, peak % 15);
    }
}

TEST(ArrayElevation, test_004_rms_errors_within_1p5_crb_at_20db_per_channel)
{
    const double snr = 100.0; // 20 dB per channel, unit noise power
    const std::size_t ntrials = 600;
    std::uint32_t seed = 40;
    for (const auto& taper : { window_spec::make("rectangular") }) {
        grid_setup s(taper);
        for (auto [az, el] : { std::pair{ 9.0, 5.0 }, { -23.5, -15.0 } }) {
            const auto p = beam_powers(s, az, el, std::sqrt(snr), ntrials, true, seed++);
            double se_az = 0, se_el = 0, std_az = 0, std_el = 0;
            for (std::size_t t = 0; t < ntrials; ++t) {
                const auto e = s.mp->estimate_from_powers(
                    p.data() + t * s.nbeams(), 0, s.beam_noise(0));
                se_az += std::pow(e.azimuth.angle_deg - az, 2);
                se_el += std::pow(e.elevation.angle_deg - el, 2);
                std_az += e.azimuth.std_deg;
                std_el += e.elevation.std_deg;
            }
            const auto [crb_az, crb_el] = crb_rad(az * deg, el * deg, snr);
            const double rms_az = std::sqrt(se_az / ntrials),
                         rms_el = std::sqrt(se_el / ntrials);
            const auto what = "at (" + std::to_string(az) + ", " + std::to_string(el) +
                              "): rms az " + std::to_string(rms_az) + " crb " +
                              std::to_string(crb_az / deg) + ", rms el " +
                              std::to_string(rms_el) + " crb " +
                              std::to_string(crb_el / deg);
            std::cout << what << ", reported " << std_az / ntrials << " / "
                      << std_el / ntrials << "\n";
            EXPECT_LE(rms_az, 1.5 * crb_az / deg) << what;
            EXPECT_LE(rms_el, 1.5 * crb_el / deg) << what;
            // Nothing beats the bound by more than the RMS's sampling error (~3 %).
            EXPECT_GE(rms_az, 0.8 * crb_az / deg) << what;
            EXPECT_GE(rms_el, 0.8 * crb_el / deg) << what;
            EXPECT_NEAR(std_az / ntrials / rms_az, 1.0, 0.2) << what;
            EXPECT_NEAR(std_el / ntrials / rms_el, 1.0, 0.2) << what;
        }
    }
}

TEST(ArrayElevation, test_005_an_azimuth_fan_is_the_1d_monopulse_bit_for_bit)
{
    const auto elements = kernels::ula_positions(8, 0.5, 1.0);
    const auto az = kernels::beam_fan_deg(9, -40, 40);
    const auto w = kernels::beamformer_weights(elements, 1.0, az, window_spec{});
    const kernels::monopulse one(elements, 1.0, w, az);
    const grid_monopulse grid(elements, 1.0, w, { az, std::vector<double>(9, 0.0) });
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> u(0.5f, 40.0f);
    for (int trial = 0; trial < 20; ++trial) {
        std::vector<float> p(9);
        for (auto& v : p)
            v = u(rng);
        const auto a = one.estimate_from_powers(p.data(), trial % 9, 0.7);
        const auto b = grid.estimate_from_powers(p.data(), trial % 9, 0.7);
        EXPECT_TRUE(b.has_azimuth);
        EXPECT_FALSE(b.has_elevation);
        EXPECT_EQ(a.angle_deg, b.azimuth.angle_deg);
        EXPECT_EQ(a.std_deg, b.azimuth.std_deg);
        EXPECT_EQ(a.beam, b.azimuth.beam);
    }
}

TEST(ArrayElevation, test_006_bad_parameters_name_themselves)
{
    expect_invalid([] { kernels::ura_positions(0, 4, 0.5, 0.5, 1.0); }, "nx");
    expect_invalid([] { kernels::ura_positions(4, 0, 0.5, 0.5, 1.0); }, "nz");
    expect_invalid([] { kernels::ura_positions(4, 4, 0.5, -1.0, 1.0); }, "spacing_z_wl");
    expect_invalid([] { kernels::beam_grid_deg({ 0.0 }, { 91.0 }); },
                   "beam_elevations_deg");
    expect_invalid([] { kernels::beam_grid_deg({ 0.0 }, {}); }, "beam_elevations_deg");
    const auto e = kernels::ura_positions(4, 2, 0.5, 0.5, 1.0);
    const std::vector<double> flat(8, 1.0);
    expect_invalid(
        [&] {
            kernels::steering_weights(e, 1.0, { { 0.0, 10.0 }, { 0.0 } }, flat);
        },
        "beam_elevations_deg");
    expect_invalid(
        [&] {
            kernels::steering_weights(e, 1.0, { { 0.0 }, { -90.5 } }, flat);
        },
        "beam_elevations_deg");
    expect_invalid(
        [&] {
            kernels::steering_weights(e, 1.0, { { 0.0 }, { 0.0 } }, { 1.0 });
        },
        "taper");
    expect_invalid([] { kernels::array_taper(window_spec{}, 8, 3); }, "element_rows");
    expect_invalid([] { kernels::array_taper(window_spec{}, 8, 0); }, "element_rows");
    // Beams that form no azimuth x elevation grid.
    const auto w3 = kernels::steering_weights(
        e, 1.0, { { -10.0, 0.0, 10.0 }, { 0.0, 0.0, 5.0 } }, flat);
    expect_invalid(
        [&] {
            grid_monopulse(e, 1.0, w3, { { -10.0, 0.0, 10.0 }, { 0.0, 0.0, 5.0 } });
        },
        "beam_elevations_deg");
    const auto w4 = kernels::steering_weights(
        e, 1.0, { { -10.0, 10.0, -10.0, 12.0 }, { 0.0, 0.0, 5.0, 5.0 } }, flat);
    expect_invalid(
        [&] {
            grid_monopulse(
                e, 1.0, w4, { { -10.0, 10.0, -10.0, 12.0 }, { 0.0, 0.0, 5.0, 5.0 } });
        },
        "beam_elevations_deg");
    // Rows in decreasing elevation: the columns' monopulse cannot order them.
    const auto w5 = kernels::steering_weights(
        e, 1.0, { { -10.0, 10.0, -10.0, 10.0 }, { 5.0, 5.0, 0.0, 0.0 } }, flat);
    expect_invalid(
        [&] {
            grid_monopulse(
                e, 1.0, w5, { { -10.0, 10.0, -10.0, 10.0 }, { 5.0, 5.0, 0.0, 0.0 } });
        },
        "beam_elevations_deg");
}

} // namespace
} // namespace gpuradar::test
