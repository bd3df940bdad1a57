/* ECA-B clutter cancellation: suppression of the direct path and clutter, the residual
 * as the least-squares solution, a moving target's CAF SNR against theory, zero-Doppler
 * targets cancelled, Doppler taps, singular systems and non-finite input survived, the
 * LAPACK solver's row-major convention, several surveillance channels in one run equal
 * to each alone, bad input named, and CUDA against the CPU twin.
 */
#include "../invalid_argument_check.h"
#include "../test_support.h"
#include "passive/cpu/lapack_cholesky.h"
#include <gpuradar/kernels/passive/clutter_cancel.h>
#include <gpuradar/kernels/passive/cross_ambiguity.h>
#include <gtest/gtest.h>
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <random>
#include <vector>

namespace gpuradar::test {
namespace {

using kernels::clutter_cancel;
using kernels::clutter_cancel_params;
using cd = std::complex<double>;
constexpr double two_pi = 6.283185307179586476925286766559;

constexpr std::size_t n_cpi = 24000; // 4 batches of 6000

clutter_cancel_params eca(std::size_t ntaps = 16, std::size_t nbatches = 4)
{
    clutter_cancel_params p;
    p.nsamples = n_cpi;
    p.ntaps = ntaps;
    p.nbatches = nbatches;
    return p;
}

//! s[n] += amp r[n - delay] exp(j 2 pi k n / N) (0 before the reference starts).
void add_echo(std::vector<cfloat>& s,
              const std::vector<cfloat>& r,
              std::size_t delay,
              double k,
              cd amp)
{
    const std::size_t n = r.size();
    for (std::size_t i = delay; i < n; ++i)
        s[i] += cfloat(amp * cd(r[i - delay]) *
                       std::polar(1.0, two_pi * k * double(i) / double(n)));
}

//! The direct path (70 dB above unit noise) and zero-Doppler clutter at delays 1..15.
std::vector<cfloat> interference(const std::vector<cfloat>& r)
{
    std::vector<cfloat> s(r.size());
    add_echo(s, r, 0, 0.0, 3000.0);
    add_echo(s, r, 1, 0.0, cd(300.0, -100.0));
    add_echo(s, r, 3, 0.0, cd(-80.0, 40.0));
    add_echo(s, r, 7, 0.0, cd(0.0, 30.0));
    add_echo(s, r, 12, 0.0, cd(10.0, 10.0));
    add_echo(s, r, 15, 0.0, cd(-5.0, 0.0));
    return s;
}

double mean_power(const std::vector<cfloat>& v)
{
    double p = 0;
    for (const cfloat& x : v)
        p += std::norm(cd(x));
    return p / double(v.size());
}

std::vector<cfloat> cancel(const clutter_cancel_params& p,
                           const std::vector<cfloat>& r,
                           const std::vector<cfloat>& s,
                           kernels::clutter_cancel_result* res = nullptr)
{
    auto c = clutter_cancel::make(kernels::backend::cpu, p);
    std::vector<cfloat> out(s.size(), cfloat(NAN, NAN));
    const auto got = c->run(r.data(), r.size(), s.data(), s.size(), out.data());
    if (res)
        *res = got;
    return out;
}

TEST(ClutterCancelCpu, test_001_direct_path_and_clutter_suppressed_50_db)
{
    const auto r = random_complex(n_cpi, 101);
    const auto s = interference(r);
    kernels::clutter_cancel_result res;
    const auto out = cancel(eca(), r, s, &res);
    EXPECT_GE(res.cancellation_db, 50.0);
    // the report is what the channels hold
    EXPECT_NEAR(res.power_before, mean_power(s), 1e-9 * mean_power(s));
    EXPECT_NEAR(res.power_after, mean_power(out), 1e-9 * res.power_before);
    EXPECT_EQ(res.loaded_batches, 0u);
    EXPECT_EQ(res.nonfinite_samples, 0u);
    // with unit noise the residual is that noise less the fit's K of L degrees of
    // freedom per batch: interference gone to far below the noise
    auto noisy = s;
    const auto noise = random_complex(n_cpi, 102, float(std::sqrt(0.5)));
    for (std::size_t i = 0; i < n_cpi; ++i)
        noisy[i] += noise[i];
    const auto out2 = cancel(eca(), r, noisy, &res);
    const double expected = mean_power(noise) * (1.0 - 16.0 / 6000.0);
    EXPECT_NEAR(res.power_after, expected, 0.005 * expected);
    EXPECT_GT(res.cancellation_db, 65.0);
}

TEST(ClutterCancelCpu, test_002_residual_orthogonal_to_every_column)
{
    // the least-squares optimum, however the normal equations were formed: X_b^H e_b = 0
    for (const bool doppler_taps : { false, true }) {
        auto p = eca(8, 3);
        p.doppler_taps = doppler_taps;
        const auto r = random_complex(n_cpi, 111);
        auto s = random_complex(n_cpi, 112);
        add_echo(s, r, 2, 0.4, 20.0);
        const auto e = cancel(p, r, s);
        const std::size_t l = n_cpi / 3;
        double worst = 0;
        for (std::size_t b = 0; b < 3; ++b)
            for (int q :
                 doppler_taps ? std::vector<int>{ -1, 0, 1 } : std::vector<int>{ 0 })
                for (std::size_t d = 0; d < 8; ++d) {
                    cd dot = 0;
                    double xx = 0, ee = 0;
                    for (std::size_t i = b * l; i < (b + 1) * l; ++i) {
                        const cd x =
                            i >= d ? cd(r[i - d]) *
                                         std::polar(
                                             1.0, two_pi * q * double(i) / double(n_cpi))
                                   : cd(0);
                        dot += std::conj(x) * cd(e[i]);
                        xx += std::norm(x);
                        ee += std::norm(cd(e[i]));
                    }
                    worst = std::max(worst, std::abs(dot) / std::sqrt(xx * ee));
                }
        EXPECT_LT(worst, 1e-5) << "doppler_taps " << doppler_taps;
        EXPECT_GT(mean_power(e), 0.5); // the random surveillance part is kept
    }
}

//! The CAF of one output: M = 64 lags, Doppler -40..40, direct, no window.
std::vector<float> caf(const std::vector<cfloat>& r, const std::vector<cfloat>& s)
{
    kernels::cross_ambiguity_params p;
    p.nsamples = n_cpi;
    p.nrange = 64;
    p.doppler_half = 40;
    p.method = kernels::caf_method::direct;
    auto c = kernels::cross_ambiguity::make(kernels::backend::cpu, p);
    std::vector<float> map(p.nrange * c->ndoppler());
    c->run(r.data(), s.data(), map.data());
    return map;
}

TEST(ClutterCancelCpu, test_003_moving_target_keeps_its_caf_snr)
{
    // SNR theory: |a|^2 E / sigma^2 with E = sum |r[n - m0]|^2 (coherent sum over the
    // CPI against noise of power sigma^2 E per cell). Measured: the target's CAF peak
    // after cancellation over the mean CAF level of the same scene without the target
    // (the canceller is linear), so the target's own sidelobes do not bias the floor.
    const std::size_t m0 = 40;
    const double k0 = 25, a = 0.3, sigma2 = 1.0;
    const auto r = random_complex(n_cpi, 121, float(std::sqrt(0.5)));
    auto background = interference(r);
    const auto noise = random_complex(n_cpi, 122, float(std::sqrt(sigma2 / 2)));
    for (std::size_t i = 0; i < n_cpi; ++i)
        background[i] += noise[i];
    auto scene = background;
    add_echo(scene, r, m0, k0, a);
    const auto map = caf(r, cancel(eca(), r, scene));
    const auto floor_map = caf(r, cancel(eca(), r, background));
    const std::size_t nd = 81;
    const float peak = map[m0 * nd + std::size_t(k0 + 40)];
    EXPECT_EQ(std::size_t(std::max_element(map.begin(), map.end()) - map.begin()),
              m0 * nd + std::size_t(k0 + 40));
    double floor = 0;
    for (float v : floor_map)
        floor += v;
    floor /= double(floor_map.size());
    double e = 0;
    for (std::size_t i = m0; i < n_cpi; ++i)
        e += std::norm(cd(r[i - m0]));
    const double theory_db = 10.0 * std::log10(a * a * e / sigma2);
    const double measured_db = 10.0 * std::log10(peak / floor);
    EXPECT_NEAR(measured_db, theory_db, 1.0);
    // and without cancellation the direct path buries it
    const auto raw = caf(r, scene);
    EXPECT_NE(std::size_t(std::max_element(raw.begin(), raw.end()) - raw.begin()),
              m0 * nd + std::size_t(k0 + 40));
}

TEST(ClutterCancelCpu, test_004_zero_doppler_target_inside_the_taps_is_cancelled)
{
    // documented: a target within the K delays at zero Doppler is clutter to ECA-B;
    // the same target moving is kept
    const auto r = random_complex(n_cpi, 131);
    std::vector<cfloat> still(n_cpi), moving(n_cpi);
    add_echo(still, r, 5, 0.0, 1.0);
    add_echo(moving, r, 5, 25.0, 1.0);
    kernels::clutter_cancel_result res;
    cancel(eca(), r, still, &res);
    EXPECT_GE(res.cancellation_db, 50.0);
    cancel(eca(), r, moving, &res);
    EXPECT_LT(res.cancellation_db, 0.5);
}

TEST(ClutterCancelCpu, test_005_doppler_taps_cancel_clutter_one_bin_off_zero)
{
    const auto r = random_complex(n_cpi, 141);
    std::vector<cfloat> s(n_cpi);
    add_echo(s, r, 3, 1.0, 100.0); // one CPI Doppler bin: a quarter turn per batch
    add_echo(s, r, 6, -1.0, 50.0);
    add_echo(s, r, 0, 0.0, 1000.0);
    kernels::clutter_cancel_result plain, with_taps;
    cancel(eca(), r, s, &plain);
    auto p = eca();
    p.doppler_taps = true;
    cancel(p, r, s, &with_taps);
    EXPECT_GE(with_taps.cancellation_db, 50.0);
    EXPECT_LT(plain.cancellation_db, with_taps.cancellation_db - 10.0);
}

TEST(ClutterCancelCpu, test_006_singular_systems_and_nonfinite_input_survive)
{
    auto r = random_complex(n_cpi, 151);
    const auto s = random_complex(n_cpi, 152);
    std::vector<cfloat> zero(n_cpi);
    kernels::clutter_cancel_result res;
    // no reference at all: every batch singular, loaded, nothing fitted
    auto out = cancel(eca(), zero, s, &res);
    EXPECT_EQ(res.loaded_batches, 4u);
    EXPECT_EQ(out, s);
    // the reference silent in the last batch only
    std::fill(r.begin() + 18000, r.end(), cfloat());
    out = cancel(eca(), r, s, &res);
    EXPECT_EQ(res.loaded_batches, 1u);
    for (const cfloat& x : out)
        ASSERT_TRUE(std::isfinite(x.real()) && std::isfinite(x.imag()));
    // NaN and inf samples counted, used as 0
    auto r2 = random_complex(n_cpi, 153);
    auto s2 = interference(r2);
    r2[100] = cfloat(NAN, 0);
    s2[7000] = cfloat(0, INFINITY);
    s2[7001] = cfloat(NAN, NAN);
    out = cancel(eca(), r2, s2, &res);
    EXPECT_EQ(res.nonfinite_samples, 3u);
    for (const cfloat& x : out)
        ASSERT_TRUE(std::isfinite(x.real()) && std::isfinite(x.imag()));
    EXPECT_GT(res.cancellation_db, 20.0); // one bad reference sample spoils little
}

clutter_cancel_params
nlms(std::size_t ntaps = 16, double mu = 0.5, std::size_t block = 64)
{
    clutter_cancel_params p;
    p.nsamples = n_cpi;
    p.ntaps = ntaps;
    p.method = kernels::cancel_method::nlms;
    p.nlms_step = mu;
    p.nlms_block = block;
    return p;
}

//! One canceller over consecutive CPIs of a stream (r, s each cpis x N).
std::vector<cfloat> cancel_stream(clutter_cancel& c,
                                  const std::vector<cfloat>& r,
                                  const std::vector<cfloat>& s,
                                  std::vector<kernels::clutter_cancel_result>& res)
{
    const std::size_t n = c.params().nsamples;
    std::vector<cfloat> out(s.size(), cfloat(NAN, NAN));
    res.clear();
    for (std::size_t o = 0; o < s.size(); o += n)
        res.push_back(c.run(r.data() + o, n, s.data() + o, n, out.data() + o));
    return out;
}

TEST(ClutterCancelCpu, test_008_nlms_streaming_suppresses_direct_path_and_clutter)
{
    // two CPIs of one stream: the first converges, the second is cancelled to about
    // the noise (NLMS's excess residual ~ mu / (2 - mu) of it, block-averaged less)
    const auto r = random_complex(2 * n_cpi, 161);
    auto s = interference(r);
    const auto noise = random_complex(2 * n_cpi, 162, float(std::sqrt(0.5)));
    for (std::size_t i = 0; i < s.size(); ++i)
        s[i] += noise[i];
    auto c = clutter_cancel::make(kernels::backend::cpu, nlms());
    std::vector<kernels::clutter_cancel_result> res;
    const auto out = cancel_stream(*c, r, s, res);
    const std::vector<cfloat> second(out.begin() + long(n_cpi), out.end());
    EXPECT_GE(res[1].cancellation_db, 50.0);
    EXPECT_NEAR(res[1].power_after, mean_power(second), 1e-9 * res[1].power_before);
    EXPECT_LT(res[1].power_after, 1.5); // unit noise plus the excess
    EXPECT_GT(res[1].power_after, 0.9); // the noise itself is not fitted
    EXPECT_LT(res[0].cancellation_db, res[1].cancellation_db - 3.0); // convergence
    EXPECT_EQ(res[1].loaded_batches, 0u);
    // the weights carry over: the second CPI alone, after reset(), converges again
    c->reset();
    kernels::clutter_cancel_result fresh = c->run(r.data() + n_cpi,
                                                  n_cpi,
                                                  s.data() + n_cpi,
                                                  n_cpi,
                                                  std::vector<cfloat>(n_cpi).data());
    EXPECT_LT(fresh.cancellation_db, res[1].cancellation_db - 3.0);
    // a moving target outside the taps survives (NLMS fits the reference's span only)
    std::vector<cfloat> target(2 * n_cpi);
    add_echo(target, r, 40, 25.0, 1.0);
    auto c2 = clutter_cancel::make(kernels::backend::cpu, nlms());
    cancel_stream(*c2, r, target, res);
    EXPECT_LT(res[1].cancellation_db, 0.5);
}

TEST(ClutterCancelCpu, test_009_nlms_block_one_is_textbook_nlms)
{
    // P = 1 against NLMS written out here: w += mu e conj(x) / |x|^2 per sample, the
    // reference history across the CPI boundary included
    const std::size_t n = 600, k = 5;
    const double mu = 0.7;
    const auto r = random_complex(2 * n, 171);
    auto s = random_complex(2 * n, 172, 0.1f);
    add_echo(s, r, 0, 0.0, cd(3.0, 1.0));
    add_echo(s, r, 3, 0.0, cd(-1.0, 0.5));
    auto p = nlms(k, mu, 1);
    p.nsamples = n;
    auto c = clutter_cancel::make(kernels::backend::cpu, p);
    std::vector<kernels::clutter_cancel_result> res;
    const auto out = cancel_stream(*c, r, s, res);
    std::vector<cd> w(k);
    double worst = 0;
    for (std::size_t i = 0; i < 2 * n; ++i) {
        cd fit = 0;
        double norm = 0;
        for (std::size_t d = 0; d < k && d <= i; ++d) {
            fit += w[d] * cd(r[i - d]);
            norm += std::norm(cd(r[i - d]));
        }
        const cd e = cd(s[i]) - fit;
        for (std::size_t d = 0; d < k && d <= i; ++d)
            w[d] += mu * e * std::conj(cd(r[i - d])) / norm;
        worst = std::max(worst, std::abs(e - cd(out[i])) / std::abs(cd(s[i])));
    }
    EXPECT_LT(worst, 1e-5);
    EXPECT_GT(res[1].cancellation_db, 15.0); // it did adapt: 20 dB above the 0.1 noise
}

TEST(ClutterCancelCpu, test_012_eca_b_sees_the_previous_cpi_across_the_boundary)
{
    // a continuous stream: the first samples of CPI 1 hold the clutter's echoes of CPI
    // 0's last reference samples; the canceller that ran CPI 0 fits them, a reset one
    // cannot (its r before the CPI is 0)
    const auto r = random_complex(2 * n_cpi, 181);
    auto s = interference(r);
    const auto noise = random_complex(2 * n_cpi, 182, float(std::sqrt(0.5)));
    for (std::size_t i = 0; i < s.size(); ++i)
        s[i] += noise[i];
    auto c = clutter_cancel::make(kernels::backend::cpu, eca());
    std::vector<kernels::clutter_cancel_result> res;
    cancel_stream(*c, r, s, res);
    const std::vector<cfloat> noise1(noise.begin() + long(n_cpi), noise.end());
    const double expected = mean_power(noise1) * (1.0 - 16.0 / 6000.0);
    EXPECT_NEAR(res[1].power_after, expected, 0.005 * expected);
    c->reset();
    std::vector<cfloat> out(n_cpi);
    const auto fresh =
        c->run(r.data() + n_cpi, n_cpi, s.data() + n_cpi, n_cpi, out.data());
    EXPECT_GT(fresh.power_after, 2.0 * expected);
}

TEST(ClutterCancelCpu, test_013_lapack_cholesky_solves_row_major_hermitian_systems)
{
    // A = B^H B + I (row-major, Hermitian positive definite, complex off the diagonal):
    // the solve must undo LAPACK's column-major reading (the conjugate of A)
    constexpr int n = 7;
    const auto b = random_complex(n * n, 191);
    const auto yv = random_complex(n, 192);
    std::vector<cd> a(n * n);
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
            cd v = i == j ? 1.0 : 0.0;
            for (int k = 0; k < n; ++k)
                v += std::conj(cd(b[k * n + i])) * cd(b[k * n + j]);
            a[i * n + j] = v;
        }
    auto f = a;
    ASSERT_TRUE(kernels::detail::lapack_cholesky(f.data(), n));
    std::vector<cd> x(yv.begin(), yv.end());
    kernels::detail::lapack_cholesky_solve(f.data(), n, x.data());
    for (int i = 0; i < n; ++i) {
        cd ax = 0.0;
        for (int j = 0; j < n; ++j)
            ax += a[i * n + j] * x[j];
        EXPECT_LT(std::abs(ax - cd(yv[i])), 1e-12 * std::abs(cd(yv[i])) + 1e-12) << i;
    }
    // singular (rank 1), indefinite and NaN-holding matrices are refused, not factored
    std::vector<cd> rank1(n * n);
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j)
            rank1[i * n + j] = std::conj(cd(b[i])) * cd(b[j]);
    rank1[n + 1] = std::norm(cd(b[1])) * 0.5; // below the rank-1 value: not PSD
    EXPECT_FALSE(kernels::detail::lapack_cholesky(rank1.data(), n));
    auto nan = a;
    nan[3 * n + 3] = cd(NAN, 0.0);
    EXPECT_FALSE(kernels::detail::lapack_cholesky(nan.data(), n));
}

