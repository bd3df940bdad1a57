/* framer_copy: the CPU gather puts gate i (nrange samples at src + offsets[i]) at
 * dst + i * nrange; copy_finite writes NaN / Inf samples as 0 and counts them per slot,
 * clamps fc32 parts beyond +-framer_clamp_level and counts sc16 / sc8 samples at
 * +-full scale; the CUDA gather (2-D copy for equal spacing, per-gate copies otherwise)
 * and copy_finite equal the CPU's on fresh random data, output poisoned first. With
 * receiver corrections (front_end_correction.h) copy_finite screens each sample, then
 * corrects it by the estimate of the screened CPI: the same output as the plain copy
 * followed by the corrections of its output, the same counts, on both backends. */
#include "invalid_argument_check.h"
#include "test_support.h"
#include <gpuradar/kernels/pulse_doppler/framer_copy.h>
#include <cmath>
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

// The nonfinite counts of take_counts()'s slots.
std::vector<std::uint64_t>
nonfinite_of(const std::vector<kernels::framer_sample_counts>& c)
{
    std::vector<std::uint64_t> n;
    for (const auto& x : c)
        n.push_back(x.nonfinite);
    return n;
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
    std::vector<kernels::framer_sample_counts> counts(slots + 1, { 99, 99, 99 });
    c->take_counts(counts.data(), counts.size());
    auto expected = per_slot(at, slots, len);
    expected.push_back(0); // a slot never written
    EXPECT_EQ(nonfinite_of(counts), expected);
    for (const auto& k : counts)
        EXPECT_EQ(k.clamped + k.saturated, 0u) << "random data within +-1: none";
    c->take_counts(counts.data(), counts.size());
    EXPECT_EQ(nonfinite_of(counts), std::vector<std::uint64_t>(slots + 1, 0))
        << "taken counts reset";
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
        std::vector<kernels::framer_sample_counts> cpu_counts(slots), gpu_counts(slots);
        cpu->take_counts(cpu_counts.data(), slots);
        gpu->take_counts(gpu_counts.data(), slots);
        EXPECT_TRUE(to_host<cfloat>(d_out, slots * len, s) == ref);
        EXPECT_EQ(nonfinite_of(cpu_counts), per_slot(at, slots, len));
        EXPECT_TRUE(gpu_counts == cpu_counts);
        // The next batch starts from zero: clean data counts nothing.
        const auto d_clean = to_device(random_complex(len, seed + 7), s);
        gpu->copy_finite(d_out.as<cfloat>(), d_clean.as<cfloat>(), len, 0);
        gpu->take_counts(gpu_counts.data(), 1);
        EXPECT_TRUE(gpu_counts[0] == kernels::framer_sample_counts{});
    }
}

// fc32 samples with huge finite parts (3e38, -1e10, 65537: beyond the clamp level;
// exactly +-framer_clamp_level: not) at `count` random positions of x, in the real
// part, the imaginary part or both; returns the positions beyond the level.
std::set<std::size_t>
add_huge(std::vector<cfloat>& x, std::size_t count, std::uint32_t seed)
{
    const float L = kernels::framer_clamp_level;
    const float beyond[] = { 3e38f, -3e38f, -1e10f, L + 1.0f, -std::nextafter(L, 1e9f) };
    std::mt19937 rng(seed);
    std::uniform_int_distribution<std::size_t> where(0, x.size() - 1);
    std::set<std::size_t> at, touched;
    while (at.size() < count) {
        const std::size_t i = where(rng);
        if (!touched.insert(i).second)
            continue;
        if (rng() % 5 == 0) { // at the level: kept, not counted
            x[i] = cfloat(rng() % 2 ? L : -L, x[i].imag());
            continue;
        }
        at.insert(i);
        const float v = beyond[rng() % 5];
        switch (rng() % 3) {
        case 0:
            x[i] = cfloat(v, x[i].imag());
            break;
        case 1:
            x[i] = cfloat(x[i].real(), v);
            break;
        default:
            x[i] = cfloat(v, beyond[rng() % 5]);
        }
    }
    return at;
}

float clamp_ref(float v)
{
    const double L = kernels::framer_clamp_level;
    return float(std::max(-L, std::min(L, double(v))));
}

