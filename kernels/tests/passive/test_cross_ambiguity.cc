/* Cross-ambiguity map: CPU against fp64 references of both methods, a target's peak,
 * the batched method's straddle loss against its prediction, the method rule, bad
 * input, and CUDA against the CPU twin. */
#include "../invalid_argument_check.h"
#include "../test_support.h"
#include <gpuradar/kernels/passive/cross_ambiguity.h>
#include <gtest/gtest.h>
#include <algorithm>
#include <cmath>
#include <complex>
#include <random>
#include <vector>

namespace gpuradar::test {
namespace {

using kernels::caf_method;
using kernels::cross_ambiguity;
using kernels::cross_ambiguity_params;
using cd = std::complex<double>;
constexpr double two_pi = 6.283185307179586476925286766559;

//! Unit-modulus random-phase samples: a constant-envelope (FM-like) illuminator.
std::vector<cfloat> unit_modulus(std::size_t n, std::uint32_t seed)
{
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(0.0, two_pi);
    std::vector<cfloat> v(n);
    for (auto& x : v) {
        const double a = u(rng);
        x = cfloat(float(std::cos(a)), float(std::sin(a)));
    }
    return v;
}

//! s[n] = amp r[n - m0] exp(+j 2 pi k0 n / N) (0 before the reference starts).
std::vector<cfloat>
echo(const std::vector<cfloat>& r, std::size_t m0, long k0, double amp)
{
    const std::size_t n = r.size();
    std::vector<cfloat> s(n);
    for (std::size_t i = m0; i < n; ++i) {
        const double ph = two_pi * double(k0) * double(i) / double(n);
        s[i] = cfloat(cd(r[i - m0]) * amp * cd(std::cos(ph), std::sin(ph)));
    }
    return s;
}

//! The direct definition in double: sum_n w(n) s[n] conj(r[n-m]) exp(-j 2 pi k n / N).
std::vector<double> reference_direct(const std::vector<cfloat>& r,
                                     const std::vector<cfloat>& s,
                                     const cross_ambiguity_params& p)
{
    const std::size_t n = p.nsamples, nd = 2 * p.doppler_half + 1;
    const auto w = kernels::window_coefficients(p.window, n);
    std::vector<double> map(p.nrange * nd);
    for (std::size_t m = 0; m < p.nrange; ++m)
        for (std::size_t d = 0; d < nd; ++d) {
            const double k = double(d) - double(p.doppler_half);
            cd x = 0;
            for (std::size_t i = m; i < n; ++i)
                x += w[i] * cd(s[i]) * std::conj(cd(r[i - m])) *
                     std::polar(1.0, -two_pi * k * double(i) / double(n));
            map[m * nd + d] = std::norm(x);
        }
    return map;
}

//! The batched definition in double: sum_b w(b) exp(-j 2 pi k b / B) sum_i s[bL+i]
//! conj(r[bL+i-m]).
std::vector<double> reference_batched(const std::vector<cfloat>& r,
                                      const std::vector<cfloat>& s,
                                      const cross_ambiguity_params& p,
                                      std::size_t l)
{
    const std::size_t n = p.nsamples, nd = 2 * p.doppler_half + 1, nb = n / l;
    const auto w = kernels::window_coefficients(p.window, nb);
    std::vector<double> map(p.nrange * nd);
    for (std::size_t m = 0; m < p.nrange; ++m) {
        std::vector<cd> c(nb);
        for (std::size_t b = 0; b < nb; ++b)
            for (std::size_t i = 0; i < l; ++i)
                if (b * l + i >= m)
                    c[b] += cd(s[b * l + i]) * std::conj(cd(r[b * l + i - m]));
        for (std::size_t d = 0; d < nd; ++d) {
            const double k = double(d) - double(p.doppler_half);
            cd x = 0;
            for (std::size_t b = 0; b < nb; ++b)
                x += w[b] * c[b] * std::polar(1.0, -two_pi * k * double(b) / double(nb));
            map[m * nd + d] = std::norm(x);
        }
    }
    return map;
}

std::vector<float> run_map(kernels::backend be,
                           const cross_ambiguity_params& p,
                           const std::vector<cfloat>& r,
                           const std::vector<cfloat>& s)
{
    auto caf = cross_ambiguity::make(be, p);
    std::vector<float> map(p.nrange * caf->ndoppler(), NAN);
    caf->run(r.data(), r.size(), s.data(), s.size(), map.data());
    return map;
}

cross_ambiguity_params small_params(caf_method method)
{
    cross_ambiguity_params p;
    p.nsamples = 1200;
    p.nrange = 37;
    p.doppler_half = 7;
    p.batch_length = 40; // 30 batches >= 2K+1 = 15
    p.method = method;
    p.window = kernels::window_spec::make("hann");
    return p;
}

std::size_t argmax(const std::vector<float>& v)
{
    return std::size_t(std::max_element(v.begin(), v.end()) - v.begin());
}

TEST(CrossAmbiguityCpu, test_001_direct_matches_fp64_reference)
{
    const auto p = small_params(caf_method::direct);
    const auto r = random_complex(p.nsamples, 11);
    const auto s = random_complex(p.nsamples, 12);
    const auto map = run_map(kernels::backend::cpu, p, r, s);
    EXPECT_LE(rel_l2(map, reference_direct(r, s, p)), 1e-5);
}

TEST(CrossAmbiguityCpu, test_002_batched_matches_fp64_reference)
{
    const auto p = small_params(caf_method::batched);
    const auto r = random_complex(p.nsamples, 21);
    const auto s = random_complex(p.nsamples, 22);
    const auto map = run_map(kernels::backend::cpu, p, r, s);
    EXPECT_LE(rel_l2(map, reference_batched(r, s, p, p.batch_length)), 1e-5);
}

TEST(CrossAmbiguityCpu, test_003_target_peaks_at_its_lag_and_bin)
{
    // closing (k0 > 0) and opening (k0 < 0) targets, both methods, in noise 10 dB
    // above the echo per sample (the CPI's gain lifts it ~20 dB above the floor)
    for (const caf_method method : { caf_method::direct, caf_method::batched })
        for (const long k0 : { 5L, -3L, 0L }) {
            auto p = small_params(method);
            const std::size_t m0 = 23;
            const auto r = unit_modulus(p.nsamples, 31);
            auto s = echo(r, m0, k0, 0.3);
            const auto noise = random_complex(p.nsamples, 32);
            for (std::size_t i = 0; i < s.size(); ++i)
                s[i] += noise[i];
            const auto map = run_map(kernels::backend::cpu, p, r, s);
            const std::size_t nd = 2 * p.doppler_half + 1, peak = argmax(map);
            EXPECT_EQ(peak / nd, m0) << "method " << int(method) << " k0 " << k0;
            EXPECT_EQ(long(peak % nd) - long(p.doppler_half), k0)
                << "method " << int(method);
        }
}

TEST(CrossAmbiguityCpu, test_004_batched_loses_its_straddle_loss)
{
    // Noise-free constant-envelope echo, no taper: the direct peak is the CPI's sum
    // N - m0; the batched one sums exp(j 2 pi k0 i / N) over each batch's samples (those
    // after the echo starts), the straddle loss D_L(k0) of every full batch.
    auto pd = small_params(caf_method::direct);
    pd.window = kernels::window_spec();
    auto pb = pd;
    pb.method = caf_method::batched;
    const std::size_t m0 = 9, n = pd.nsamples, l = pb.batch_length, nd = 15;
    const auto r = unit_modulus(n, 41);
    for (long k0 = -7; k0 <= 7; ++k0) {
        const auto s = echo(r, m0, k0, 1.0);
        const auto direct = run_map(kernels::backend::cpu, pd, r, s);
        const auto batched = run_map(kernels::backend::cpu, pb, r, s);
        const std::size_t cell = m0 * nd + std::size_t(k0 + 7);
        cd predicted = 0;
        for (std::size_t b = 0; b < n / l; ++b)
            for (std::size_t i = 0; i < l; ++i)
                if (b * l + i >= m0)
                    predicted +=
                        std::polar(1.0, two_pi * double(k0) * double(i) / double(n));
        const double ratio_db = 10.0 * std::log10(batched[cell] / direct[cell]);
        const double want_db =
            10.0 * std::log10(std::norm(predicted) / (double(n - m0) * double(n - m0)));
        EXPECT_NEAR(direct[cell], double(n - m0) * double(n - m0), 1e-4 * direct[cell]);
        EXPECT_NEAR(ratio_db, want_db, 1e-3) << "k0 " << k0;
        // the first batch lacks m0 of its samples: within m0 / N of the straddle loss
        const double loss = cross_ambiguity::straddle_loss_db(n, l, k0);
        const double partial_db = -20.0 * std::log10(1.0 - double(m0) / double(n));
        EXPECT_LE(std::abs(ratio_db + loss), partial_db + 1e-3) << "k0 " << k0;
        if (std::abs(k0) == 7)
            EXPECT_GT(loss, 0.1); // the edge loses measurably: the check is not vacuous
    }
}

TEST(CrossAmbiguityCpu, test_005_db_output_is_ten_log10_of_power)
{
    auto p = small_params(caf_method::batched);
    const auto r = random_complex(p.nsamples, 51);
    const auto s = random_complex(p.nsamples, 52);
    const auto power = run_map(kernels::backend::cpu, p, r, s);
    p.db = true;
    const auto db = run_map(kernels::backend::cpu, p, r, s);
    for (std::size_t i = 0; i < power.size(); ++i)
        ASSERT_NEAR(db[i], 10.0 * std::log10(power[i]), 1e-4) << i;
}

TEST(CrossAmbiguityCpu, test_006_method_rule)
{
    cross_ambiguity_params p;
    p.nsamples = 1200000;
    p.nrange = 400;
    p.doppler_half = 256;
    // chosen: the smallest batch count >= 4K = 1024 dividing 1.2M is 1200 (L = 1000)
    EXPECT_EQ(cross_ambiguity::choose_batch_length(p), 1000u);
    EXPECT_EQ(cross_ambiguity::choose_method(p), caf_method::batched);
    EXPECT_LT(cross_ambiguity::straddle_loss_db(p.nsamples, 1000, 256), 1.0);
    // B = 2K+1 batches: 3.9 dB at the edge, too much for the default 1 dB
    p.nsamples = 513 * 100;
    p.batch_length = 100;
    EXPECT_GT(cross_ambiguity::straddle_loss_db(p.nsamples, 100, 256), 3.8);
    EXPECT_EQ(cross_ambiguity::choose_method(p), caf_method::direct);
    p.max_straddle_loss_db = 4.0;
    EXPECT_EQ(cross_ambiguity::choose_method(p), caf_method::batched);
    p.method = caf_method::direct;
    EXPECT_EQ(cross_ambiguity::choose_method(p), caf_method::direct);
    // a prime CPI has no batch length: automatic is direct
    cross_ambiguity_params q;
    q.nsamples = 1009;
    q.nrange = 10;
    q.doppler_half = 3;
    EXPECT_EQ(cross_ambiguity::choose_batch_length(q), 0u);
    EXPECT_EQ(cross_ambiguity::choose_method(q), caf_method::direct);
    auto caf = cross_ambiguity::make(kernels::backend::cpu, q);
    EXPECT_EQ(caf->method(), caf_method::direct);
    EXPECT_EQ(caf->batch_length(), q.nsamples);
}

TEST(CrossAmbiguityCpu, test_007_bad_input_named_before_allocating)
{
    const auto ok = small_params(caf_method::automatic);
    const std::string stage = "gpuradar::cross_ambiguity";
    auto with = [&](auto change) {
        auto p = ok;
        change(p);
        return [p] { cross_ambiguity::validate(p); };
    };
    expect_invalid(with([](auto& p) { p.nsamples = 1; }), "nsamples", stage);
    expect_invalid(with([](auto& p) { p.nrange = 0; }), "nrange", stage);
    expect_invalid(with([](auto& p) { p.nrange = 1201; }),
                   "nrange must be in [1, nsamples = 1200]",
                   stage);
    // the boundary passes, one more Doppler bin than the CPI resolves does not
    EXPECT_NO_THROW(with([](auto& p) {
        p.doppler_half = 599;
        p.batch_length = 0;
        p.method = caf_method::direct;
    })());
    expect_invalid(with([](auto& p) { p.doppler_half = 600; }),
                   "doppler_half must be <= 599",
                   stage);
    expect_invalid(with([](auto& p) { p.batch_length = 7; }), "batch_length", stage);
    // 1200 / 80 = 15 batches = 2K+1 passes; 1200 / 100 = 12 does not
    EXPECT_NO_THROW(with([](auto& p) { p.batch_length = 80; })());
    expect_invalid(
        with([](auto& p) { p.batch_length = 100; }), "batch_length must be <= 80", stage);
    expect_invalid(
        with([](auto& p) { p.max_straddle_loss_db = 0; }), "max_straddle_loss_db", stage);
    expect_invalid(with([](auto& p) {
                       p.window.type = kernels::window_type::kaiser;
                       p.window.beta = -1;
                   }),
                   "beta",
                   stage);
    // a Chebyshev taper over a long CPI (direct): refused; over its batches: fine
    cross_ambiguity_params cheb;
    cheb.nsamples = 1 << 17;
    cheb.nrange = 10;
    cheb.doppler_half = 3;
    cheb.method = caf_method::direct;
    cheb.window = kernels::window_spec::make("chebyshev");
    expect_invalid([cheb] { cross_ambiguity::validate(cheb); },
                   "window must be not chebyshev over a taper of more than 65536 points",
                   stage);
    cheb.method = caf_method::batched;
    EXPECT_NO_THROW(cross_ambiguity::validate(cheb));
    expect_invalid(
        [] {
            cross_ambiguity_params p;
            p.nsamples = 1009; // prime: no batches
            p.nrange = 10;
            p.doppler_half = 3;
            p.method = caf_method::batched;
            cross_ambiguity::validate(p);
        },
        "method",
        stage);
    // channels of different lengths
    auto caf = cross_ambiguity::make(kernels::backend::cpu, ok);
    std::vector<cfloat> r(1200), s(1199);
    std::vector<float> map(ok.nrange * caf->ndoppler());
    expect_invalid([&] { caf->run(r.data(), r.size(), s.data(), s.size(), map.data()); },
                   "surveillance_length must be nsamples = 1200",
                   stage);
    expect_invalid([&] { caf->run(s.data(), s.size(), r.data(), r.size(), map.data()); },
                   "reference_length",
                   stage);
}

void expect_cuda_matches_cpu(const cross_ambiguity_params& p, std::uint32_t seed)
{
    const auto r = random_complex(p.nsamples, seed);
    const auto s = random_complex(p.nsamples, seed + 1);
    const auto cpu = run_map(kernels::backend::cpu, p, r, s);
    kernels::cuda_stream stream;
    auto caf = cross_ambiguity::make(kernels::backend::cuda, p, stream.ref());
    auto dr = to_device(r, stream);
    auto ds = to_device(s, stream);
    kernels::device_memory dmap(cpu.size() * sizeof(float));
    poison(dmap, stream);
    caf->run(dr.as<cfloat>(), ds.as<cfloat>(), dmap.as<float>());
    const auto gpu = to_host<float>(dmap, cpu.size(), stream);
    EXPECT_EQ(caf->method(), cross_ambiguity::choose_method(p));
    if (p.db) {
        // compared as powers: a dB difference in a near-null cell says nothing
        std::vector<double> gpu_power(gpu.size()), cpu_power(cpu.size());
        for (std::size_t i = 0; i < cpu.size(); ++i) {
            gpu_power[i] = std::pow(10.0, gpu[i] / 10.0);
            cpu_power[i] = std::pow(10.0, cpu[i] / 10.0);
        }
        EXPECT_LE(rel_l2(gpu_power, cpu_power), 1e-5) << "dB";
    } else {
        EXPECT_LE(rel_l2(gpu, cpu), 1e-5);
    }
    EXPECT_EQ(to_host<cfloat>(dr, r.size(), stream), r); // inputs unchanged
    EXPECT_EQ(to_host<cfloat>(ds, s.size(), stream), s);
}

TEST(CrossAmbiguityCuda, test_010_matches_cpu_twin)
{
    GPURADAR_REQUIRE_CUDA();
    std::random_device rd; // fresh data each run; the seed is printed on failure
    const std::uint32_t seed = rd();
    SCOPED_TRACE("seed " + std::to_string(seed));
    auto p = small_params(caf_method::direct);
    expect_cuda_matches_cpu(p, seed);
    p.method = caf_method::batched;
    expect_cuda_matches_cpu(p, seed + 2);
    // a CPI not a multiple of the launch size, more lags than one batch, dB
    p.nsamples = 3 * 7 * 131;
    p.batch_length = 3 * 7;
    p.nrange = 50;
    p.doppler_half = 40;
    p.db = true;
    expect_cuda_matches_cpu(p, seed + 4);
    p.method = caf_method::direct;
    expect_cuda_matches_cpu(p, seed + 6);
}

} // namespace
} // namespace gpuradar::test