TEST(ClutterCancelCpu, test_014_tonal_reference_cancelled_finite)
{
    // a pure tone makes every delayed copy a multiple of the others: the Gram matrix is
    // rank 1 in exact arithmetic, so the factorisation may fail (loaded) or pass on
    // rounding; either way the tone is removed and nothing is NaN
    std::vector<cfloat> r(n_cpi);
    for (std::size_t i = 0; i < n_cpi; ++i)
        r[i] = cfloat(std::polar(1.0, 0.731 * double(i)));
    const auto noise = random_complex(n_cpi, 193, float(std::sqrt(0.5)));
    std::vector<cfloat> s(n_cpi);
    for (std::size_t i = 0; i < n_cpi; ++i)
        s[i] = cfloat(cd(1000.0, 300.0) * cd(r[i])) + noise[i];
    kernels::clutter_cancel_result res;
    const auto out = cancel(eca(), r, s, &res);
    EXPECT_LE(res.loaded_batches, 4u);
    for (const cfloat& x : out)
        ASSERT_TRUE(std::isfinite(x.real()) && std::isfinite(x.imag()));
    // 60 dB of tone over unit noise: the residual is the noise (what is left of it
    // after the fit's few degrees of freedom), within 1 %
    EXPECT_NEAR(res.power_after, mean_power(noise), 0.01 * mean_power(noise));
}