TEST(FramerCopy, test_004_cpu_copy_clamps_huge_fc32_parts_and_counts_per_slot)
{
    const std::size_t len = 777, slots = 3;
    auto src = random_complex(slots * len, 8);
    const auto huge = add_huge(src, 40, 9);
    const auto nonfinite = poison_samples(src, 5, 10); // may land on a huge one
    auto c = kernels::framer_copy::make(kernels::backend::cpu, len);
    std::vector<cfloat> dst(slots * len, cfloat(-7, -7));
    for (std::size_t k = 0; k < slots; ++k)
        c->copy_finite(dst.data() + k * len, src.data() + k * len, len, k);
    std::set<std::size_t> clamped;
    for (std::size_t i : huge)
        if (!nonfinite.count(i))
            clamped.insert(i);
    for (std::size_t i = 0; i < dst.size(); ++i) {
        const cfloat want = nonfinite.count(i) ? cfloat(0, 0)
                                               : cfloat(clamp_ref(src[i].real()),
                                                        clamp_ref(src[i].imag()));
        ASSERT_EQ(dst[i], want) << i;
    }
    std::vector<kernels::framer_sample_counts> counts(slots);
    c->take_counts(counts.data(), slots);
    const auto want_clamped = per_slot(clamped, slots, len);
    const auto want_nonfinite = per_slot(nonfinite, slots, len);
    for (std::size_t k = 0; k < slots; ++k) {
        EXPECT_EQ(counts[k].clamped, want_clamped[k]) << k;
        EXPECT_EQ(counts[k].nonfinite, want_nonfinite[k]) << k;
        EXPECT_EQ(counts[k].saturated, 0u) << "fc32 is clamped, never 'saturated'";
    }
    EXPECT_GT(clamped.size(), 30u);
}

// Integer gates with parts at the extreme codes (+max, min, -max: saturated) and one code
// inside (max - 1: not), then the CPI's copy: saturated samples are counted per slot and
// passed unchanged, nothing is clamped.
template <typename Int>
void check_saturated(kernels::sample_format f, kernels::backend b)
{
    const std::size_t len = 501, slots = 2;
    auto parts = random_parts<Int>(slots * len, 11);
    const Int hi = std::numeric_limits<Int>::max(), lo = std::numeric_limits<Int>::min();
    for (auto& p : parts) // no extreme codes but those placed below
        if (p == hi || p == lo || p == -hi)
            p = 0;
    std::mt19937 rng(12);
    std::set<std::size_t> sat;
    for (std::size_t n = 0; n < 60; ++n) {
        const std::size_t i = rng() % (slots * len);
        const Int extreme[] = { hi, lo, Int(-hi) };
        const Int v = extreme[rng() % 3];
        if (rng() % 4 == 0) {
            if (!sat.count(i)) // inside full scale: not counted
                parts[2 * i + rng() % 2] = Int(hi - 1);
            continue;
        }
        parts[2 * i + rng() % 2] = v;
        sat.insert(i);
    }
    const auto offsets = uniform_offsets(slots, 0, len);
    std::vector<cfloat> ref(slots * len), got(slots * len);
    auto cpu = kernels::framer_copy::make(
        kernels::backend::cpu, slots * len, kernels::stream_ref(), f);
    cpu->gather(cpu->staging(), parts.data(), offsets, len);
    for (std::size_t k = 0; k < slots; ++k)
        cpu->copy_finite(ref.data() + k * len, cpu->staging() + k * len, len, k);
    std::vector<kernels::framer_sample_counts> cpu_counts(slots), counts(slots);
    cpu->take_counts(cpu_counts.data(), slots);
    const auto want = per_slot(sat, slots, len);
    for (std::size_t k = 0; k < slots; ++k) {
        EXPECT_EQ(cpu_counts[k].saturated, want[k]) << kernels::to_string(f) << " " << k;
        EXPECT_EQ(cpu_counts[k].clamped + cpu_counts[k].nonfinite, 0u);
    }
    for (std::size_t i = 0; i < slots * len; ++i)
        ASSERT_EQ(ref[i], kernels::sample_at(parts.data(), f, i)) << "unchanged " << i;
    EXPECT_GT(sat.size(), 30u);
    if (b != kernels::backend::cuda)
        return;
#ifdef GPURADAR_HAVE_CUDA
    kernels::cuda_stream s;
    auto gpu =
        kernels::framer_copy::make(kernels::backend::cuda, slots * len, s.ref(), f);
    const auto d_parts = to_device(parts, s);
    kernels::device_memory d_out(slots * len * sizeof(cfloat));
    poison(d_out, s);
    gpu->gather(gpu->staging(), d_parts.get(), offsets, len);
    for (std::size_t k = 0; k < slots; ++k)
        gpu->copy_finite(d_out.as<cfloat>() + k * len, gpu->staging() + k * len, len, k);
    gpu->take_counts(counts.data(), slots);
    EXPECT_TRUE(counts == cpu_counts) << kernels::to_string(f);
    EXPECT_TRUE(to_host<cfloat>(d_out, slots * len, s) == ref) << kernels::to_string(f);
#endif
}

