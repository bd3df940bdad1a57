/* framer_copy: the CPU gather puts gate i (nrange samples at src + offsets[i]) at
 * dst + i * nrange; copy_finite writes NaN / Inf samples as 0 and counts them per slot;
 * the CUDA gather (2-D copy for equal spacing, per-gate copies otherwise) and
 * copy_finite equal the CPU's on fresh random data, output poisoned first. */
#include "invalid_argument_check.h"
#include "test_support.h"
#include <gpuradar/kernels/pulse_doppler/framer_copy.h>
#include <cstdint>
#include <cstring>
#include <limits>
#include <set>

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
        gpu->copy_finite(d_out.as<cfloat>(), d_dst.as<cfloat>(), count * nrange, 0);
        EXPECT_TRUE(to_host<cfloat>(d_dst, count * nrange, s) == ref);
        EXPECT_TRUE(to_host<cfloat>(d_out, count * nrange, s) == ref);
    }
}

// sc16 / sc8 gates: gate i is converted (x / 32768, x / 128) into row i; the CUDA
// gather (one strided kernel for equal spacing, one per gate otherwise) equals the CPU's
// bit for bit.
template <typename Int>
std::vector<Int> random_parts(std::size_t samples, std::uint32_t seed)
{
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> u(std::numeric_limits<Int>::min(),
                                         std::numeric_limits<Int>::max());
    std::vector<Int> v(2 * samples);
    for (auto& x : v)
        x = static_cast<Int>(u(rng));
    v.front() = std::numeric_limits<Int>::min();
    v.back() = std::numeric_limits<Int>::max();
    return v;
}

TEST(FramerCopy, test_003_cpu_gather_converts_integer_gates)
{
    const std::size_t nrange = 37;
    const auto s16 = random_parts<std::int16_t>(5000, 4);
    const auto s8 = random_parts<std::int8_t>(5000, 5);
    for (const auto& offsets :
         { uniform_offsets(20, 0, 101), fractional_offsets(20, 100.0 / 3.0 * 3.1) }) {
        for (auto f : { kernels::sample_format::sc16, kernels::sample_format::sc8 }) {
            const void* src = f == kernels::sample_format::sc16
                                  ? static_cast<const void*>(s16.data())
                                  : static_cast<const void*>(s8.data());
            const double scale = f == kernels::sample_format::sc16 ? 32768.0 : 128.0;
            auto c = kernels::framer_copy::make(
                kernels::backend::cpu, 20 * nrange, kernels::stream_ref(), f);
            std::vector<cfloat> dst(offsets.size() * nrange, cfloat(-7, -7));
            c->gather(dst.data(), src, offsets, nrange);
            for (std::size_t i = 0; i < offsets.size(); ++i)
                for (std::size_t k = 0; k < nrange; ++k) {
                    const std::size_t j = 2 * (offsets[i] + k);
                    const double re = f == kernels::sample_format::sc16 ? s16[j] : s8[j];
                    const double im =
                        f == kernels::sample_format::sc16 ? s16[j + 1] : s8[j + 1];
                    ASSERT_EQ(dst[i * nrange + k].real(), re / scale) << i << " " << k;
                    ASSERT_EQ(dst[i * nrange + k].imag(), im / scale) << i << " " << k;
                }
            EXPECT_EQ(dst[0].real(), offsets[0] == 0 ? -1.0f : dst[0].real());
        }
    }
}

TEST(FramerCopyCuda, test_012_integer_gather_matches_cpu_bit_for_bit)
{
    GPURADAR_REQUIRE_CUDA();
    kernels::cuda_stream s;
    const std::size_t nrange = 300, count = 64;
    const std::uint32_t seed = std::random_device{}();
    SCOPED_TRACE("seed " + std::to_string(seed));
    const auto s16 = random_parts<std::int16_t>(40000, seed);
    const auto s8 = random_parts<std::int8_t>(40000, seed + 1);
    const auto d16 = to_device(s16, s);
    const auto d8 = to_device(s8, s);
    for (const auto& offsets :
         { uniform_offsets(count, 5, 333), fractional_offsets(count, 1000.0 / 3.0) }) {
        for (auto f : { kernels::sample_format::sc16, kernels::sample_format::sc8 }) {
            const bool is16 = f == kernels::sample_format::sc16;
            auto cpu = kernels::framer_copy::make(
                kernels::backend::cpu, count * nrange, kernels::stream_ref(), f);
            auto gpu = kernels::framer_copy::make(
                kernels::backend::cuda, count * nrange, s.ref(), f);
            std::vector<cfloat> ref(count * nrange);
            cpu->gather(ref.data(),
                        is16 ? static_cast<const void*>(s16.data())
                             : static_cast<const void*>(s8.data()),
                        offsets,
                        nrange);
            kernels::device_memory d_dst(count * nrange * sizeof(cfloat));
            poison(d_dst, s);
            gpu->gather(d_dst.as<cfloat>(), is16 ? d16.get() : d8.get(), offsets, nrange);
            const auto got = to_host<cfloat>(d_dst, count * nrange, s);
            EXPECT_EQ(std::memcmp(got.data(), ref.data(), ref.size() * sizeof(cfloat)), 0)
                << kernels::to_string(f);
        }
    }
}

