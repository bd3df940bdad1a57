/* front_end (receiver impairments of the simulators): each impairment against its closed
 * form on fresh random data (DC mean, the I/Q model sample by sample and its image
 * rejection ratio on a tone, the Wiener phase noise's variance growth, quantisation noise
 * F^2 / (3 4^b), the clip count), the receive clock offset's pulse walk in radar_scene,
 * everything off leaving the samples to the bit, and each bad parameter named. */
#include "invalid_argument_check.h"
#include <gpuradar/kernels/pulse_doppler/pulse_compression.h>
#include <gpuradar/kernels/scene/front_end.h>
#include <gpuradar/kernels/scene/radar_channel.h>
#include <gpuradar/kernels/scene/radar_scene.h>
#include <gtest/gtest.h>
#include <cmath>
#include <complex>
#include <cstring>
#include <random>
#include <vector>

namespace gpuradar::test {
namespace {

using namespace gpuradar::kernels;
constexpr double two_pi = 6.283185307179586476925;
constexpr double fs = 10e6;

std::vector<cfloat> gaussian(std::size_t n, double power, std::uint64_t seed)
{
    std::mt19937_64 g(seed);
    std::normal_distribution<double> nd(0.0, std::sqrt(power / 2));
    std::vector<cfloat> x(n);
    for (auto& v : x)
        v = cfloat(static_cast<float>(nd(g)), static_cast<float>(nd(g)));
    return x;
}

std::uint64_t fresh_seed() { return std::random_device{}(); }

TEST(FrontEnd, test_001_off_leaves_samples_to_the_bit)
{
    auto x = gaussian(5000, 3.0, fresh_seed());
    const auto before = x;
    front_end_config off; // every default; zeros written out explicitly are the same
    off.dc_offset_i = off.dc_offset_q = off.iq_gain_db = off.iq_phase_deg = 0.0;
    off.phase_noise_linewidth_hz = 0.0;
    off.adc_bits = 0;
    off.adc_full_scale = 7.0; // the full scale alone switches nothing on
    EXPECT_FALSE(off.active());
    front_end fe(off, fs, 1, "test");
    fe.apply(x.data(), x.size());
    EXPECT_EQ(0, std::memcmp(x.data(), before.data(), x.size() * sizeof(cfloat)));
    EXPECT_EQ(fe.clipped(), 0u);
}

TEST(FrontEnd, test_002_dc_offset_is_the_mean_shift_per_rail)
{
    const std::size_t n = 200000;
    const auto x = gaussian(n, 1.0, fresh_seed());
    auto y = x;
    front_end_config c;
    c.dc_offset_i = 0.3;
    c.dc_offset_q = -0.45; // different on each rail: a swap shows
    front_end fe(c, fs, 1, "test");
    fe.apply(y.data(), n);
    std::complex<double> mean_y = 0, mean_x = 0;
    for (std::size_t i = 0; i < n; ++i) {
        mean_y += std::complex<double>(y[i]);
        mean_x += std::complex<double>(x[i]);
        // Nothing but the offset: each sample moved by it (float rounding only).
        ASSERT_NEAR(y[i].real() - x[i].real(), 0.3, 1e-6);
        ASSERT_NEAR(y[i].imag() - x[i].imag(), -0.45, 1e-6);
    }
    mean_y /= double(n);
    mean_x /= double(n);
    // The mean of unit-power noise over n samples: sigma 1/sqrt(2n) per rail; 6 sigma.
    const double tol = 6.0 / std::sqrt(2.0 * n);
    EXPECT_NEAR(mean_y.real(), 0.3, tol);
    EXPECT_NEAR(mean_y.imag(), -0.45, tol);
    EXPECT_NEAR((mean_y - mean_x).real(), 0.3, 1e-6);
}

TEST(FrontEnd, test_003_iq_model_sample_by_sample)
{
    // Re y = Re x, Im y = g (Im x cos p - Re x sin p): the Q branch's gain and LO phase.
    const auto x = gaussian(4000, 2.0, fresh_seed());
    for (auto [gdb, pdeg] : { std::pair{ 1.0, 5.0 }, { -2.0, 0.0 }, { 0.0, -7.0 } }) {
        auto y = x;
        front_end_config c;
        c.iq_gain_db = gdb;
        c.iq_phase_deg = pdeg;
        front_end fe(c, fs, 1, "test");
        fe.apply(y.data(), y.size());
        const double g = std::pow(10.0, gdb / 20), p = pdeg * two_pi / 360;
        for (std::size_t i = 0; i < x.size(); ++i) {
            const double re = x[i].real(), im = x[i].imag();
            ASSERT_NEAR(y[i].real(), re, 1e-5 * (1 + std::abs(re)));
            const double q = g * (im * std::cos(p) - re * std::sin(p));
            ASSERT_NEAR(y[i].imag(), q, 1e-5 * (1 + std::abs(q))) << gdb << " " << pdeg;
        }
    }
}

// Power of x at DFT bin k (fp64 correlation).
double bin_power(const std::vector<cfloat>& x, long k)
{
    std::complex<double> s = 0;
    const double N = static_cast<double>(x.size());
    for (std::size_t n = 0; n < x.size(); ++n)
        s += std::complex<double>(x[n]) * std::polar(1.0, -two_pi * k * double(n) / N);
    return std::norm(s);
}

TEST(FrontEnd, test_004_image_rejection_ratio_on_a_tone)
{
    std::mt19937_64 r(fresh_seed());
    const std::size_t N = 2048;
    for (auto [gdb, pdeg] : { std::pair{ 1.0, 5.0 }, { 0.5, 0.0 }, { 0.0, 3.0 } }) {
        const long k = 50 + static_cast<long>(r() % 900); // whole bins: no leakage
        const double a = 0.5 + (r() % 1000) / 1000.0, ph0 = (r() % 6283) / 1000.0;
        std::vector<cfloat> x(N);
        for (std::size_t n = 0; n < N; ++n)
            x[n] = cfloat(a * std::polar(1.0, ph0 + two_pi * k * double(n) / N));
        front_end_config c;
        c.iq_gain_db = gdb;
        c.iq_phase_deg = pdeg;
        front_end fe(c, fs, 1, "test");
        fe.apply(x.data(), N);
        const double g = std::pow(10.0, gdb / 20), p = pdeg * two_pi / 360;
        const double irr =
            (1 - 2 * g * std::cos(p) + g * g) / (1 + 2 * g * std::cos(p) + g * g);
        EXPECT_NEAR(std::norm(fe.nu()) / std::norm(fe.mu()), irr, 1e-12 * irr + 1e-15);
        const double measured = bin_power(x, -k) / bin_power(x, k);
        // float samples: the image is measured to ~1e-6 of the tone's power.
        EXPECT_NEAR(measured, irr, 1e-3 * irr + 1e-6) << gdb << " dB " << pdeg << " deg";
    }
}

TEST(FrontEnd, test_005_phase_noise_is_a_wiener_process)
{
    const double lw = 2000.0; // Hz
    const double step_var = two_pi * lw / fs;
    const std::size_t n = 200000;
    std::vector<cfloat> a(n, cfloat(1.0f, 0.0f));
    std::vector<cfloat> b(n, cfloat(0.0f, 2.0f)); // a second channel: the same LO
    front_end_config c;
    c.phase_noise_linewidth_hz = lw;
    const std::uint64_t seed = fresh_seed();
    front_end fe(c, fs, seed, "test");
    cfloat* out[2] = { a.data(), b.data() };
    fe.apply(out, 2, n);
    // The phase path, unwrapped from the increments (each << pi).
    std::vector<double> phi(n);
    double acc = 0;
    for (std::size_t i = 0; i < n; ++i) {
        ASSERT_NEAR(std::abs(a[i]), 1.0, 1e-5); // a rotation only
        acc += std::arg(std::complex<double>(a[i]) /
                        (i ? std::complex<double>(a[i - 1]) : 1.0));
        phi[i] = acc;
        ASSERT_NEAR(std::arg(std::complex<double>(b[i]) / std::complex<double>(a[i])),
                    two_pi / 4,
                    1e-5);
    }
    // Var(phi[i+m] - phi[i]) = m step_var over disjoint lags; relative standard error of
    // a variance from K samples is sqrt(2/K): tolerances at 5 of them.
    for (std::size_t m : { std::size_t(1), std::size_t(50), std::size_t(400) }) {
        double s2 = 0;
        std::size_t K = 0;
        for (std::size_t i = 0; i + m < n; i += m, ++K)
            s2 += std::pow(phi[i + m] - phi[i], 2);
        const double var = s2 / K, expect = m * step_var;
        EXPECT_NEAR(var / expect, 1.0, 5 * std::sqrt(2.0 / K)) << "lag " << m;
    }
    // Deterministic from the seed, whatever the call sizes.
    std::vector<cfloat> again(n, cfloat(1.0f, 0.0f));
    front_end fe2(c, fs, seed, "test");
    fe2.apply(again.data(), 777);
    fe2.apply(again.data() + 777, n - 777);
    EXPECT_EQ(0, std::memcmp(again.data(), a.data(), n * sizeof(cfloat)));
    std::vector<cfloat> other(n, cfloat(1.0f, 0.0f));
    front_end fe3(c, fs, seed + 1, "test");
    fe3.apply(other.data(), n);
    EXPECT_NE(0, std::memcmp(other.data(), a.data(), n * sizeof(cfloat)));
}

double quantisation_error_power(unsigned bits, double F, std::uint64_t seed)
{
    // A full-range signal: each rail uniform over the codes' span (no clipping).
    const std::size_t n = 100000;
    const double D = 2 * F / std::ldexp(1.0, bits);
    std::mt19937_64 g(seed);
    std::uniform_real_distribution<double> u(-F, F - D);
    std::vector<cfloat> x(n);
    for (auto& v : x)
        v = cfloat(static_cast<float>(u(g)), static_cast<float>(u(g)));
    auto y = x;
    front_end_config c;
    c.adc_bits = bits;
    c.adc_full_scale = F;
    front_end fe(c, fs, 1, "test");
    fe.apply(y.data(), n);
    EXPECT_EQ(fe.clipped(), 0u);
    double e = 0;
    for (std::size_t i = 0; i < n; ++i) {
        // Every output on the code grid.
        EXPECT_NEAR(std::remainder(y[i].real() / D, 1.0), 0.0, 1e-3);
        e += std::pow(double(y[i].real()) - x[i].real(), 2) +
             std::pow(double(y[i].imag()) - x[i].imag(), 2);
    }
    return e / (2.0 * n); // per rail
}

TEST(FrontEnd, test_006_quantisation_noise_is_fs2_over_3_4b)
{
    // Relative standard error of the mean of a uniform's square over 2e5 values ~0.25 %;
    // float rounding adds ~1e-7 F: 3 % covers both at the bit counts used.
    const std::uint64_t seed = fresh_seed();
    for (auto [bits, F] : { std::pair{ 6u, 1.0 }, { 10u, 1.0 }, { 8u, 3.5 } }) {
        const double expect = F * F / (3.0 * std::pow(4.0, bits));
        EXPECT_NEAR(quantisation_error_power(bits, F, seed) / expect, 1.0, 0.03)
            << bits << " bits, full scale " << F;
    }
}

TEST(FrontEnd, test_007_clipping_per_rail_and_counted)
{
    const std::size_t n = 50000;
    const double F = 1.5;
    const unsigned bits = 12;
    auto x = gaussian(n, 4.0, fresh_seed()); // rail sigma sqrt(2) ~ F: many clips
    x[10] = cfloat(std::numeric_limits<float>::infinity(), 0.0f);
    x[11] = cfloat(-3e38f, 3e38f);
    auto y = x;
    front_end_config c;
    c.adc_bits = bits;
    c.adc_full_scale = F;
    front_end fe(c, fs, 1, "test");
    fe.apply(y.data(), n / 2);
    fe.apply(y.data() + n / 2, n - n / 2); // the count accumulates across calls
    const double D = 2 * F / std::ldexp(1.0, bits);
    std::uint64_t expect = 0;
    for (std::size_t i = 0; i < n; ++i)
        for (double u : { double(x[i].real()), double(x[i].imag()) }) {
            const double q = std::round(u / D);
            expect += q > std::ldexp(1.0, bits - 1) - 1 || q < -std::ldexp(1.0, bits - 1);
        }
    EXPECT_GT(expect, n / 4);
    EXPECT_EQ(fe.clipped(), expect);
    for (std::size_t i = 0; i < n; ++i) {
        for (float v : { y[i].real(), y[i].imag() }) {
            ASSERT_GE(v, -F);
            ASSERT_LE(v, F - D + 1e-6);
        }
    }
    EXPECT_FLOAT_EQ(y[10].real(), float(F - D));
    EXPECT_FLOAT_EQ(y[11].real(), float(-F));
    EXPECT_FLOAT_EQ(y[11].imag(), float(F - D));
}

scene_config pulse_scene(double ppm)
{
    scene_config c;
    c.fs = 2e6;
    c.fc = 3e9;
    c.prf = 2e6 / 1000.5;
    c.waveform = lfm_chirp(1e6, 50e-6, 2e6); // 100 samples
    c.noise_power = 0.0;
    scene_target t;
    t.range_m = 30e3; // 400 samples
    c.targets = { t };
    c.clock_offset_ppm = ppm;
    return c;
}

// First non-zero sample of each PRI-long window after its nominal start.
std::vector<double> echo_starts(double ppm, std::size_t npulses)
{
    radar_scene s(pulse_scene(ppm));
    const std::size_t n = static_cast<std::size_t>(1000.5 * (npulses + 1));
    std::vector<cfloat> x(n);
    s.generate(x.data(), n);
    std::vector<double> starts;
    for (std::size_t k = 0; k < npulses; ++k) {
        const auto p0 = static_cast<std::size_t>(1000.5 * k);
        std::size_t i = p0;
        while (i < n && x[i] == cfloat(0.0f, 0.0f))
            ++i;
        starts.push_back(double(i));
    }
    return starts;
}

TEST(FrontEnd, test_008_clock_offset_walks_pulse_k_by_k_pri_ppm)
{
    // 400 ppm over 60 pulses of 1000.5 samples: 24 samples of walk, whole samples by
    // rounding, so each start is within 1 sample of the closed form.
    const double pri = 1000.5, d0 = 2 * 30e3 * 2e6 / 299792458.0;
    const std::size_t K = 60;
    const auto base = echo_starts(0.0, K);
    for (double ppm : { 400.0, -400.0 }) {
        const auto s = echo_starts(ppm, K);
        for (std::size_t k = 0; k < K; ++k) {
            const double eps = ppm * 1e-6;
            EXPECT_NEAR(s[k],
                        std::floor(k * pri * (1 + eps) + 0.5) +
                            std::round(d0 * (1 + eps)),
                        0.5)
                << "pulse " << k << " at " << ppm << " ppm";
            EXPECT_NEAR(s[k] - base[k], k * pri * eps, 1.01) << "pulse " << k;
        }
        EXPECT_NEAR((s[K - 1] - base[K - 1]) - (s[0] - base[0]),
                    (K - 1) * pri * ppm * 1e-6,
                    1.01);
        radar_scene sc(pulse_scene(ppm));
        EXPECT_DOUBLE_EQ(sc.pri_samples(), pri * (1 + ppm * 1e-6));
    }
}

TEST(FrontEnd, test_009_scene_and_channel_apply_it_to_every_channel)
{
    // The scene without impairments and with a DC offset: the difference is the offset,
    // on both channels of an array; the ADC's clips are reported by the scene.
    auto c = pulse_scene(0.0);
    c.noise_power = 1.0;
    c.seed = fresh_seed();
    c.array = array_config::make(2, 0.5, {}, c.fc, {}, {}, "radar_scene_source");
    radar_scene plain(c);
    c.front_end.dc_offset_i = 0.25;
    c.front_end.dc_offset_q = 0.5;
    radar_scene dc(c);
    const std::size_t n = 3000;
    std::vector<cfloat> p0(n), p1(n), d0(n), d1(n);
    cfloat* po[2] = { p0.data(), p1.data() };
    cfloat* dco[2] = { d0.data(), d1.data() };
    plain.generate(po, n);
    dc.generate(dco, n);
    for (std::size_t i = 0; i < n; ++i) {
        ASSERT_NEAR((d0[i] - p0[i]).real(), 0.25, 1e-5);
        ASSERT_NEAR((d1[i] - p1[i]).imag(), 0.5, 1e-5);
    }
    c.front_end = {};
    c.front_end.adc_bits = 4;
    c.front_end.adc_full_scale = 1.0; // unit-power noise: rails of sigma 0.7 clip
    radar_scene adc(c);
    adc.generate(dco, n);
    EXPECT_GT(adc.clipped(), n / 10);

    channel_config ch;
    ch.fs = 2e6;
    ch.fc = 3e9;
    ch.noise_power = 1.0;
    ch.seed = 5;
    radar_channel plain_ch(ch);
    ch.front_end.iq_gain_db = 1.0;
    radar_channel iq_ch(ch);
    std::vector<cfloat> in(n, cfloat(0.0f, 0.0f)), a(n), b(n);
    plain_ch.process(in.data(), a.data(), n);
    iq_ch.process(in.data(), b.data(), n);
    const double g = std::pow(10.0, 1.0 / 20);
    for (std::size_t i = 0; i < n; ++i) {
        ASSERT_FLOAT_EQ(b[i].real(), a[i].real());
        ASSERT_NEAR(b[i].imag(), g * a[i].imag(), 1e-5);
    }
    ch.front_end = {};
    ch.front_end.adc_bits = 3;
    radar_channel adc_ch(ch);
    adc_ch.process(in.data(), b.data(), n);
    EXPECT_GT(adc_ch.clipped(), n / 10);
}

TEST(FrontEnd, test_011_leakage_level_and_delay)
{
    // Leakage alone (no targets, no noise): pulse k's samples p_k + d .. p_k + d + L - 1
    // are A s, nothing else is non-zero; its power A^2 mean|s|^2 is its level.
    std::mt19937_64 r(fresh_seed());
    for (std::uint64_t d : { std::uint64_t(0), std::uint64_t(1 + r() % 800) }) {
        auto c = pulse_scene(0.0);
        c.targets.clear();
        c.leakage_amplitude = 50.0 + (r() % 1000) / 10.0;
        c.leakage_delay = d;
        radar_scene s(c);
        const std::size_t n = 10000;
        std::vector<cfloat> x(n);
        s.generate(x.data(), n);
        const std::size_t L = c.waveform.size();
        double wp = 0;
        for (auto v : c.waveform)
            wp += std::norm(std::complex<double>(v));
        wp /= double(L);
        for (std::uint64_t k = 0; s.timing().pulse_start(k) + d + L <= n; ++k) {
            const std::uint64_t e0 = s.timing().pulse_start(k) + d;
            double p = 0;
            for (std::size_t m = 0; m < L; ++m) {
                const auto want =
                    c.leakage_amplitude * std::complex<double>(c.waveform[m]);
                ASSERT_NEAR(std::abs(std::complex<double>(x[e0 + m]) - want),
                            0.0,
                            1e-5 * c.leakage_amplitude)
                    << "pulse " << k << " delay " << d;
                p += std::norm(std::complex<double>(x[e0 + m]));
            }
            EXPECT_NEAR(
                10 * std::log10(p / L / wp), 20 * std::log10(c.leakage_amplitude), 1e-4);
            if (e0 > 0)
                EXPECT_EQ(x[e0 - 1], cfloat(0.0f, 0.0f)) << "delay " << d;
            EXPECT_EQ(x[e0 + L], cfloat(0.0f, 0.0f)) << "delay " << d;
        }
    }
    auto c = pulse_scene(0.0);
    c.leakage_amplitude = 1.0;
    c.leakage_delay = 1000 - 100; // floor(PRI) - L: the last delay that fits
    radar_scene ok(c);
    c.leakage_delay += 1;
    expect_invalid(
        [&] { radar_scene s(c); }, "leakage_delay", "gpuradar::radar_scene_source");
}

TEST(FrontEnd, test_010_bad_parameters_named_before_allocation)
{
    const auto nan = std::nan("");
    auto fe = [](auto set) {
        return [set] {
            front_end_config c;
            set(c);
            front_end f(c, fs, 1, "radar_scene_source");
        };
    };
    const std::string p = "gpuradar::radar_scene_source";
    expect_invalid(fe([&](auto& c) { c.dc_offset_i = nan; }), "dc_offset_i", p);
    expect_invalid(fe([&](auto& c) { c.dc_offset_q = INFINITY; }), "dc_offset_q", p);
    expect_invalid(fe([&](auto& c) { c.iq_gain_db = nan; }), "iq_gain_db", p);
    expect_invalid(fe([&](auto& c) { c.iq_phase_deg = 90.0; }), "iq_phase_deg", p);
    expect_invalid(fe([&](auto& c) { c.iq_phase_deg = -90.0; }), "iq_phase_deg", p);
    expect_invalid(fe([&](auto& c) { c.phase_noise_linewidth_hz = -1.0; }),
                   "phase_noise_linewidth_hz",
                   p);
    expect_invalid(fe([&](auto& c) { c.phase_noise_linewidth_hz = fs / 2; }),
                   "phase_noise_linewidth_hz",
                   p);
    expect_invalid(fe([&](auto& c) { c.adc_bits = 33; }), "adc_bits", p);
    expect_invalid(fe([&](auto& c) { c.adc_full_scale = 0.0; }), "adc_full_scale", p);
    expect_invalid(fe([&](auto& c) { c.adc_full_scale = -1.0; }), "adc_full_scale", p);
    expect_invalid(
        fe([&](auto& c) { c.adc_full_scale = INFINITY; }), "adc_full_scale", p);
    // The boundaries pass.
    fe([](auto& c) {
        c.adc_bits = 32;
        c.iq_phase_deg = 89.9;
        c.phase_noise_linewidth_hz = fs / 2 * 0.999;
    })();
    fe([](auto& c) { c.adc_bits = 1; })();
    // Through the simulators, with their names.
    auto sc = pulse_scene(1000.0);
    radar_scene ok(sc);
    sc.clock_offset_ppm = 1000.5;
    expect_invalid([&] { radar_scene s(sc); }, "clock_offset_ppm", p);
    sc.clock_offset_ppm = 0;
    sc.front_end.adc_full_scale = 0;
    expect_invalid([&] { radar_scene s(sc); }, "adc_full_scale", p);
    channel_config ch;
    ch.fs = 2e6;
    ch.fc = 3e9;
    ch.front_end.adc_bits = 40;
    expect_invalid([&] { radar_channel c(ch); }, "adc_bits", "gpuradar::radar_channel");
}

} // namespace
} // namespace gpuradar::test