//! nsurv surveillance channels of the reference r, one CPI or more: each its own noise
//! (seeded from `seed`), a direct path and clutter of its own amplitudes (at most 40 dB
//! above what ECA-B leaves, as in test_010: the float fit's rounding grows with what it
//! removes), and a moving echo.
std::vector<std::vector<cfloat>>
surveillance_channels(const std::vector<cfloat>& r, std::size_t nsurv, std::uint32_t seed)
{
    std::vector<std::vector<cfloat>> s;
    for (std::size_t k = 0; k < nsurv; ++k) {
        auto ch = random_complex(r.size(), seed + std::uint32_t(k));
        const double g = 1.0 + double(k);
        add_echo(ch, r, 0, 0.0, cd(100.0, -20.0 * double(k)) / g);
        add_echo(ch, r, 1 + k, 0.0, cd(10.0 / g, 5.0));
        add_echo(ch, r, 9, 1.0, cd(0.0, 8.0 / g));
        add_echo(ch, r, 30 + k, 7.0 + double(k), 0.5);
        s.push_back(std::move(ch));
    }
    return s;
}

//! One canceller of nsurv channels over the CPIs of r and s[k] (run_channels), and for
//! each channel k a canceller of that channel alone (run): outputs and reports the same.
//! The systems differ only in LAPACK's solve for several right-hand sides at once
//! (zpotrs, nrhs = nsurv) against one: within its rounding, far below float's.
void expect_channels_match_single(clutter_cancel_params p,
                                  const std::vector<cfloat>& r,
                                  const std::vector<std::vector<cfloat>>& s)
{
    const std::size_t ns = s.size(), n = p.nsamples;
    p.nsurv = ns;
    auto many = clutter_cancel::make(kernels::backend::cpu, p);
    std::vector<std::vector<cfloat>> out(ns,
                                         std::vector<cfloat>(r.size(), cfloat(NAN, NAN)));
    std::vector<std::vector<kernels::clutter_cancel_result>> res(ns);
    std::vector<const cfloat*> sp(ns);
    std::vector<cfloat*> op(ns);
    std::vector<kernels::clutter_cancel_result> cpi(ns);
    for (std::size_t o = 0; o < r.size(); o += n) {
        for (std::size_t k = 0; k < ns; ++k) {
            sp[k] = s[k].data() + o;
            op[k] = out[k].data() + o;
        }
        many->run_channels(r.data() + o, sp.data(), op.data(), cpi.data());
        for (std::size_t k = 0; k < ns; ++k)
            res[k].push_back(cpi[k]);
    }
    p.nsurv = 1;
    for (std::size_t k = 0; k < ns; ++k) {
        SCOPED_TRACE("channel " + std::to_string(k));
        auto one = clutter_cancel::make(kernels::backend::cpu, p);
        std::vector<kernels::clutter_cancel_result> single;
        const auto alone = cancel_stream(*one, r, s[k], single);
        EXPECT_LE(rel_l2(out[k], alone), 1e-9);
        for (std::size_t c = 0; c < single.size(); ++c) {
            EXPECT_NEAR(res[k][c].power_before,
                        single[c].power_before,
                        1e-12 * single[c].power_before);
            EXPECT_NEAR(res[k][c].power_after,
                        single[c].power_after,
                        1e-9 * single[c].power_after);
            EXPECT_NEAR(res[k][c].cancellation_db, single[c].cancellation_db, 1e-6);
            EXPECT_EQ(res[k][c].loaded_batches, single[c].loaded_batches);
            EXPECT_EQ(res[k][c].nonfinite_samples, single[c].nonfinite_samples);
        }
    }
}