TEST(FramerCopy, test_005_cpu_counts_saturated_integer_samples)
{
    check_saturated<std::int16_t>(kernels::sample_format::sc16, kernels::backend::cpu);
    check_saturated<std::int8_t>(kernels::sample_format::sc8, kernels::backend::cpu);
}

TEST(FramerCopyCuda, test_013_clamp_and_saturation_match_cpu)
{
    GPURADAR_REQUIRE_CUDA();
    kernels::cuda_stream s;
    // An odd length: both the pair kernel and its one-sample tail screen samples.
    const std::size_t len = 2049, slots = 3;
    const std::uint32_t seed = std::random_device{}();
    SCOPED_TRACE("seed " + std::to_string(seed));
    auto src = random_complex(slots * len, seed);
    add_huge(src, 50, seed + 1);
    poison_samples(src, 5, seed + 2);
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
    std::vector<kernels::framer_sample_counts> cpu_counts(slots), gpu_counts(slots);
    cpu->take_counts(cpu_counts.data(), slots);
    gpu->take_counts(gpu_counts.data(), slots);
    EXPECT_TRUE(to_host<cfloat>(d_out, slots * len, s) == ref);
    EXPECT_TRUE(gpu_counts == cpu_counts);
    EXPECT_TRUE(bitwise_equal(to_host<cfloat>(d_src, slots * len, s), src))
        << "input unchanged (NaN included)";
    check_saturated<std::int16_t>(kernels::sample_format::sc16, kernels::backend::cuda);
    check_saturated<std::int8_t>(kernels::sample_format::sc8, kernels::backend::cuda);
}

// ---- copy_finite with receiver corrections
// ---------------------------------------------

kernels::front_end_correction_config corrections(std::size_t np,
                                                 std::size_t nr,
                                                 kernels::dc_removal dc,
                                                 kernels::leakage_suppression leak,
                                                 std::size_t gate = 0)
{
    kernels::front_end_correction_config c;
    c.npulses = np;
    c.nrange = nr;
    c.dc = dc;
    c.iq = true;
    c.leakage = leak;
    c.leakage_gate = gate;
    return c;
}

// Every mode: per-pulse and running DC, with the mean pulse and with a blanked gate.
std::vector<kernels::front_end_correction_config> correction_modes(std::size_t np,
                                                                   std::size_t nr)
{
    using kernels::dc_removal;
    using kernels::leakage_suppression;
    return { corrections(np, nr, dc_removal::pulse, leakage_suppression::mean_pulse),
             corrections(np, nr, dc_removal::running, leakage_suppression::blank, 5) };
}

std::string mode_name(const kernels::front_end_correction_config& c)
{
    return std::string(kernels::to_string(c.dc)) + " " + kernels::to_string(c.leakage);
}

// A receiver's CPI: noise with a DC per pulse and a Q rail of 1.2 Q + 0.1 I (an
// imbalance the I/Q correction finds), so that every correction changes the samples.
std::vector<cfloat> impaired(std::size_t np, std::size_t nr, std::uint32_t seed)
{
    auto x = random_complex(np * nr, seed);
    const auto dc = random_complex(np, seed + 1000, 3.0f);
    for (std::size_t i = 0; i < x.size(); ++i) {
        const cfloat v = x[i] + dc[i / nr];
        x[i] = cfloat(v.real(), 1.2f * v.imag() + 0.1f * v.real());
    }
    return x;
}

