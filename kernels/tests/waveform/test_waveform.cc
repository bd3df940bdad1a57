/*
 * Waveforms by name: Barker, Frank and P4 codes against their textbook definitions in
 * fp64 (1-based formulas, written independently of the implementation), their
 * autocorrelation properties, the chip-to-sample expansion, the matched filter of
 * pulse_compression on a phase code, and the errors for bad codes.
 */
#include "invalid_argument_check.h"
#include "test_support.h"
#include <gpuradar/kernels/pulse_doppler/pulse_compression.h>
#include <gpuradar/kernels/waveform/waveform.h>
#include <algorithm>
#include <cmath>

namespace gpuradar::test {
namespace {

using cdouble = std::complex<double>;
constexpr double pi = 3.14159265358979323846;

//! |aperiodic autocorrelation| at lags 0 .. n-1.
std::vector<double> aperiodic_acf(const std::vector<cdouble>& s)
{
    std::vector<double> r(s.size());
    for (std::size_t lag = 0; lag < s.size(); ++lag) {
        cdouble a = 0;
        for (std::size_t k = 0; k + lag < s.size(); ++k)
            a += s[k + lag] * std::conj(s[k]);
        r[lag] = std::abs(a);
    }
    return r;
}

//! |periodic autocorrelation| at lags 0 .. n-1.
std::vector<double> periodic_acf(const std::vector<cdouble>& s)
{
    const std::size_t n = s.size();
    std::vector<double> r(n);
    for (std::size_t lag = 0; lag < n; ++lag) {
        cdouble a = 0;
        for (std::size_t k = 0; k < n; ++k)
            a += s[(k + lag) % n] * std::conj(s[k]);
        r[lag] = std::abs(a);
    }
    return r;
}

std::vector<cdouble> unit_phasors(const std::vector<double>& ph)
{
    std::vector<cdouble> s;
    for (const double p : ph)
        s.push_back(std::polar(1.0, p));
    return s;
}

double max_sidelobe(const std::vector<double>& r)
{
    return *std::max_element(r.begin() + 1, r.end());
}

TEST(Waveform, test_001_barker_codes_and_sidelobes)
{
    // Barker 13 as tabulated (Levanon & Mozeson, Radar Signals, table 6.1).
    const std::vector<int> b13 = { 1, 1, 1, 1, 1, -1, -1, 1, 1, -1, 1, -1, 1 };
    EXPECT_EQ(kernels::barker_code(13), b13);
    for (const std::size_t n : { 2u, 3u, 4u, 5u, 7u, 11u, 13u }) {
        const auto code = kernels::barker_code(n);
        ASSERT_EQ(code.size(), n);
        std::vector<cdouble> s;
        for (const int c : code)
            s.push_back(c);
        const auto r = aperiodic_acf(s);
        EXPECT_DOUBLE_EQ(r[0], double(n));
        // The Barker property: every sidelobe 0 or 1 in magnitude, so peak sidelobe 1/N.
        EXPECT_DOUBLE_EQ(max_sidelobe(r), 1.0) << "barker:" << n;
    }
    expect_invalid([] { kernels::barker_code(6); }, "waveform");
}

TEST(Waveform, test_002_frank_phases)
{
    for (std::size_t m = 2; m <= 9; ++m) {
        const std::size_t n = m * m;
        const auto ph = kernels::frank_phases(n);
        ASSERT_EQ(ph.size(), n);
        // phi(i, j) = 2 pi (i-1)(j-1) / M, i, j = 1 .. M, chip (i-1) M + j.
        for (std::size_t i = 1; i <= m; ++i)
            for (std::size_t j = 1; j <= m; ++j) {
                const double want = 2.0 * pi * double(i - 1) * double(j - 1) / double(m);
                const cdouble got = std::polar(1.0, ph[(i - 1) * m + (j - 1)]);
                EXPECT_NEAR(std::abs(got - std::polar(1.0, want)), 0.0, 1e-12);
            }
        // Frank codes have a perfect periodic autocorrelation.
        const auto r = periodic_acf(unit_phasors(ph));
        EXPECT_NEAR(r[0], double(n), 1e-9);
        EXPECT_LT(max_sidelobe(r), 1e-9 * n) << "frank:" << n;
        // Aperiodic peak sidelobe well below the peak (about N / (pi M) for large M).
        EXPECT_LT(max_sidelobe(aperiodic_acf(unit_phasors(ph))), 0.5 * n);
    }
    expect_invalid([] { kernels::frank_phases(15); }, "waveform");
    expect_invalid([] { kernels::frank_phases(1); }, "waveform");
}

TEST(Waveform, test_003_p4_phases)
{
    for (const std::size_t n : { 2u, 7u, 16u, 25u, 64u, 101u }) {
        const auto ph = kernels::p4_phases(n);
        ASSERT_EQ(ph.size(), n);
        // phi_i = pi (i-1)^2 / N - pi (i-1), i = 1 .. N.
        for (std::size_t i = 1; i <= n; ++i) {
            const double k = double(i - 1);
            const double want = pi * k * k / double(n) - pi * k;
            EXPECT_NEAR(
                std::abs(std::polar(1.0, ph[i - 1]) - std::polar(1.0, want)), 0.0, 1e-9);
        }
        const auto r = periodic_acf(unit_phasors(ph));
        EXPECT_LT(max_sidelobe(r), 1e-9 * n) << "p4:" << n;
    }
    expect_invalid([] { kernels::p4_phases(1); }, "waveform");
}

TEST(Waveform, test_004_chips_to_samples)
{
    // 13 chips in 13 us at 4 MHz: 4 samples per chip, 52 samples.
    const auto s = kernels::make_waveform("barker:13", 0.0, 13e-6, 4e6);
    ASSERT_EQ(s.size(), 52u);
    const auto code = kernels::barker_code(13);
    for (std::size_t i = 0; i < s.size(); ++i)
        EXPECT_EQ(s[i], cfloat(float(code[i / 4]), 0.0f)) << i;
    // Rounded to whole samples per chip: 10 us / 13 chips at 4 MHz = 3.08 -> 3.
    EXPECT_EQ(kernels::samples_per_chip(13, 10e-6, 4e6), 3u);
    EXPECT_EQ(kernels::make_waveform("barker:13", 0.0, 10e-6, 4e6).size(), 39u);
    // Frank 16 at one sample per chip equals exp(j phases).
    const auto f = kernels::make_waveform("frank:16", 0.0, 16e-6, 1e6);
    const auto ph = kernels::frank_phases(16);
    ASSERT_EQ(f.size(), 16u);
    for (std::size_t i = 0; i < 16; ++i)
        EXPECT_NEAR(std::abs(cdouble(f[i]) - std::polar(1.0, ph[i])), 0.0, 1e-6);
    EXPECT_EQ(kernels::make_waveform("p4:64", 0.0, 32e-6, 4e6).size(), 128u);
    // lfm is lfm_chirp.
    EXPECT_EQ(kernels::make_waveform("lfm", 1e6, 20e-6, 2e6, false),
              kernels::lfm_chirp(1e6, 20e-6, 2e6, false));
}

TEST(Waveform, test_005_pulse_compression_of_barker13)
{
    // The matched filter of pulse_compression on Barker 13 (one sample per chip): the
    // peak is 13 at the echo's start and every other bin at most 1 in magnitude.
    const auto s = kernels::make_waveform("barker:13", 0.0, 13e-6, 1e6);
    const std::size_t nrange = 64, at = 20;
    std::vector<cfloat> x(nrange, cfloat(0.0f, 0.0f)), y(nrange, cfloat(-7.0f, 3.0f));
    const cfloat a(0.6f, -0.8f); // unit amplitude, arbitrary phase
    for (std::size_t k = 0; k < s.size(); ++k)
        x[at + k] = a * s[k];
    for (const auto m : { kernels::pulse_compression::method::fir,
                          kernels::pulse_compression::method::fft }) {
        auto pc = kernels::pulse_compression::make(
            kernels::backend::cpu, nrange, 1, s, kernels::window_spec(), false, m);
        pc->run(x.data(), y.data());
        EXPECT_NEAR(std::abs(y[at]), 13.0, 1e-4);
        for (std::size_t d = 0; d < nrange; ++d)
            if (d != at)
                EXPECT_LE(std::abs(y[d]), 1.0 + 1e-4) << d;
    }
}

TEST(Waveform, test_006_bad_codes)
{
    expect_invalid([] { kernels::make_waveform("chirp", 1e6, 1e-5, 2e6); },
                   "waveform must be one of lfm, barker:N");
    expect_invalid([] { kernels::make_waveform("barker", 1e6, 1e-5, 2e6); }, "'barker'");
    expect_invalid([] { kernels::make_waveform("frank:x", 1e6, 1e-5, 2e6); }, "p4:N");
    expect_invalid([] { kernels::make_waveform("frank:15", 1e6, 1e-5, 2e6); }, "M^2");
    expect_invalid([] { kernels::make_waveform("barker:6", 1e6, 1e-5, 2e6); },
                   "barker:N");
    expect_invalid(
        [] { kernels::make_waveform("bogus", 1e6, 1e-5, 2e6, true, "blk", "custom"); },
        "custom (got 'bogus')",
        "gpuradar::blk");
    // Fewer than half a sample per chip.
    expect_invalid([] { kernels::make_waveform("p4:64", 0.0, 10e-6, 3e6); },
                   "pulse_width");
    expect_invalid([] { kernels::make_waveform("p4:64", 0.0, 10e-6, 0.0); }, "samp_rate");
    expect_invalid([] { kernels::make_waveform("lfm", 3e6, 10e-6, 2e6, true, "blk"); },
                   "bandwidth_hz",
                   "gpuradar::blk (lfm)");
}

// A pulse-width typo (100 s instead of 100 us) must be refused by its length, naming the
// parameter and the memory, before the pulse is built: each call returns at once.
TEST(Waveform, test_007_too_long_refused_before_building)
{
    const double fs = 10e6;
    expect_invalid([&] { kernels::lfm_chirp(5e6, 100.0, fs, true); }, "GiB");
    expect_invalid([&] { kernels::make_waveform("lfm", 5e6, 100.0, fs, true, "blk"); },
                   "pulse_width_s",
                   "gpuradar::blk (lfm)");
    // Large enough to overflow any integer sample count.
    expect_invalid([&] { kernels::make_waveform("lfm", 5e6, 1e300, fs); }, "at most");
    expect_invalid([&] { kernels::make_waveform("p4:1024", 0.0, 100.0, fs); },
                   "pulse_width");
    // The longest pulse allowed is still built.
    const double longest = double(kernels::max_waveform_samples) / fs;
    EXPECT_EQ(kernels::make_waveform("barker:13", 0.0, longest, fs).size(),
              13 * std::size_t(std::llround(longest * fs / 13)));
}

} // namespace
} // namespace gpuradar::test