TEST(ClutterCancelCpu, test_015_channels_in_one_run_equal_each_alone)
{
    const auto r = random_complex(2 * n_cpi, 201);
    const auto s = surveillance_channels(r, 3, 202);
    // two CPIs: the shared reference history carried as for one channel
    expect_channels_match_single(eca(), r, s);
    auto p = eca(7, 5);
    p.doppler_taps = true;
    p.diagonal_loading = 1e-3;
    expect_channels_match_single(p, r, s);
    // the reference silent in CPI 0's last batch (a singular system, loaded for every
    // channel), non-finite samples in the reference and in one channel only
    auto r2 = r;
    std::fill(r2.begin() + 18000, r2.begin() + n_cpi, cfloat());
    r2[100] = cfloat(NAN, 0);
    auto s2 = s;
    s2[1][7000] = cfloat(0, INFINITY);
    s2[1][n_cpi + 5] = cfloat(NAN, NAN);
    expect_channels_match_single(eca(), r2, s2);
    // NLMS: each channel's weights its own
    expect_channels_match_single(nlms(13, 0.3, 64), r, s);
    // the largest nsurv, one CPI
    const std::vector<cfloat> r1(r.begin(), r.begin() + long(n_cpi));
    auto s64 = surveillance_channels(r1, clutter_cancel::max_nsurv, 203);
    expect_channels_match_single(eca(4, 8), r1, s64);
}

