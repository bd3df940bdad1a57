/* host_fft: the neutral layer's host FFT against a direct DFT in double. */
#include "common/host_fft.h"
#include "test_support.h"
#include <cmath>
#include <complex>
#include <random>
#include <vector>

namespace gpuradar::test {
namespace {

using kernels::cfloat;

std::vector<cfloat> direct_dft(const std::vector<cfloat>& x)
{
    constexpr double pi = 3.14159265358979323846;
    const std::size_t n = x.size();
    std::vector<cfloat> y(n);
    for (std::size_t f = 0; f < n; ++f) {
        std::complex<double> acc = 0;
        for (std::size_t t = 0; t < n; ++t)
            acc += std::complex<double>(x[t]) *
                   std::polar(1.0, -2 * pi * double((f * t) % n) / double(n));
        y[f] = cfloat(acc);
    }
    return y;
}

// Lengths FFTW factors differently: a power of two, a mixed radix, a prime.
TEST(HostFft, test_001_forward_unnormalised_dft)
{
    std::mt19937 rng(34);
    std::normal_distribution<float> g;
    for (const std::size_t n : { 64u, 60u, 97u }) {
        std::vector<cfloat> x(n);
        for (auto& v : x)
            v = cfloat(g(rng), g(rng));
        const auto want = direct_dft(x);
        kernels::detail::host_fft_forward(x, "test");
        double worst = 0, peak = 0;
        for (std::size_t f = 0; f < n; ++f) {
            worst = std::max(worst, double(std::abs(x[f] - want[f])));
            peak = std::max(peak, double(std::abs(want[f])));
        }
        // Single precision: a few ulps of the largest bin, times log2(n) passes.
        EXPECT_LT(worst, 1e-5 * peak) << "n = " << n;
        EXPECT_GT(peak, 1.0) << "n = " << n; // the input was not zeros
    }
}

TEST(HostFft, test_002_empty_stays_empty)
{
    std::vector<cfloat> x;
    kernels::detail::host_fft_forward(x, "test");
    EXPECT_TRUE(x.empty());
}

} // namespace
} // namespace gpuradar::test
