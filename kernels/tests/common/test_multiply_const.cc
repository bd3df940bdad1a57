/* multiply_const: CPU twin against an fp64 reference; CUDA against the CPU twin. */
#include "test_support.h"
#include <gpuradar/kernels/common/multiply_const.h>

namespace gpuradar::test {
namespace {

using kernels::multiply_const;

TEST(MultiplyConstCpu, test_001_matches_fp64_reference)
{
    const auto x = random_complex(1003, 11);
    const cfloat k(0.75f, -1.25f);
    std::vector<cfloat> y(x.size(), cfloat(NAN, NAN));
    multiply_const::make(kernels::backend::cpu)->run(x.data(), y.data(), x.size(), k);
    std::vector<std::complex<double>> ref(x.size());
    for (std::size_t i = 0; i < x.size(); ++i)
        ref[i] = std::complex<double>(x[i]) * std::complex<double>(k);
    EXPECT_LT(rel_l2(y, ref), 1e-6);
}

TEST(MultiplyConstCpu, test_002_in_place)
{
    auto x = random_complex(17, 12);
    const auto orig = x;
    multiply_const::make(kernels::backend::cpu)
        ->run(x.data(), x.data(), x.size(), cfloat(0, 1));
    for (std::size_t i = 0; i < x.size(); ++i)
        EXPECT_FLOAT_EQ(x[i].real(), -orig[i].imag());
}

TEST(MultiplyConstCuda, test_010_matches_cpu_twin)
{
    GPURADAR_REQUIRE_CUDA();
    kernels::cuda_stream stream;
    auto gpu = multiply_const::make(kernels::backend::cuda, stream.ref());
    auto cpu = multiply_const::make(kernels::backend::cpu);
    const cfloat k(-0.3f, 2.1f);
    std::uint32_t seed = 200;
    for (std::size_t n : { std::size_t(1), std::size_t(333), std::size_t(1) << 20 }) {
        for (std::size_t offset : { std::size_t(0), std::size_t(1) }) {
            const auto x = random_complex(n + offset, seed++);
            auto d_in = to_device(x, stream);
            kernels::device_memory d_out((n + offset) * sizeof(cfloat));
            poison(d_out, stream);
            gpu->run(d_in.as<cfloat>() + offset, d_out.as<cfloat>() + offset, n, k);
            const auto y = to_host<cfloat>(d_out, n + offset, stream);
            std::vector<cfloat> got(y.begin() + offset, y.end());
            std::vector<cfloat> want(n);
            cpu->run(x.data() + offset, want.data(), n, k);
            EXPECT_LT(rel_l2(got, want), 1e-5) << "n=" << n << " offset=" << offset;
        }
    }
}

} // namespace
} // namespace gpuradar::test