TEST(ClutterCancelCpu, test_016_channels_cancelled_in_place)
{
    // out[k] may be surveillance[k]: the channels are read before any is written
    const auto r = random_complex(n_cpi, 211);
    auto s = surveillance_channels(r, 2, 212);
    auto p = eca();
    p.nsurv = 2;
    auto c = clutter_cancel::make(kernels::backend::cpu, p);
    std::vector<cfloat> o0(n_cpi), o1(n_cpi);
    const cfloat* sp[] = { s[0].data(), s[1].data() };
    cfloat* op[] = { o0.data(), o1.data() };
    kernels::clutter_cancel_result res[2];
    c->run_channels(r.data(), sp, op, res);
    EXPECT_GE(res[0].cancellation_db, 20.0); // cancelled (a Doppler echo is left)
    c->reset();
    cfloat* inplace[] = { s[0].data(), s[1].data() };
    c->run_channels(r.data(), sp, inplace, res);
    EXPECT_EQ(s[0], o0);
    EXPECT_EQ(s[1], o1);
}

TEST(ClutterCancelCpu, test_007_bad_input_named_before_allocating)
{
    const std::string stage = "gpuradar::clutter_cancel";
    auto with = [](auto change) {
        auto p = eca();
        change(p);
        return [p] { clutter_cancel::validate(p); };
    };
    expect_invalid(with([](auto& p) { p.nsamples = 0; }), "nsamples", stage);
    expect_invalid(with([](auto& p) { p.nbatches = 7; }),
                   "nbatches must be a divisor of nsamples = 24000",
                   stage);
    expect_invalid(with([](auto& p) { p.nbatches = 0; }), "nbatches", stage);
    expect_invalid(with([](auto& p) { p.ntaps = 0; }), "ntaps", stage);
    // the boundary: as many columns as samples per batch passes, one more tap does not
    EXPECT_NO_THROW(with([](auto& p) {
        p.nbatches = 8;
        p.ntaps = 3000;
    })());
    expect_invalid(with([](auto& p) {
                       p.nbatches = 8;
                       p.ntaps = 3001;
                   }),
                   "ntaps must be in [1, 3000]",
                   stage);
    EXPECT_NO_THROW(with([](auto& p) {
        p.nbatches = 8;
        p.ntaps = 1000;
        p.doppler_taps = true;
    })());
    expect_invalid(with([](auto& p) {
                       p.nbatches = 8;
                       p.ntaps = 1001;
                       p.doppler_taps = true;
                   }),
                   "ntaps must be in [1, 1000]",
                   stage);
    // at most 4096 columns, whatever the batch length
    EXPECT_NO_THROW(with([](auto& p) {
        p.nbatches = 2;
        p.ntaps = 4096;
    })());
    expect_invalid(with([](auto& p) {
                       p.nbatches = 2;
                       p.ntaps = 4097;
                   }),
                   "ntaps must be in [1, 4096] (ntaps columns <= 4096)",
                   stage);
    expect_invalid(with([](auto& p) {
                       p.nbatches = 2;
                       p.ntaps = 1366;
                       p.doppler_taps = true;
                   }),
                   "ntaps must be in [1, 1365]",
                   stage);
    // every batch's normal matrix is held: nbatches x columns^2 <= 2^27
    expect_invalid(with([](auto& p) {
                       p.nsamples = std::size_t(1) << 24;
                       p.nbatches = 4096;
                       p.ntaps = 512;
                   }),
                   "ntaps must be at most 181 with nbatches = 4096",
                   stage);
    EXPECT_NO_THROW(with([](auto& p) {
        p.nsamples = std::size_t(1) << 24;
        p.nbatches = 4096;
        p.ntaps = 181;
    })());
    expect_invalid(
        with([](auto& p) { p.diagonal_loading = -1; }), "diagonal_loading", stage);
    // surveillance channels per run: 1 to 64
    expect_invalid(with([](auto& p) { p.nsurv = 0; }),
                   "nsurv must be in [1, 64] surveillance channels (got 0)",
                   stage);
    expect_invalid(with([](auto& p) { p.nsurv = 65; }),
                   "nsurv must be in [1, 64] surveillance channels (got 65)",
                   stage);
    EXPECT_NO_THROW(with([](auto& p) { p.nsurv = 64; })());
    // NLMS: its own limits
    auto with_nlms = [](auto change) {
        auto p = nlms();
        change(p);
        return [p] { clutter_cancel::validate(p); };
    };
    expect_invalid(with_nlms([](auto& p) { p.nlms_step = 0; }),
                   "nlms_step must be in (0, 2)",
                   stage);
    expect_invalid(with_nlms([](auto& p) { p.nlms_step = 2; }), "nlms_step", stage);
    EXPECT_NO_THROW(with_nlms([](auto& p) { p.nlms_step = 1.99; })());
    expect_invalid(with_nlms([](auto& p) { p.nlms_block = 7; }),
                   "nlms_block must be a divisor of nsamples = 24000",
                   stage);
    expect_invalid(with_nlms([](auto& p) { p.nlms_block = 0; }), "nlms_block", stage);
    expect_invalid(
        with_nlms([](auto& p) { p.doppler_taps = true; }), "doppler_taps", stage);
    EXPECT_NO_THROW(with_nlms([](auto& p) { p.ntaps = n_cpi; })());
    expect_invalid(with_nlms([](auto& p) { p.ntaps = n_cpi + 1; }),
                   "ntaps must be in [1, nsamples = 24000]",
                   stage);
    auto c = clutter_cancel::make(kernels::backend::cpu, eca());
    std::vector<cfloat> r(n_cpi), s(n_cpi - 1), out(n_cpi);
    expect_invalid([&] { c->run(r.data(), r.size(), s.data(), s.size(), out.data()); },
                   "surveillance_length must be nsamples = 24000",
                   stage);
    expect_invalid([&] { c->run(s.data(), s.size(), r.data(), r.size(), out.data()); },
                   "reference_length",
                   stage);
    // run() is one channel's: a canceller of two is run by run_channels()
    auto p2 = eca();
    p2.nsurv = 2;
    auto c2 = clutter_cancel::make(kernels::backend::cpu, p2);
    std::vector<cfloat> r2(n_cpi);
    expect_invalid([&] { c2->run(r2.data(), r2.data(), out.data()); },
                   "nsurv must be 1 for run()",
                   stage);
}

