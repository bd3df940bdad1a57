/* framer_copy: the CPU gather puts gate i (nrange samples at src + offsets[i]) at
 * dst + i * nrange; the CUDA gather (2-D copy for equal spacing, per-gate copies
 * otherwise) and copy equal the CPU's on fresh random data, output poisoned first. */
#include "invalid_argument_check.h"
#include "test_support.h"
#include <gpuradar/kernels/framer_copy.h>

namespace gpuradar::test {
namespace {

using kernels::cfloat;

std::vector<std::uint64_t>
uniform_offsets(std::size_t count, std::uint64_t first, std::uint64_t stride)
{
    std::vector<std::uint64_t> o(count);
    for (std::size_t i = 0; i < count; ++i)
        o[i] = first + i * stride;
    return o;
}

std::vector<std::uint64_t> fractional_offsets(std::size_t count, double pri)
{
    std::vector<std::uint64_t> o(count);
    for (std::size_t i = 0; i < count; ++i)
        o[i] = 3 + static_cast<std::uint64_t>(std::floor(i * pri + 0.5));
    return o;
}

TEST(FramerCopy, test_001_cpu_gather_places_gate_i_at_row_i)
{
    const std::size_t nrange = 37;
    const auto src = random_complex(5000, 1);
    for (const auto& offsets :
         { uniform_offsets(20, 11, 101), fractional_offsets(20, 100.0 / 3.0 * 3.1) }) {
        auto c = kernels::framer_copy::make(kernels::backend::cpu, 20 * nrange);
        std::vector<cfloat> dst(offsets.size() * nrange, cfloat(-7, -7));
        c->gather(dst.data(), src.data(), offsets, nrange);
        for (std::size_t i = 0; i < offsets.size(); ++i)
            for (std::size_t k = 0; k < nrange; ++k)
                ASSERT_EQ(dst[i * nrange + k], src[offsets[i] + k]) << i << " " << k;
    }
    expect_invalid([] { kernels::framer_copy::make(kernels::backend::cpu, 0); },
                   "cpi_samples");
}

TEST(FramerCopyCuda, test_010_gather_and_copy_match_cpu)
{
    GPURADAR_REQUIRE_CUDA();
    kernels::cuda_stream s;
    const std::size_t nrange = 300, count = 64;
    const auto src = random_complex(40000, 2);
    const auto d_src = to_device(src, s);
    for (const auto& offsets :
         { uniform_offsets(count, 5, 333), fractional_offsets(count, 1000.0 / 3.0) }) {
        auto cpu = kernels::framer_copy::make(kernels::backend::cpu, count * nrange);
        auto gpu =
            kernels::framer_copy::make(kernels::backend::cuda, count * nrange, s.ref());
        std::vector<cfloat> ref(count * nrange);
        cpu->gather(ref.data(), src.data(), offsets, nrange);
        kernels::device_memory d_dst(count * nrange * sizeof(cfloat)),
            d_out(count * nrange * sizeof(cfloat));
        poison(d_dst, s);
        poison(d_out, s);
        gpu->gather(d_dst.as<cfloat>(), d_src.as<cfloat>(), offsets, nrange);
        gpu->copy(d_out.as<cfloat>(), d_dst.as<cfloat>(), count * nrange);
        EXPECT_TRUE(to_host<cfloat>(d_dst, count * nrange, s) == ref);
        EXPECT_TRUE(to_host<cfloat>(d_out, count * nrange, s) == ref);
    }
}

} // namespace
} // namespace gpuradar::test
