/*
 * monopulse: exact angles without noise, and at 20 dB per-channel SNR on a ULA an RMS
 * error within 1.5x of the Cramer-Rao bound of the whole array (derived here from the
 * geometry), with a reported standard deviation that matches the observed spread.
 */
#include "invalid_argument_check.h"
#include "test_support.h"
#include <gpuradar/kernels/array/monopulse.h>

namespace gpuradar::test {
namespace {

using kernels::monopulse;
using kernels::window_spec;
using cdouble = std::complex<double>;

constexpr double pi = 3.14159265358979323846;
constexpr std::size_t nch = 16;
constexpr double spacing_wl = 0.5;

//! The centred ULA's element x positions in wavelengths, written from its definition.
double element_x_wl(std::size_t n) { return (double(n) - 0.5 * (nch - 1)) * spacing_wl; }

/*
 * Cramer-Rao bound (radians) of theta for one snapshot x_n = A exp(j k x_n sin theta) +
 * noise of power sigma2, A unknown: 1 / J with J = 2 |A|^2 / sigma2 (||da||^2 -
 * |a^H da|^2 / N), da_n = j k x_n cos theta a_n; a^H da = 0 for the centred array.
 */
double crb_std_rad(double theta, double snr_per_channel)
{
    double sum_kx2 = 0;
    for (std::size_t n = 0; n < nch; ++n)
        sum_kx2 += std::pow(2 * pi * element_x_wl(n), 2);
    const double j = 2 * snr_per_channel * sum_kx2 * std::pow(std::cos(theta), 2);
    return 1 / std::sqrt(j);
}

struct array_setup {
    std::vector<double> angles = kernels::beam_fan_deg(16, -45, 45);
    std::vector<cfloat> weights;
    std::unique_ptr<monopulse> mp;
    std::unique_ptr<kernels::beamformer> bf;
    explicit array_setup(const window_spec& taper)
    {
        const auto el = kernels::ula_positions(nch, spacing_wl, 1.0);
        weights = kernels::beamformer_weights(el, 1.0, angles, taper);
        mp = std::make_unique<monopulse>(el, 1.0, weights, angles);
        bf = kernels::beamformer::make(
            kernels::backend::cpu, nch, angles.size(), 1, weights);
    }
};

//! ntrials snapshots of a wave from theta_deg with amplitude `amp` (random phase) plus
//! unit-power channel noise (none when noisy is false), one item each.
std::vector<cfloat> snapshots(
    double theta_deg, double amp, std::size_t ntrials, bool noisy, std::uint32_t seed)
{
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> phase(0, 2 * pi);
    std::normal_distribution<double> g(0, std::sqrt(0.5));
    std::vector<cfloat> x(ntrials * nch);
    const double u = std::sin(theta_deg * pi / 180);
    for (std::size_t t = 0; t < ntrials; ++t) {
        const double phi = phase(rng);
        for (std::size_t n = 0; n < nch; ++n) {
            cdouble v = std::polar(amp, phi + 2 * pi * element_x_wl(n) * u);
            if (noisy)
                v += cdouble(g(rng), g(rng));
            x[t * nch + n] = cfloat(v);
        }
    }
    return x;
}

//! Which estimate a test checks: from the complex beam outputs, or from their powers.
enum class input { complex, powers };

//! |y|^2 of each beam output: what a square-law range-Doppler map holds.
std::vector<float> powers_of(const std::vector<cfloat>& y)
{
    std::vector<float> p(y.size());
    for (std::size_t i = 0; i < y.size(); ++i)
        p[i] = std::norm(y[i]);
    return p;
}

//! The estimate of one snapshot's nbeams outputs y (powers p), unit channel noise.
kernels::angle_estimate
estimate_of(const array_setup& s, input in, const cfloat* y, const float* p)
{
    if (in == input::complex)
        return s.mp->estimate(y, 1.0);
    // Beam 0's noise power: unit channel noise times the beam's noise gain.
    double gain = 0;
    for (std::size_t n = 0; n < nch; ++n)
        gain += std::norm(s.weights[n]);
    return s.mp->estimate_from_powers(p, 0, gain);
}

//! Without noise the estimate is the truth, from the group of beams around it.
void expect_exact_without_noise(input in, std::uint32_t seed, double tol_deg)
{
    for (const auto& taper :
         { window_spec::make("rectangular"), window_spec::make("taylor", 4, 30.0) }) {
        array_setup s(taper);
        for (double theta : { -44.0, -20.3, -3.0, 0.0, 7.7, 11.9, 38.5 }) {
            // A signal far above the noise the estimator is told of (1e6 x): the noise
            // terms are negligible.
            const auto x = snapshots(theta, 1e3, 1, false, seed);
            std::vector<cfloat> y(s.angles.size());
            s.bf->run(x.data(), y.data(), 1);
            const auto p = powers_of(y);
            const auto e = estimate_of(s, in, y.data(), p.data());
            EXPECT_NEAR(e.angle_deg, theta, tol_deg) << kernels::to_string(taper.type);
            // The group of three beams around the target was used (fan spacing 6 deg).
            EXPECT_LE(s.angles[e.beam] - 3.0, theta);
            EXPECT_GE(s.angles[e.beam + 2] + 3.0, theta);
        }
    }
}

/*!
 * At 20 dB per channel: RMS error within 1.5x the whole array's bound (and not below
 * 0.9x, the RMS's sampling error), the reported std matching the spread. Returns the
 * mean reported std per (taper, angle) case.
 */
std::vector<double> expect_rms_within_bound(input in, std::uint32_t seed)
{
    const double snr = 100.0; // 20 dB per channel, unit noise power
    const std::size_t ntrials = 1500;
    std::vector<double> mean_std;
    for (const auto& taper :
         { window_spec::make("rectangular"), window_spec::make("taylor", 4, 30.0) }) {
        array_setup s(taper);
        const std::size_t nb = s.angles.size();
        for (double theta : { 10.0, -21.0, 31.0 }) {
            const auto x = snapshots(theta, std::sqrt(snr), ntrials, true, seed++);
            std::vector<cfloat> y(ntrials * nb);
            s.bf->run(x.data(), y.data(), ntrials);
            const auto p = powers_of(y);
            double se = 0, reported = 0;
            for (std::size_t t = 0; t < ntrials; ++t) {
                const auto e = estimate_of(s, in, y.data() + t * nb, p.data() + t * nb);
                se += std::pow(e.angle_deg - theta, 2);
                reported += e.std_deg;
            }
            const double rms = std::sqrt(se / ntrials);
            const double crb = crb_std_rad(theta * pi / 180, snr) * 180 / pi;
            const auto what = std::string(kernels::to_string(taper.type)) + " at " +
                              std::to_string(theta) + " deg";
            EXPECT_LE(rms, 1.5 * crb) << what << ": rms " << rms << " crb " << crb;
            // No estimator beats the bound by more than the sampling error of the RMS.
            EXPECT_GE(rms, 0.9 * crb) << what;
            // The reported std describes the observed spread.
            EXPECT_NEAR(reported / ntrials / rms, 1.0, 0.15) << what;
            mean_std.push_back(reported / ntrials);
        }
    }
    return mean_std;
}

TEST(MonopulseCpu, test_001_noise_free_angles_are_exact)
{
    expect_exact_without_noise(input::complex, 1, 1e-4);
}

TEST(MonopulseCpu, test_002_rms_error_within_1p5_crb_at_20db)
{
    expect_rms_within_bound(input::complex, 10);
}

TEST(MonopulseCpu, test_004_powers_alone_give_exact_noise_free_angles)
{
    expect_exact_without_noise(input::powers, 2, 1e-3);
}

TEST(MonopulseCpu, test_005_powers_rms_error_within_1p5_crb_at_20db)
{
    // The centred ULA with a symmetric taper: the beams' patterns are real, so the
    // powers keep all the angle information at high SNR (monopulse.h): the RMS error
    // from powers meets the same bound, and the reported std (the amplitudes' Fisher
    // information) equals the complex estimator's on the same snapshots.
    const auto from_powers = expect_rms_within_bound(input::powers, 10);
    const auto from_complex = expect_rms_within_bound(input::complex, 10);
    for (std::size_t i = 0; i < from_powers.size(); ++i)
        EXPECT_NEAR(from_powers[i] / from_complex[i], 1.0, 0.02) << "case " << i;
}

TEST(MonopulseCpu, test_003_bad_parameters_name_themselves)
{
    const auto el = kernels::ula_positions(4, 0.5, 1.0);
    const auto w2 = kernels::beamformer_weights(el, 1.0, { -10.0, 10.0 }, {});
    expect_invalid(
        [&] {
            monopulse(el, 1.0, { w2.begin(), w2.begin() + 4 }, { 0.0 });
        },
        "beam_angles_deg");
    expect_invalid([&] { monopulse(el, 1.0, w2, { 10.0, -10.0 }); }, "beam_angles_deg");
    expect_invalid(
        [&] {
            monopulse(el, 1.0, { w2.begin(), w2.begin() + 6 }, { -10.0, 10.0 });
        },
        "weights");
    const monopulse mp(el, 1.0, w2, { -10.0, 10.0 });
    const std::vector<cfloat> y = { cfloat(1, 0), cfloat(0.5f, 0) };
    expect_invalid([&] { mp.estimate(y.data(), 0.0); }, "noise_power");
    const std::vector<float> p = { 1.0f, 0.25f };
    expect_invalid([&] { mp.estimate_from_powers(p.data(), 0, -1.0); },
                   "beam_noise_power");
    expect_invalid([&] { mp.estimate_from_powers(p.data(), 2, 1.0); }, "noise_beam");
}

} // namespace
} // namespace gpuradar::test
