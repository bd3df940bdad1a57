/*
 * Shared helpers for the GoogleTest suites: random data, error norms, device round
 * trips and the GPU skip rule. Suites that need a GPU have "Cuda" in their name and
 * start with GPURADAR_REQUIRE_CUDA(): without a usable device they are skipped, unless
 * GPURADAR_REQUIRE_GPU=1 is set (the GPU host runner), where a missing device fails.
 */
#ifndef INCLUDED_GPURADAR_TEST_SUPPORT_H
#define INCLUDED_GPURADAR_TEST_SUPPORT_H

#include <gpuradar/kernels/common/backend.h>
#include <gpuradar/kernels/common/cuda_resources.h>
#include <gtest/gtest.h>
#include <cmath>
#include <complex>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

namespace gpuradar::test {

using kernels::cfloat;

inline bool gpu_required()
{
    const char* v = std::getenv("GPURADAR_REQUIRE_GPU");
    return v && std::strcmp(v, "1") == 0;
}

#define GPURADAR_REQUIRE_CUDA()                                             \
    do {                                                                    \
        if (!::gpuradar::kernels::cuda_available()) {                       \
            if (::gpuradar::test::gpu_required())                           \
                FAIL() << "GPURADAR_REQUIRE_GPU=1 but no CUDA device: "     \
                       << ::gpuradar::kernels::cuda_unavailable_reason();   \
            GTEST_SKIP() << "no CUDA device: "                              \
                         << ::gpuradar::kernels::cuda_unavailable_reason(); \
        }                                                                   \
    } while (0)

//! Complex Gaussian samples, unit power per component. No sample is exactly 0 (seen
//! once in 12.5M draws): its dB envelope is -inf in both the result and the reference.
inline std::vector<cfloat>
random_complex(std::size_t n, std::uint32_t seed, float scale = 1.0f)
{
    std::mt19937 rng(seed);
    std::normal_distribution<float> g(0.0f, scale);
    std::vector<cfloat> v(n);
    for (auto& x : v) {
        do
            x = cfloat(g(rng), g(rng));
        while (x == cfloat(0.0f, 0.0f));
    }
    return v;
}

//! ||a - b|| / ||b|| in double precision; NaN anywhere gives +inf (never passes).
template <typename A, typename B>
double rel_l2(const std::vector<A>& a, const std::vector<B>& b)
{
    if (a.size() != b.size())
        return INFINITY;
    double num = 0, den = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const std::complex<double> x(a[i]), y(b[i]);
        if (std::isnan(x.real()) || std::isnan(x.imag()) || std::isnan(y.real()) ||
            std::isnan(y.imag()))
            return INFINITY;
        num += std::norm(x - y);
        den += std::norm(y);
    }
    return den > 0 ? std::sqrt(num / den) : (num > 0 ? INFINITY : 0.0);
}

//! Equal bit for bit: also for NaN, which == never calls equal to itself.
template <typename T>
bool bitwise_equal(const std::vector<T>& a, const std::vector<T>& b)
{
    return a.size() == b.size() &&
           std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

//! A device copy of a host vector, and back again, on the given stream (synchronised).
template <typename T>
kernels::device_memory to_device(const std::vector<T>& host,
                                 const kernels::cuda_stream& s)
{
    kernels::device_memory d(host.size() * sizeof(T));
    kernels::copy_async(d.get(),
                        host.data(),
                        d.size(),
                        kernels::copy_kind::host_to_device,
                        s.ref(),
                        "test");
    s.synchronize("test");
    return d;
}

template <typename T>
std::vector<T>
to_host(const kernels::device_memory& d, std::size_t n, const kernels::cuda_stream& s)
{
    std::vector<T> host(n);
    kernels::copy_async(host.data(),
                        d.get(),
                        n * sizeof(T),
                        kernels::copy_kind::device_to_host,
                        s.ref(),
                        "test");
    s.synchronize("test");
    return host;
}

//! 0xFF bytes: every float becomes NaN, so an element the kernel skipped cannot pass.
inline void poison(kernels::device_memory& d, const kernels::cuda_stream& s)
{
    kernels::fill_bytes_async(d.get(), 0xFF, d.size(), s.ref(), "test");
}

} // namespace gpuradar::test

#endif
