/* Test inputs in an SDR's integer formats (sample_convert.h): random interleaved codes
 * over the whole range with the extremes planted, and their exact complex float values,
 * shared by the conversion's tests and the stages that take sc16 / sc8 input. */
#ifndef INCLUDED_GPURADAR_TEST_SAMPLE_CONVERT_CODES_H
#define INCLUDED_GPURADAR_TEST_SAMPLE_CONVERT_CODES_H

#include <gpuradar/kernels/common/sample_convert.h>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace gpuradar::test {

//! Interleaved integer parts (2 per sample) uniformly over the whole code range, with
//! the extremes (most negative, most positive, 0, -1) planted at the start and the end.
template <typename Int>
std::vector<Int> random_codes(std::size_t samples, std::uint32_t seed)
{
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> u(std::numeric_limits<Int>::min(),
                                         std::numeric_limits<Int>::max());
    std::vector<Int> v(2 * samples);
    for (auto& x : v)
        x = static_cast<Int>(u(rng));
    const Int extremes[] = {
        std::numeric_limits<Int>::min(), std::numeric_limits<Int>::max(), Int(0), Int(-1)
    };
    for (std::size_t k = 0; k < 4 && k < v.size(); ++k) {
        v[k] = extremes[k];
        v[v.size() - 1 - k] = extremes[k];
    }
    return v;
}

//! A complex float signal quantised as an SDR would: each part rounded to the nearest
//! code at 1.0 = full scale (the caller keeps it inside full scale: no clipping here).
template <typename Int>
std::vector<Int> quantise(const std::vector<std::complex<float>>& x)
{
    const double code =
        sizeof(Int) == 2 ? kernels::sc16_full_scale_code : kernels::sc8_full_scale_code;
    std::vector<Int> q(2 * x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
        q[2 * i] = static_cast<Int>(std::lround(x[i].real() * code));
        q[2 * i + 1] = static_cast<Int>(std::lround(x[i].imag() * code));
    }
    return q;
}

//! The codes' exact values (sample_at, the scalar reference of every converter).
template <typename Int>
std::vector<std::complex<float>> exact_values(const std::vector<Int>& codes)
{
    const auto f =
        sizeof(Int) == 2 ? kernels::sample_format::sc16 : kernels::sample_format::sc8;
    std::vector<std::complex<float>> x(codes.size() / 2);
    for (std::size_t i = 0; i < x.size(); ++i)
        x[i] = kernels::sample_at(codes.data(), f, i);
    return x;
}

} // namespace gpuradar::test

#endif