// NaN, +Inf and -Inf in the real part, the imaginary part or both, at `count` distinct
// random positions of x; returns the positions.
std::set<std::size_t>
poison_samples(std::vector<cfloat>& x, std::size_t count, std::uint32_t seed)
{
    const float bad[] = { std::numeric_limits<float>::quiet_NaN(),
                          std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity() };
    std::mt19937 rng(seed);
    std::uniform_int_distribution<std::size_t> where(0, x.size() - 1);
    std::set<std::size_t> at;
    while (at.size() < count) {
        const std::size_t i = where(rng);
        if (!at.insert(i).second)
            continue;
        const float v = bad[rng() % 3];
        switch (rng() % 3) {
        case 0:
            x[i] = cfloat(v, x[i].imag());
            break;
        case 1:
            x[i] = cfloat(x[i].real(), v);
            break;
        default:
            x[i] = cfloat(v, bad[rng() % 3]);
        }
    }
    return at;
}

// Per slot: how many poisoned positions fall into [slot * len, (slot + 1) * len).
std::vector<std::uint64_t>
per_slot(const std::set<std::size_t>& at, std::size_t slots, std::size_t len)
{
    std::vector<std::uint64_t> c(slots, 0);
    for (std::size_t i : at)
        ++c[i / len];
    return c;
}

TEST(FramerCopy, test_002_cpu_copy_finite_zeroes_and_counts_per_slot)
{
    const std::size_t len = 999, slots = 5;
    auto src = random_complex(slots * len, 3);
    const auto clean = src;
    const auto at = poison_samples(src, 23, 4);
    auto c = kernels::framer_copy::make(kernels::backend::cpu, len);
    std::vector<cfloat> dst(slots * len, cfloat(-7, -7));
    for (std::size_t s = 0; s < slots; ++s)
        c->copy_finite(dst.data() + s * len, src.data() + s * len, len, s);
    for (std::size_t i = 0; i < dst.size(); ++i)
        ASSERT_EQ(dst[i], at.count(i) ? cfloat(0, 0) : clean[i]) << i;
    std::vector<std::uint64_t> counts(slots + 1, 99);
    c->take_nonfinite(counts.data(), counts.size());
    auto expected = per_slot(at, slots, len);
    expected.push_back(0); // a slot never written
    EXPECT_EQ(counts, expected);
    c->take_nonfinite(counts.data(), counts.size());
    EXPECT_EQ(counts, std::vector<std::uint64_t>(slots + 1, 0)) << "taken counts reset";
}

TEST(FramerCopyCuda, test_011_copy_finite_matches_cpu_over_many_slots)
{
    GPURADAR_REQUIRE_CUDA();
    kernels::cuda_stream s;
    // More slots than the CUDA copy starts with, so that its counters grow mid-batch; an
    // odd length, so that every other slot starts off 16-byte alignment (both kernels,
    // and the pair kernel's one-sample tail, run).
    const std::size_t len = 4099, slots = 21;
    for (std::uint32_t seed : { 5u, 6u }) {
        auto src = random_complex(slots * len, seed);
        const auto at = poison_samples(src, 3 * slots, seed + 100);
        auto cpu = kernels::framer_copy::make(kernels::backend::cpu, len);
        auto gpu = kernels::framer_copy::make(kernels::backend::cuda, len, s.ref());
        std::vector<cfloat> ref(slots * len);
        const auto d_src = to_device(src, s);
        kernels::device_memory d_out(slots * len * sizeof(cfloat));
        poison(d_out, s);
        for (std::size_t k = 0; k < slots; ++k) {
            cpu->copy_finite(ref.data() + k * len, src.data() + k * len, len, k);
            gpu->copy_finite(
                d_out.as<cfloat>() + k * len, d_src.as<cfloat>() + k * len, len, k);
        }
        std::vector<std::uint64_t> cpu_counts(slots), gpu_counts(slots);
        cpu->take_nonfinite(cpu_counts.data(), slots);
        gpu->take_nonfinite(gpu_counts.data(), slots);
        EXPECT_TRUE(to_host<cfloat>(d_out, slots * len, s) == ref);
        EXPECT_EQ(cpu_counts, per_slot(at, slots, len));
        EXPECT_EQ(gpu_counts, cpu_counts);
        // The next batch starts from zero: clean data counts nothing.
        const auto d_clean = to_device(random_complex(len, seed + 7), s);
        gpu->copy_finite(d_out.as<cfloat>(), d_clean.as<cfloat>(), len, 0);
        gpu->take_nonfinite(gpu_counts.data(), 1);
        EXPECT_EQ(gpu_counts[0], 0u);
    }
}

} // namespace
} // namespace gpuradar::test