std::unique_ptr<kernels::framer_copy>
corrected_copy(kernels::backend b,
               const kernels::front_end_correction_config& c,
               kernels::stream_ref s = kernels::stream_ref(),
               kernels::sample_format f = kernels::sample_format::fc32)
{
    return kernels::framer_copy::make(
        b, c.npulses * c.nrange, s, f, kernels::front_end_correction::make(b, c, s));
}

// NaN / Inf and 3e38 samples in the raw CPI: the corrected copy counts them as the plain
// copy does and writes, bit for bit, the plain copy's output corrected by a second
// corrected copy (whose screen then changes nothing): the estimate is the screened
// CPI's, not the raw one's (one 3e38 sample would make it Inf).
TEST(FramerCopy, test_006_cpu_corrected_copy_is_screen_then_correction)
{
    const std::size_t np = 9, nr = 83, n = np * nr, slots = 3;
    for (const auto& c : correction_modes(np, nr)) {
        const std::string what = mode_name(c);
        auto fused = corrected_copy(kernels::backend::cpu, c);
        auto twin = corrected_copy(kernels::backend::cpu, c);
        auto plain = kernels::framer_copy::make(kernels::backend::cpu, n);
        for (std::size_t k = 0; k < slots; ++k) {
            auto src = impaired(np, nr, 40 + static_cast<std::uint32_t>(k));
            add_huge(src, 12, 60 + static_cast<std::uint32_t>(k));
            poison_samples(src, 4, 70 + static_cast<std::uint32_t>(k));
            std::vector<cfloat> got(n, cfloat(-7, -7)), screened(n), want(n);
            fused->copy_finite(got.data(), src.data(), n, k);
            plain->copy_finite(screened.data(), src.data(), n, k);
            twin->copy_finite(want.data(), screened.data(), n, k);
            EXPECT_TRUE(bitwise_equal(got, want)) << what << " slot " << k;
            EXPECT_GT(rel_l2(got, screened), 1e-3) << what << ": corrected at all";
            for (const cfloat& v : got)
                ASSERT_TRUE(std::isfinite(v.real()) && std::isfinite(v.imag())) << what;
        }
        std::vector<kernels::framer_sample_counts> cf(slots), cp(slots), ct(slots);
        fused->take_counts(cf.data(), slots);
        plain->take_counts(cp.data(), slots);
        twin->take_counts(ct.data(), slots);
        std::vector<kernels::iq_estimate> ef(slots), et(slots);
        fused->corrections()->take_estimates(ef.data(), slots);
        twin->corrections()->take_estimates(et.data(), slots);
        for (std::size_t k = 0; k < slots; ++k) {
            EXPECT_TRUE(cf[k] == cp[k]) << what << " slot " << k;
            EXPECT_GT(cf[k].nonfinite, 0u);
            EXPECT_GT(cf[k].clamped, 0u);
            EXPECT_TRUE(ct[k] == kernels::framer_sample_counts{}) << "screened already";
            EXPECT_TRUE(ef[k].corrected) << what << " slot " << k;
            EXPECT_EQ(ef[k].gain_db, et[k].gain_db) << what;
            EXPECT_EQ(ef[k].phase_deg, et[k].phase_deg) << what;
        }
    }
    // A copy of part of a CPI cannot be corrected; corrections for another CPI or
    // backend are refused when the copy is made.
    const auto c = correction_modes(np, nr)[0];
    auto fused = corrected_copy(kernels::backend::cpu, c);
    std::vector<cfloat> a(n), b(n);
    expect_invalid([&] { fused->copy_finite(b.data(), a.data(), n - 1, 0); },
                   "one whole CPI of " + std::to_string(n) + " samples (got " +
                       std::to_string(n - 1) + ")");
    expect_invalid(
        [&] {
            kernels::framer_copy::make(
                kernels::backend::cpu,
                n + 1,
                kernels::stream_ref(),
                kernels::sample_format::fc32,
                kernels::front_end_correction::make(kernels::backend::cpu, c));
        },
        "corrections must be made for a CPI of cpi_samples");
}

