/* sample_convert: sc16 / sc8 to complex float at 1.0 = full scale (x / 32768, x / 128),
 * exact for every code including the extremes; rows with strides; the host scalar
 * sample_at() equals the VOLK converter bit for bit; the CUDA converter equals the CPU
 * twin bit for bit on fresh random integers (extremes planted), output poisoned first. */
#include "common/sample_convert_codes.h"
#include "invalid_argument_check.h"
#include "test_support.h"
#include <gpuradar/kernels/common/sample_convert.h>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace gpuradar::test {
namespace {

using kernels::sample_format;

std::uint32_t fresh_seed() { return std::random_device{}(); }

bool same_bits(const std::vector<cfloat>& a, const std::vector<cfloat>& b)
{
    return a.size() == b.size() &&
           std::memcmp(a.data(), b.data(), a.size() * sizeof(cfloat)) == 0;
}

TEST(SampleConvert, test_001_names_sizes_and_scales)
{
    EXPECT_EQ(kernels::parse_sample_format("fc32", "s", "p"), sample_format::fc32);
    EXPECT_EQ(kernels::parse_sample_format("sc16", "s", "p"), sample_format::sc16);
    EXPECT_EQ(kernels::parse_sample_format("sc8", "s", "p"), sample_format::sc8);
    for (auto f : { sample_format::fc32, sample_format::sc16, sample_format::sc8 })
        EXPECT_EQ(kernels::parse_sample_format(kernels::to_string(f), "s", "p"), f);
    EXPECT_EQ(kernels::sample_bytes(sample_format::fc32), 8u);
    EXPECT_EQ(kernels::sample_bytes(sample_format::sc16), 4u);
    EXPECT_EQ(kernels::sample_bytes(sample_format::sc8), 2u);
    for (const char* bad : { "", "cf32", "SC16", "s16", "sc12" })
        expect_invalid(
            [&] { kernels::parse_sample_format(bad, "pulse_framer", "input_type"); },
            "input_type must be one of fc32, sc16, sc8",
            "gpuradar::pulse_framer");
}

TEST(SampleConvert, test_002_cpu_scales_every_code_exactly)
{
    // Every int8 code and every int16 code, against the exact quotient in double.
    std::vector<std::int16_t> s16;
    for (int x = -32768; x <= 32767; ++x)
        s16.push_back(static_cast<std::int16_t>(x));
    std::vector<std::int8_t> s8;
    for (int x = -128; x <= 127; ++x)
        s8.push_back(static_cast<std::int8_t>(x));
    auto c16 = kernels::sample_convert::make(kernels::backend::cpu, sample_format::sc16);
    auto c8 = kernels::sample_convert::make(kernels::backend::cpu, sample_format::sc8);
    std::vector<cfloat> y16(s16.size() / 2, cfloat(NAN, NAN)),
        y8(s8.size() / 2, cfloat(NAN, NAN));
    c16->run(s16.data(), y16.data(), y16.size());
    c8->run(s8.data(), y8.data(), y8.size());
    for (std::size_t i = 0; i < y16.size(); ++i) {
        ASSERT_EQ(double(y16[i].real()), s16[2 * i] / 32768.0) << i;
        ASSERT_EQ(double(y16[i].imag()), s16[2 * i + 1] / 32768.0) << i;
        ASSERT_EQ(y16[i], kernels::sample_at(s16.data(), sample_format::sc16, i));
    }
    for (std::size_t i = 0; i < y8.size(); ++i) {
        ASSERT_EQ(double(y8[i].real()), s8[2 * i] / 128.0) << i;
        ASSERT_EQ(double(y8[i].imag()), s8[2 * i + 1] / 128.0) << i;
        ASSERT_EQ(y8[i], kernels::sample_at(s8.data(), sample_format::sc8, i));
    }
    EXPECT_EQ(y16.front().real(), -1.0f); // -32768: exactly -full scale
    EXPECT_EQ(y8.front().real(), -1.0f);
    EXPECT_EQ(y16.back().imag(), 32767.0f / 32768.0f);
    EXPECT_EQ(y8.back().imag(), 127.0f / 128.0f);
}

TEST(SampleConvert, test_003_cpu_rows_take_strides_in_input_samples)
{
    const std::size_t row_len = 13, nrows = 7, src_stride = 29, dst_stride = 17;
    const auto codes = random_codes<std::int16_t>(src_stride * nrows, 3);
    std::vector<cfloat> fc(src_stride * nrows);
    for (std::size_t i = 0; i < fc.size(); ++i)
        fc[i] = kernels::sample_at(codes.data(), sample_format::sc16, i);
    for (auto f : { sample_format::sc16, sample_format::fc32 }) {
        auto c = kernels::sample_convert::make(kernels::backend::cpu, f);
        std::vector<cfloat> out(dst_stride * nrows, cfloat(-7, -7));
        const void* src = f == sample_format::sc16
                              ? static_cast<const void*>(codes.data())
                              : static_cast<const void*>(fc.data());
        c->rows(src, src_stride, out.data(), dst_stride, row_len, nrows);
        for (std::size_t r = 0; r < nrows; ++r)
            for (std::size_t k = 0; k < dst_stride; ++k) {
                const cfloat want = k < row_len ? fc[r * src_stride + k]
                                                : cfloat(-7, -7); // gap untouched
                ASSERT_EQ(out[r * dst_stride + k], want)
                    << kernels::to_string(f) << r << k;
            }
    }
}

template <typename Int>
void check_cuda_matches_cpu(sample_format f, std::uint32_t seed)
{
    SCOPED_TRACE(std::string(kernels::to_string(f)) + " seed " + std::to_string(seed));
    kernels::cuda_stream s;
    // Lengths that are not multiples of the block size; one contiguous run and one
    // strided set of rows (a gather of gates).
    const std::size_t n = 100003, row_len = 301, nrows = 97, src_stride = 1009;
    const auto codes = random_codes<Int>(std::max(n, src_stride * nrows), seed);
    auto cpu = kernels::sample_convert::make(kernels::backend::cpu, f);
    auto gpu = kernels::sample_convert::make(kernels::backend::cuda, f, s.ref());
    const auto d_codes = to_device(codes, s);

    std::vector<cfloat> ref(n);
    cpu->run(codes.data(), ref.data(), n);
    kernels::device_memory d_out(n * sizeof(cfloat));
    poison(d_out, s);
    gpu->run(d_codes.get(), d_out.as<cfloat>(), n);
    EXPECT_TRUE(same_bits(to_host<cfloat>(d_out, n, s), ref));

    std::vector<cfloat> ref_rows(row_len * nrows);
    cpu->rows(codes.data(), src_stride, ref_rows.data(), row_len, row_len, nrows);
    kernels::device_memory d_rows(row_len * nrows * sizeof(cfloat));
    poison(d_rows, s);
    gpu->rows(d_codes.get(), src_stride, d_rows.as<cfloat>(), row_len, row_len, nrows);
    EXPECT_TRUE(same_bits(to_host<cfloat>(d_rows, row_len * nrows, s), ref_rows));
    // The input is left as it was.
    EXPECT_TRUE(to_host<Int>(d_codes, codes.size(), s) == codes);
}

TEST(SampleConvertCuda, test_010_conversion_equals_cpu_twin_bit_for_bit)
{
    GPURADAR_REQUIRE_CUDA();
    check_cuda_matches_cpu<std::int16_t>(sample_format::sc16, fresh_seed());
    check_cuda_matches_cpu<std::int8_t>(sample_format::sc8, fresh_seed());
}

// Row i of the output is row i of the input, whatever the strides; the gaps between
// output rows are not written. The second size has more rows than the kernel's grid
// (each block row then copies several).
TEST(SampleConvertCuda, test_011_fc32_rows_are_a_strided_copy)
{
    GPURADAR_REQUIRE_CUDA();
    kernels::cuda_stream s;
    struct size {
        std::size_t row_len, nrows, src_stride, dst_stride;
    };
    for (const size z : { size{ 301, 33, 517, 301 }, size{ 1500, 3000, 1501, 1503 } }) {
        const auto x = random_complex(z.src_stride * z.nrows, fresh_seed());
        const auto d_x = to_device(x, s);
        auto gpu = kernels::sample_convert::make(
            kernels::backend::cuda, sample_format::fc32, s.ref());
        kernels::device_memory d_out(z.dst_stride * z.nrows * sizeof(cfloat));
        poison(d_out, s);
        gpu->rows(d_x.get(),
                  z.src_stride,
                  d_out.as<cfloat>(),
                  z.dst_stride,
                  z.row_len,
                  z.nrows);
        const auto out = to_host<cfloat>(d_out, z.dst_stride * z.nrows, s);
        for (std::size_t r = 0; r < z.nrows; ++r) {
            for (std::size_t k = 0; k < z.row_len; ++k)
                ASSERT_EQ(out[r * z.dst_stride + k], x[r * z.src_stride + k])
                    << r << " " << k;
            for (std::size_t k = z.row_len; k < z.dst_stride; ++k)
                ASSERT_TRUE(std::isnan(out[r * z.dst_stride + k].real()))
                    << "gap written";
        }
    }
}

} // namespace
} // namespace gpuradar::test