void expect_cuda_matches_cpu(const clutter_cancel_params& p,
                             const std::vector<cfloat>& r,
                             const std::vector<cfloat>& s)
{
    kernels::clutter_cancel_result cres;
    const auto cpu = cancel(p, r, s, &cres);
    kernels::cuda_stream stream;
    auto c = clutter_cancel::make(kernels::backend::cuda, p, stream.ref());
    auto dr = to_device(r, stream);
    auto ds = to_device(s, stream);
    kernels::device_memory dout(s.size() * sizeof(cfloat));
    poison(dout, stream);
    const auto gres = c->run(dr.as<cfloat>(), ds.as<cfloat>(), dout.as<cfloat>());
    const auto gpu = to_host<cfloat>(dout, s.size(), stream);
    // float normal equations against double: the residual differs by float rounding of
    // the fit, relative to the interference the fit removed (at most 40 dB here)
    EXPECT_LE(rel_l2(gpu, cpu), 1e-3);
    EXPECT_NEAR(gres.cancellation_db, cres.cancellation_db, 0.01);
    EXPECT_NEAR(gres.power_before, cres.power_before, 1e-5 * cres.power_before);
    EXPECT_EQ(gres.loaded_batches, cres.loaded_batches);
    EXPECT_EQ(gres.nonfinite_samples, cres.nonfinite_samples);
    // inputs unchanged, bit for bit (NaN samples included)
    const auto r_back = to_host<cfloat>(dr, r.size(), stream);
    const auto s_back = to_host<cfloat>(ds, s.size(), stream);
    EXPECT_EQ(std::memcmp(r_back.data(), r.data(), r.size() * sizeof(cfloat)), 0);
    EXPECT_EQ(std::memcmp(s_back.data(), s.data(), s.size() * sizeof(cfloat)), 0);
}