// sc16 / sc8 gates with saturated codes through the staging CPI, then the corrected copy:
// the saturated counts are the plain copy's and the output the plain copy's corrected.
template <typename Int>
void check_corrected_integers(kernels::sample_format f, kernels::backend b)
{
    const std::size_t np = 6, nr = 301, n = np * nr;
    const std::uint32_t seed = std::random_device{}();
    SCOPED_TRACE("seed " + std::to_string(seed) + " " + kernels::to_string(f));
    auto parts = random_parts<Int>(n, seed);
    std::mt19937 rng(seed);
    const Int hi = std::numeric_limits<Int>::max(), lo = std::numeric_limits<Int>::min();
    for (int i = 0; i < 40; ++i)
        parts[rng() % parts.size()] = rng() % 2 ? hi : lo;
    const auto offsets = uniform_offsets(np, 0, nr);
    for (const auto& c : correction_modes(np, nr)) {
        auto fused = corrected_copy(kernels::backend::cpu, c, kernels::stream_ref(), f);
        auto plain = kernels::framer_copy::make(
            kernels::backend::cpu, n, kernels::stream_ref(), f);
        auto twin = corrected_copy(kernels::backend::cpu, c);
        fused->gather(fused->staging(), parts.data(), offsets, nr);
        plain->gather(plain->staging(), parts.data(), offsets, nr);
        std::vector<cfloat> ref(n), screened(n), want(n);
        fused->copy_finite(ref.data(), fused->staging(), n, 0);
        plain->copy_finite(screened.data(), plain->staging(), n, 0);
        twin->copy_finite(want.data(), screened.data(), n, 0);
        EXPECT_TRUE(bitwise_equal(ref, want)) << mode_name(c);
        kernels::framer_sample_counts cf, cp;
        fused->take_counts(&cf, 1);
        plain->take_counts(&cp, 1);
        EXPECT_TRUE(cf == cp) << mode_name(c);
        EXPECT_GT(cf.saturated, 20u);
        kernels::iq_estimate ec;
        fused->corrections()->take_estimates(&ec, 1);
        if (b != kernels::backend::cuda)
            continue;
#ifdef GPURADAR_HAVE_CUDA
        kernels::cuda_stream s;
        auto gpu = corrected_copy(kernels::backend::cuda, c, s.ref(), f);
        const auto d_parts = to_device(parts, s);
        kernels::device_memory d_out(n * sizeof(cfloat));
        poison(d_out, s);
        gpu->gather(gpu->staging(), d_parts.get(), offsets, nr);
        gpu->copy_finite(d_out.as<cfloat>(), gpu->staging(), n, 0);
        kernels::framer_sample_counts cg;
        gpu->take_counts(&cg, 1);
        kernels::iq_estimate eg;
        gpu->corrections()->take_estimates(&eg, 1);
        EXPECT_TRUE(cg == cf) << mode_name(c);
        EXPECT_LE(rel_l2(to_host<cfloat>(d_out, n, s), ref), 1e-5) << mode_name(c);
        EXPECT_EQ(eg.corrected, ec.corrected) << mode_name(c);
        EXPECT_NEAR(eg.gain_db, ec.gain_db, 1e-6) << mode_name(c);
#endif
    }
}

TEST(FramerCopy, test_007_cpu_corrected_integer_copy_counts_saturation)
{
    check_corrected_integers<std::int16_t>(kernels::sample_format::sc16,
                                           kernels::backend::cpu);
    check_corrected_integers<std::int8_t>(kernels::sample_format::sc8,
                                          kernels::backend::cpu);
}

