/*
 * doppler_filter: CPU twin against a direct fp64 DFT (every window, every MTI mode,
 * nfft > npulses, several rows); a point target through pulse compression -> corner
 * turn -> Doppler lands in its range and Doppler bins; bad input; CUDA against the CPU
 * twin, and the whole CUDA chain against the CPU chain.
 */
#include "invalid_argument_check.h"
#include "test_support.h"
#include <gpuradar/kernels/pulse_doppler/corner_turn.h>
#include <gpuradar/kernels/pulse_doppler/doppler_filter.h>
#include <gpuradar/kernels/pulse_doppler/pulse_compression.h>
#include <algorithm>
#include <cmath>

namespace gpuradar::test {
namespace {

using kernels::doppler_filter;
using kernels::window_spec;
using mti_mode = doppler_filter::mti_mode;
using cdouble = std::complex<double>;

constexpr double pi = 3.14159265358979323846;

// The definition in doppler_filter.h, in double: cancel, window, DFT at bins k - s.
std::vector<cdouble> reference(const std::vector<cfloat>& x,
                               std::size_t rows,
                               std::size_t npulses,
                               std::size_t nfft,
                               mti_mode mti,
                               const window_spec& win,
                               bool fftshift)
{
    const std::size_t m = npulses - doppler_filter::mti_order(mti);
    const auto w = kernels::window_coefficients(win, m);
    const double s = fftshift ? double(nfft / 2) : 0.0;
    std::vector<cdouble> y(rows * nfft);
    for (std::size_t r = 0; r < rows; ++r) {
        const cfloat* xr = x.data() + r * npulses;
        std::vector<cdouble> v(m);
        for (std::size_t n = 0; n < m; ++n) {
            const cdouble a(xr[n]);
            v[n] = mti == mti_mode::none ? a
                   : mti == mti_mode::two_pulse
                       ? cdouble(xr[n + 1]) - a
                       : cdouble(xr[n + 2]) - 2.0 * cdouble(xr[n + 1]) + a;
            v[n] *= w[n];
        }
        for (std::size_t k = 0; k < nfft; ++k) {
            cdouble acc = 0;
            for (std::size_t n = 0; n < m; ++n)
                acc +=
                    v[n] *
                    std::polar(1.0, -2 * pi * (double(k) - s) * double(n) / double(nfft));
            y[r * nfft + k] = acc;
        }
    }
    return y;
}

struct cpu_case {
    const char* window;
    mti_mode mti;
    std::size_t npulses, nfft;
    bool fftshift;
};

class DopplerFilterCpu : public ::testing::TestWithParam<cpu_case>
{
};

TEST_P(DopplerFilterCpu, test_001_matches_fp64_reference)
{
    const auto c = GetParam();
    // 2 channels x 15 range bins.
    const std::size_t rows = 30;
    const auto win = window_spec::make(c.window, 4, 35.0, 5.0);
    const auto x = random_complex(rows * c.npulses, 9);
    std::vector<cfloat> y(rows * c.nfft, cfloat(NAN, NAN));
    doppler_filter::make(
        kernels::backend::cpu, c.npulses, rows, c.nfft, c.mti, win, c.fftshift)
        ->run(x.data(), y.data());
    EXPECT_LT(rel_l2(y, reference(x, rows, c.npulses, c.nfft, c.mti, win, c.fftshift)),
              1e-5)
        << c.window << " mti=" << doppler_filter::to_string(c.mti)
        << " npulses=" << c.npulses << " nfft=" << c.nfft << " shift=" << c.fftshift;
}

std::vector<cpu_case> cpu_cases()
{
    std::vector<cpu_case> v;
    for (const char* w : { "rectangular",
                           "hamming",
                           "hann",
                           "blackman",
                           "taylor",
                           "kaiser",
                           "chebyshev" })
        for (mti_mode m : { mti_mode::none, mti_mode::two_pulse, mti_mode::three_pulse })
            v.push_back({ w, m, 48, 64, true });
    // nfft == npulses, odd nfft (shift by floor(nfft/2)), no shift, the smallest CPIs.
    v.push_back({ "hann", mti_mode::none, 64, 64, true });
    v.push_back({ "hamming", mti_mode::two_pulse, 50, 75, true });
    v.push_back({ "taylor", mti_mode::three_pulse, 33, 100, false });
    v.push_back({ "rectangular", mti_mode::none, 2, 2, true });
    v.push_back({ "rectangular", mti_mode::two_pulse, 2, 3, true });
    v.push_back({ "kaiser", mti_mode::three_pulse, 3, 8, false });
    return v;
}

INSTANTIATE_TEST_SUITE_P(WindowsAndModes,
                         DopplerFilterCpu,
                         ::testing::ValuesIn(cpu_cases()));

// A CPI of `channels` x npulses x nrange: an LFM echo at range bin `delay` with Doppler
// fd (Hz), channel c phase-rotated by c radians, plus a stationary echo at `clutter`.
struct scene {
    std::size_t channels = 2, npulses = 64, nrange = 600, nfft = 128;
    double prf = 1000.0, fd = 1000.0 * 11.0 / 128.0; // exactly Doppler bin +11
    std::size_t delay = 211, clutter = 400;
};

std::vector<cfloat> simulate(const scene& sc, const std::vector<cfloat>& s)
{
    std::vector<cfloat> x(sc.npulses * sc.channels * sc.nrange, cfloat(0, 0));
    for (std::size_t p = 0; p < sc.npulses; ++p)
        for (std::size_t c = 0; c < sc.channels; ++c) {
            cfloat* row = x.data() + (p * sc.channels + c) * sc.nrange;
            const auto target =
                std::polar(1.0, 2 * pi * sc.fd * double(p) / sc.prf + double(c));
            for (std::size_t k = 0; k < s.size(); ++k) {
                row[sc.delay + k] += cfloat(target * cdouble(s[k]));
                row[sc.clutter + k] += cfloat(3.0 * cdouble(s[k]));
            }
        }
    return x;
}

// Runs pulse compression -> corner turn -> Doppler on the CPU, returning the
// range-Doppler map (nrange x channels x nfft).
std::vector<cfloat> run_chain_cpu(const scene& sc,
                                  const std::vector<cfloat>& s,
                                  mti_mode mti,
                                  const std::vector<cfloat>& x)
{
    const auto b = kernels::backend::cpu;
    const std::size_t range_rows = sc.nrange * sc.channels;
    auto pc = kernels::pulse_compression::make(
        b, sc.nrange, sc.npulses * sc.channels, s, window_spec::make("hamming"), true);
    auto ct = kernels::corner_turn::make(b, sc.npulses, sc.nrange, sc.channels);
    auto df = doppler_filter::make(
        b, sc.npulses, range_rows, sc.nfft, mti, window_spec::make("taylor"), true);
    std::vector<cfloat> a(x.size()), t(x.size()), y(range_rows * sc.nfft);
    pc->run(x.data(), a.data());
    ct->run(a.data(), t.data());
    df->run(t.data(), y.data());
    return y;
}

double power(const std::vector<cfloat>& y,
             const scene& sc,
             std::size_t r,
             std::size_t c,
             std::size_t k)
{
    return std::norm(cdouble(y[(r * sc.channels + c) * sc.nfft + k]));
}

TEST(DopplerFilter, test_002_point_target_lands_in_its_range_and_doppler_bins)
{
    const scene sc;
    const auto s = kernels::lfm_chirp(5e6, 10e-6, 10e6); // 100 samples
    const auto x = simulate(sc, s);
    const std::size_t want_doppler = sc.nfft / 2 + 11;
    for (mti_mode mti : { mti_mode::none, mti_mode::two_pulse, mti_mode::three_pulse }) {
        const auto y = run_chain_cpu(sc, s, mti, x);
        for (std::size_t c = 0; c < sc.channels; ++c) {
            // The strongest cell away from zero Doppler is the moving target.
            std::size_t best_r = 0, best_k = 0;
            for (std::size_t r = 0; r < sc.nrange; ++r)
                for (std::size_t k = 0; k < sc.nfft; ++k)
                    if (std::abs(int(k) - int(sc.nfft / 2)) > 3 &&
                        power(y, sc, r, c, k) > power(y, sc, best_r, c, best_k)) {
                        best_r = r;
                        best_k = k;
                    }
            EXPECT_EQ(best_r, sc.delay)
                << doppler_filter::to_string(mti) << " channel " << c;
            EXPECT_EQ(best_k, want_doppler)
                << doppler_filter::to_string(mti) << " channel " << c;
        }
        // The stationary echo sits at zero Doppler (bin nfft/2) without MTI; a canceller
        // removes it (a zero-Doppler input gives exactly zero after [1,-1] or [1,-2,1]).
        const double clutter = power(y, sc, sc.clutter, 0, sc.nfft / 2);
        const double target = power(y, sc, sc.delay, 0, want_doppler);
        if (mti == mti_mode::none)
            EXPECT_GT(clutter, target);
        else
            EXPECT_LT(clutter, 1e-8 * target) << doppler_filter::to_string(mti);
    }
}

TEST(DopplerFilter, test_003_bad_parameters_name_the_parameter)
{
    const auto cpu = kernels::backend::cpu;
    // npulses: 2 passes (3 with three_pulse), one fewer throws.
    EXPECT_NO_THROW(doppler_filter::make(cpu, 2, 1, 2));
    EXPECT_NO_THROW(doppler_filter::make(cpu, 2, 1, 2, mti_mode::two_pulse));
    EXPECT_NO_THROW(doppler_filter::make(cpu, 3, 1, 4, mti_mode::three_pulse));
    expect_invalid([&] { doppler_filter::make(cpu, 1, 1, 2); },
                   "doppler_filter: npulses");
    expect_invalid([&] { doppler_filter::make(cpu, 2, 1, 4, mti_mode::three_pulse); },
                   "npulses must be >= 3 with mti three_pulse");
    // nfft: == npulses passes, npulses - 1 throws.
    EXPECT_NO_THROW(doppler_filter::make(cpu, 16, 1, 16));
    expect_invalid([&] { doppler_filter::make(cpu, 16, 1, 15); }, "nfft");
    expect_invalid([&] { doppler_filter::make(cpu, 16, 0, 16); }, "rows");
    expect_invalid([] { doppler_filter::parse_mti("four_pulse"); }, "mti");
    EXPECT_EQ(doppler_filter::parse_mti("three_pulse"), mti_mode::three_pulse);
    window_spec bad;
    bad.type = kernels::window_type::kaiser;
    bad.beta = -1;
    expect_invalid([&] { doppler_filter::make(cpu, 16, 1, 16, mti_mode::none, bad); },
                   "doppler_filter: beta");
}

// ---- CUDA against the CPU twin ----

TEST(DopplerFilterCuda, test_010_matches_cpu_twin)
{
    GPURADAR_REQUIRE_CUDA();
    kernels::cuda_stream stream;
    struct cuda_case {
        std::size_t rows, npulses, nfft;
        mti_mode mti;
        const char* window;
        bool shift;
    };
    const cuda_case cases[] = {
        { 30, 48, 64, mti_mode::none, "hann", true },
        { 30, 48, 64, mti_mode::two_pulse, "taylor", true },
        { 30, 48, 64, mti_mode::three_pulse, "chebyshev", true },
        { 7, 50, 75, mti_mode::two_pulse, "kaiser", true }, // odd nfft
        { 1000, 33, 100, mti_mode::three_pulse, "blackman", false },
        { 144000, 128, 128, mti_mode::none, "hamming", true },     // PD-A after the turn
        { 4096, 1024, 1024, mti_mode::two_pulse, "taylor", true }, // PD-C after the turn
    };
    std::uint32_t seed = 300;
    for (const auto& c : cases) {
        const auto win = window_spec::make(c.window, 4, 40.0, 6.0);
        const auto x = random_complex(c.rows * c.npulses, seed++);
        auto d_in = to_device(x, stream);
        kernels::device_memory d_out(c.rows * c.nfft * sizeof(cfloat));
        poison(d_out, stream);
        doppler_filter::make(kernels::backend::cuda,
                             c.npulses,
                             c.rows,
                             c.nfft,
                             c.mti,
                             win,
                             c.shift,
                             stream.ref())
            ->run(d_in.as<cfloat>(), d_out.as<cfloat>());
        std::vector<cfloat> want(c.rows * c.nfft);
        doppler_filter::make(
            kernels::backend::cpu, c.npulses, c.rows, c.nfft, c.mti, win, c.shift)
            ->run(x.data(), want.data());
        EXPECT_LT(rel_l2(to_host<cfloat>(d_out, want.size(), stream), want), 1e-5)
            << c.rows << "x" << c.npulses << " nfft=" << c.nfft
            << " mti=" << doppler_filter::to_string(c.mti);
    }
}

TEST(DopplerFilterCuda, test_011_chain_matches_cpu_chain)
{
    GPURADAR_REQUIRE_CUDA();
    kernels::cuda_stream stream;
    scene sc;
    sc.channels = 3;
    sc.nrange = 1111;
    const auto s = kernels::lfm_chirp(5e6, 20e-6, 10e6); // 200 taps: the fft path
    auto x = simulate(sc, s);
    const auto noise = random_complex(x.size(), 8, 0.1f);
    for (std::size_t i = 0; i < x.size(); ++i)
        x[i] += noise[i];
    const std::size_t range_rows = sc.nrange * sc.channels;
    const auto b = kernels::backend::cuda;
    auto pc =
        kernels::pulse_compression::make(b,
                                         sc.nrange,
                                         sc.npulses * sc.channels,
                                         s,
                                         window_spec::make("hamming"),
                                         true,
                                         kernels::pulse_compression::method::automatic,
                                         stream.ref());
    auto ct =
        kernels::corner_turn::make(b, sc.npulses, sc.nrange, sc.channels, stream.ref());
    auto df = doppler_filter::make(b,
                                   sc.npulses,
                                   range_rows,
                                   sc.nfft,
                                   mti_mode::two_pulse,
                                   window_spec::make("taylor"),
                                   true,
                                   stream.ref());
    auto d_x = to_device(x, stream);
    kernels::device_memory d_a(x.size() * sizeof(cfloat)), d_t(x.size() * sizeof(cfloat)),
        d_y(range_rows * sc.nfft * sizeof(cfloat));
    poison(d_y, stream);
    pc->run(d_x.as<cfloat>(), d_a.as<cfloat>());
    ct->run(d_a.as<cfloat>(), d_t.as<cfloat>());
    df->run(d_t.as<cfloat>(), d_y.as<cfloat>());
    const auto got = to_host<cfloat>(d_y, range_rows * sc.nfft, stream);
    EXPECT_LT(rel_l2(got, run_chain_cpu(sc, s, mti_mode::two_pulse, x)), 1e-5);
}

} // namespace
} // namespace gpuradar::test