TEST(ClutterCancelCuda, test_010_matches_cpu_twin)
{
    GPURADAR_REQUIRE_CUDA();
    std::random_device rd; // fresh data each run; the seed is printed on failure
    const std::uint32_t seed = rd();
    SCOPED_TRACE("seed " + std::to_string(seed));
    const auto r = random_complex(n_cpi, seed);
    auto s = random_complex(n_cpi, seed + 1);
    add_echo(s, r, 0, 0.0, 100.0);
    add_echo(s, r, 4, 0.0, cd(10.0, 5.0));
    add_echo(s, r, 9, 1.0, cd(0.0, 8.0));
    expect_cuda_matches_cpu(eca(), r, s);
    auto p = eca(7, 5); // sizes off any launch multiple, Doppler taps
    p.doppler_taps = true;
    expect_cuda_matches_cpu(p, r, s);
    // batches of 240 samples: the normal equations in one product each (no chunks)
    expect_cuda_matches_cpu(eca(4, 100), r, s);
    // singular last batch and non-finite samples
    auto r2 = r;
    std::fill(r2.begin() + 18000, r2.end(), cfloat());
    r2[10] = cfloat(NAN, 0);
    auto s2 = s;
    s2[20000] = cfloat(INFINITY, 0);
    expect_cuda_matches_cpu(eca(), r2, s2);
    // more taps than a warp's lanes and warps, one batch: the Toeplitz route's edges
    expect_cuda_matches_cpu(eca(60, 1), r, s);
    // a last lag group only partly inside the taps
    expect_cuda_matches_cpu(eca(37, 2), r, s);
    // a lag-sum tile beyond the default 48 KiB of shared memory (K > 2049), and
    // substitution over more unknowns than a block's threads
    expect_cuda_matches_cpu(eca(2050, 1), r, s);
}

//! A stream of CPIs on one canceller per backend: state carried the same way.
void expect_cuda_stream_matches_cpu(const clutter_cancel_params& p,
                                    const std::vector<cfloat>& r,
                                    const std::vector<cfloat>& s,
                                    double min_last_db)
{
    auto cpu_c = clutter_cancel::make(kernels::backend::cpu, p);
    std::vector<kernels::clutter_cancel_result> cres;
    const auto cpu = cancel_stream(*cpu_c, r, s, cres);
    kernels::cuda_stream stream;
    auto c = clutter_cancel::make(kernels::backend::cuda, p, stream.ref());
    auto dr = to_device(r, stream);
    auto ds = to_device(s, stream);
    kernels::device_memory dout(s.size() * sizeof(cfloat));
    poison(dout, stream);
    std::vector<kernels::clutter_cancel_result> gres;
    for (std::size_t o = 0; o < s.size(); o += p.nsamples)
        gres.push_back(
            c->run(dr.as<cfloat>() + o, ds.as<cfloat>() + o, dout.as<cfloat>() + o));
    const auto gpu = to_host<cfloat>(dout, s.size(), stream);
    // float against double along the same CPIs (NLMS: the same adaptation)
    EXPECT_LE(rel_l2(gpu, cpu), 1e-3);
    for (std::size_t i = 0; i < gres.size(); ++i)
        EXPECT_NEAR(gres[i].cancellation_db, cres[i].cancellation_db, 0.05)
            << "CPI " << i;
    EXPECT_GE(gres.back().cancellation_db, min_last_db);
}

TEST(ClutterCancelCuda, test_011_streams_match_cpu_twin)
{
    GPURADAR_REQUIRE_CUDA();
    std::random_device rd;
    const std::uint32_t seed = rd();
    SCOPED_TRACE("seed " + std::to_string(seed));
    const auto r = random_complex(2 * n_cpi, seed);
    auto s = random_complex(2 * n_cpi, seed + 1);
    add_echo(s, r, 0, 0.0, 100.0);
    add_echo(s, r, 4, 0.0, cd(10.0, 5.0));
    // ECA-B: the second CPI fits the first one's tail (the history on the device)
    expect_cuda_stream_matches_cpu(eca(), r, s, 35.0);
    // NLMS: 375 updates a CPI converge; 1000 samples per block (more than the
    // threads) update 24 times a CPI, still converging: the same path on both
    expect_cuda_stream_matches_cpu(nlms(13, 0.3, 64), r, s, 35.0);
    expect_cuda_stream_matches_cpu(nlms(13, 0.3, 1000), r, s, 3.0);
}