// The CUDA corrected copy against the CPU twin: fresh random CPIs with NaN / Inf and
// 3e38 samples, three slots (state carried), sizes not multiples of any block, output
// poisoned around each CPI; the same counts, the same samples to float rounding, the
// same estimates, the input unchanged.
TEST(FramerCopyCuda, test_014_corrected_copy_matches_cpu)
{
    GPURADAR_REQUIRE_CUDA();
    kernels::cuda_stream s;
    const std::size_t np = 37, nr = 301, n = np * nr, slots = 3, guard = 64;
    const std::uint32_t seed = std::random_device{}();
    SCOPED_TRACE("seed " + std::to_string(seed));
    for (const auto& c : correction_modes(np, nr)) {
        const std::string what = mode_name(c);
        auto cpu = corrected_copy(kernels::backend::cpu, c);
        auto gpu = corrected_copy(kernels::backend::cuda, c, s.ref());
        std::vector<cfloat> src, ref(slots * n);
        for (std::size_t k = 0; k < slots; ++k) {
            auto x = impaired(np, nr, seed + static_cast<std::uint32_t>(10 * k));
            add_huge(x, 20, seed + static_cast<std::uint32_t>(10 * k + 1));
            poison_samples(x, 6, seed + static_cast<std::uint32_t>(10 * k + 2));
            src.insert(src.end(), x.begin(), x.end());
        }
        const auto d_src = to_device(src, s);
        kernels::device_memory d_out((slots * n + 2 * guard) * sizeof(cfloat));
        poison(d_out, s);
        for (std::size_t k = 0; k < slots; ++k) {
            cpu->copy_finite(ref.data() + k * n, src.data() + k * n, n, k);
            gpu->copy_finite(
                d_out.as<cfloat>() + guard + k * n, d_src.as<cfloat>() + k * n, n, k);
        }
        std::vector<kernels::framer_sample_counts> cc(slots), cg(slots);
        cpu->take_counts(cc.data(), slots);
        gpu->take_counts(cg.data(), slots);
        std::vector<kernels::iq_estimate> ec(slots), eg(slots);
        cpu->corrections()->take_estimates(ec.data(), slots);
        gpu->corrections()->take_estimates(eg.data(), slots);
        const auto all = to_host<cfloat>(d_out, slots * n + 2 * guard, s);
        for (std::size_t k = 0; k < slots; ++k) {
            const std::vector<cfloat> got(all.begin() + guard + k * n,
                                          all.begin() + guard + (k + 1) * n);
            const std::vector<cfloat> want(ref.begin() + k * n,
                                           ref.begin() + (k + 1) * n);
            EXPECT_LE(rel_l2(got, want), 1e-5) << what << " slot " << k;
            EXPECT_TRUE(cg[k] == cc[k]) << what << " slot " << k;
            EXPECT_GT(cc[k].nonfinite + cc[k].clamped, 0u);
            EXPECT_TRUE(ec[k].corrected) << what;
            EXPECT_EQ(eg[k].corrected, ec[k].corrected) << what;
            EXPECT_NEAR(eg[k].gain_db, ec[k].gain_db, 1e-6) << what;
            EXPECT_NEAR(eg[k].phase_deg, ec[k].phase_deg, 1e-5) << what;
        }
        for (std::size_t i = 0; i < guard; ++i) {
            EXPECT_TRUE(std::isnan(all[i].real())) << what;
            EXPECT_TRUE(std::isnan(all[guard + slots * n + i].real())) << what;
        }
        EXPECT_TRUE(bitwise_equal(to_host<cfloat>(d_src, slots * n, s), src))
            << "input unchanged (NaN included)";
    }
    check_corrected_integers<std::int16_t>(kernels::sample_format::sc16,
                                           kernels::backend::cuda);
    check_corrected_integers<std::int8_t>(kernels::sample_format::sc8,
                                          kernels::backend::cuda);
}