//! nsurv channels over the CPIs of r and s[k], one canceller per backend
//! (run_channels): CUDA against the CPU twin, its outputs poisoned first.
void expect_cuda_channels_match_cpu(clutter_cancel_params p,
                                    const std::vector<cfloat>& r,
                                    const std::vector<std::vector<cfloat>>& s)
{
    const std::size_t ns = s.size(), n = p.nsamples;
    SCOPED_TRACE("ntaps " + std::to_string(p.ntaps) + ", nbatches " +
                 std::to_string(p.nbatches) + ", doppler_taps " +
                 std::to_string(p.doppler_taps) + ", nlms " +
                 std::to_string(p.method == kernels::cancel_method::nlms));
    p.nsurv = ns;
    auto cpu_c = clutter_cancel::make(kernels::backend::cpu, p);
    kernels::cuda_stream stream;
    auto gpu_c = clutter_cancel::make(kernels::backend::cuda, p, stream.ref());
    auto dr = to_device(r, stream);
    std::vector<kernels::device_memory> ds, dout;
    std::vector<std::vector<cfloat>> cpu(ns, std::vector<cfloat>(r.size()));
    for (std::size_t k = 0; k < ns; ++k) {
        ds.push_back(to_device(s[k], stream));
        dout.emplace_back(r.size() * sizeof(cfloat));
        poison(dout.back(), stream);
    }
    std::vector<const cfloat*> sp(ns), dsp(ns);
    std::vector<cfloat*> op(ns), dop(ns);
    std::vector<kernels::clutter_cancel_result> cres(ns), gres(ns);
    for (std::size_t o = 0; o < r.size(); o += n) {
        for (std::size_t k = 0; k < ns; ++k) {
            sp[k] = s[k].data() + o;
            op[k] = cpu[k].data() + o;
            dsp[k] = ds[k].as<cfloat>() + o;
            dop[k] = dout[k].as<cfloat>() + o;
        }
        cpu_c->run_channels(r.data() + o, sp.data(), op.data(), cres.data());
        gpu_c->run_channels(dr.as<cfloat>() + o, dsp.data(), dop.data(), gres.data());
        for (std::size_t k = 0; k < ns; ++k) {
            SCOPED_TRACE("CPI at " + std::to_string(o) + ", channel " +
                         std::to_string(k));
            EXPECT_NEAR(gres[k].cancellation_db, cres[k].cancellation_db, 0.05);
            EXPECT_NEAR(
                gres[k].power_before, cres[k].power_before, 1e-5 * cres[k].power_before);
            EXPECT_EQ(gres[k].loaded_batches, cres[k].loaded_batches);
            EXPECT_EQ(gres[k].nonfinite_samples, cres[k].nonfinite_samples);
        }
    }
    for (std::size_t k = 0; k < ns; ++k) {
        const auto gpu = to_host<cfloat>(dout[k], r.size(), stream);
        // float normal equations against double, as for one channel (test_010)
        EXPECT_LE(rel_l2(gpu, cpu[k]), 1e-3) << "channel " << k;
    }
}

TEST(ClutterCancelCuda, test_017_channels_in_one_run_match_cpu_twin)
{
    GPURADAR_REQUIRE_CUDA();
    std::random_device rd;
    const std::uint32_t seed = rd();
    SCOPED_TRACE("seed " + std::to_string(seed));
    const auto r = random_complex(2 * n_cpi, seed);
    const auto s = surveillance_channels(r, 4, seed + 1);
    // four channels (an odd 1 + 4 lag-sum targets), two CPIs: history on the device
    expect_cuda_channels_match_cpu(eca(), r, s);
    // three channels (even targets), taps off any launch multiple
    const std::vector<std::vector<cfloat>> s3(s.begin(), s.begin() + 3);
    expect_cuda_channels_match_cpu(eca(37, 2), r, s3);
    // Doppler taps: the channels as columns of one product
    auto p = eca(7, 5);
    p.doppler_taps = true;
    expect_cuda_channels_match_cpu(p, r, s);
    // a singular batch and non-finite samples in the reference and one channel
    auto r2 = r;
    std::fill(r2.begin() + 18000, r2.begin() + n_cpi, cfloat());
    r2[10] = cfloat(NAN, 0);
    auto s2 = s;
    s2[2][20000] = cfloat(INFINITY, 0);
    expect_cuda_channels_match_cpu(eca(), r2, s2);
    // NLMS: each channel's weights on the device
    expect_cuda_channels_match_cpu(nlms(13, 0.3, 64), r, s);
    // the lag sums' shared-memory limit is the kernel's, process-wide: a small canceller
    // made after a large one must leave the large one runnable
    kernels::cuda_stream stream;
    auto p2 = eca(2050, 1);
    p2.nsurv = 2;
    auto large = clutter_cancel::make(kernels::backend::cuda, p2, stream.ref());
    auto small = clutter_cancel::make(kernels::backend::cuda, eca(4, 4), stream.ref());
    auto dr = to_device(std::vector<cfloat>(r.begin(), r.begin() + long(n_cpi)), stream);
    auto ds =
        to_device(std::vector<cfloat>(s[0].begin(), s[0].begin() + long(n_cpi)), stream);
    kernels::device_memory o0(n_cpi * sizeof(cfloat)), o1(n_cpi * sizeof(cfloat));
    const cfloat* in[] = { ds.as<cfloat>(), ds.as<cfloat>() };
    cfloat* outs[] = { o0.as<cfloat>(), o1.as<cfloat>() };
    kernels::clutter_cancel_result res[2];
    EXPECT_NO_THROW(large->run_channels(dr.as<cfloat>(), in, outs, res));
    EXPECT_GT(res[1].cancellation_db, 20.0);
}

} // namespace
} // namespace gpuradar::test