// The CUDA gather with corrections takes the estimate's sums as it writes the staging
// CPI (gather_rows_with_sums), so that copy_finite reads it once. Against the CPU twin
// (whose estimate reads the CPI): a partial CPI gathered and dropped first (its sums must
// not leak into the next CPI), CPIs gathered in batches (a uniform one, one of unequal
// spacing, the rest; gates of stride != nrange), three CPIs (state carried), a last one
// copied from another buffer than the one gathered (its sums then come from a read
// pass); the staging CPI bit for bit the CPU's, the output to float rounding, the same
// counts and estimates.
TEST(FramerCopyCuda, test_015_gathered_sums_match_cpu)
{
    GPURADAR_REQUIRE_CUDA();
    kernels::cuda_stream s;
    const std::size_t np = 150, nr = 301, n = np * nr, cpis = 3, stride = nr + 7;
    const std::uint32_t seed = std::random_device{}();
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::vector<std::uint64_t> offsets(np);
    for (std::size_t i = 0; i < np; ++i)
        offsets[i] = i * stride + (i >= 50 && i < 53 ? (i - 49) * (i - 49) : 0);
    const std::size_t span = offsets.back() + nr;
    auto batch = [&](std::size_t a, std::size_t b) {
        return std::vector<std::uint64_t>(offsets.begin() + a, offsets.begin() + b);
    };
    for (const auto& c : correction_modes(np, nr)) {
        const std::string what = mode_name(c);
        auto cpu = corrected_copy(kernels::backend::cpu, c);
        auto gpu = corrected_copy(kernels::backend::cuda, c, s.ref());
        kernels::device_memory d_out(n * sizeof(cfloat)), d_other(n * sizeof(cfloat));
        // A partial CPI of large samples, dropped: only rows [0, 40) gathered.
        auto junk = random_complex(span, seed + 99, 50.0f);
        const auto d_junk = to_device(junk, s);
        cpu->gather(cpu->staging(), junk.data(), batch(0, 40), nr);
        gpu->gather(gpu->staging(), d_junk.get(), batch(0, 40), nr);
        for (std::size_t k = 0; k < cpis; ++k) {
            auto stream = impaired(1, span, seed + static_cast<std::uint32_t>(10 * k));
            add_huge(stream, 20, seed + static_cast<std::uint32_t>(10 * k + 1));
            poison_samples(stream, 6, seed + static_cast<std::uint32_t>(10 * k + 2));
            const auto d_stream = to_device(stream, s);
            for (const auto& [a, b] : { std::pair<std::size_t, std::size_t>{ 0, 50 },
                                        { 50, 53 },
                                        { 53, np } }) {
                cpu->gather(cpu->staging() + a * nr, stream.data(), batch(a, b), nr);
                gpu->gather(gpu->staging() + a * nr, d_stream.get(), batch(a, b), nr);
            }
            const std::vector<cfloat> staged(cpu->staging(), cpu->staging() + n);
            kernels::copy_async(d_other.get(),
                                gpu->staging(),
                                d_other.size(),
                                kernels::copy_kind::device_to_device,
                                s.ref(),
                                "test");
            EXPECT_TRUE(bitwise_equal(to_host<cfloat>(d_other, n, s), staged))
                << what << " CPI " << k << ": the gather's output";
            // The last CPI from elsewhere (the same samples).
            const cfloat* src = k + 1 == cpis ? d_other.as<cfloat>() : gpu->staging();
            poison(d_out, s);
            std::vector<cfloat> want(n);
            cpu->copy_finite(want.data(), cpu->staging(), n, k);
            gpu->copy_finite(d_out.as<cfloat>(), src, n, k);
            EXPECT_LE(rel_l2(to_host<cfloat>(d_out, n, s), want), 1e-5)
                << what << " CPI " << k;
        }
        std::vector<kernels::framer_sample_counts> cc(cpis), cg(cpis);
        cpu->take_counts(cc.data(), cpis);
        gpu->take_counts(cg.data(), cpis);
        std::vector<kernels::iq_estimate> ec(cpis), eg(cpis);
        cpu->corrections()->take_estimates(ec.data(), cpis);
        gpu->corrections()->take_estimates(eg.data(), cpis);
        for (std::size_t k = 0; k < cpis; ++k) {
            EXPECT_TRUE(cg[k] == cc[k]) << what << " CPI " << k;
            EXPECT_GT(cc[k].nonfinite + cc[k].clamped, 0u);
            EXPECT_TRUE(ec[k].corrected) << what;
            EXPECT_EQ(eg[k].corrected, ec[k].corrected) << what;
            EXPECT_NEAR(eg[k].gain_db, ec[k].gain_db, 1e-6) << what;
            EXPECT_NEAR(eg[k].phase_deg, ec[k].phase_deg, 1e-5) << what;
        }
    }
}

} // namespace
} // namespace gpuradar::test
