/* Sizes checked overflow-safe before any allocation: check_buffer_size itself, and every
 * stage's make() refusing huge sizes with the parameters and the memory in the message,
 * at once and without growing the process. */
#include "invalid_argument_check.h"
#include "test_support.h"
#include <gpuradar/kernels/common/buffer_size.h>
#include <gpuradar/kernels/detection/cfar_1d.h>
#include <gpuradar/kernels/detection/cfar_2d.h>
#include <gpuradar/kernels/pulse_doppler/corner_turn.h>
#include <gpuradar/kernels/pulse_doppler/doppler_filter.h>
#include <gpuradar/kernels/pulse_doppler/framer_copy.h>
#include <gpuradar/kernels/pulse_doppler/pulse_compression.h>
#include <gpuradar/kernels/pulse_doppler/pulse_doppler_processor.h>
#include <gpuradar/kernels/pulse_doppler/pulse_framer.h>
#include <sys/resource.h>
#include <chrono>
#include <string>
#include <vector>

namespace gpuradar::test {
namespace {

using kernels::check_buffer_size;
using kernels::max_buffer_bytes;
using kernels::max_buffer_elements;

constexpr std::size_t two_20 = std::size_t(1) << 20;
constexpr auto cpu = kernels::backend::cpu;

//! The message of the std::invalid_argument f() throws ("" and a failure if none).
template <typename F>
std::string message_of(F&& f)
{
    try {
        f();
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    ADD_FAILURE() << "no std::invalid_argument";
    return "";
}

long peak_rss_kib()
{
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

/*!
 * f() throws std::invalid_argument naming the stage, every text in `names` and the
 * memory in GiB; within a quarter of a second, and with the process's peak resident
 * memory grown by less than 64 MiB (nothing of the refused size was touched).
 */
template <typename F>
void expect_refused_before_allocation(F&& f,
                                      const std::string& stage,
                                      const std::vector<std::string>& names)
{
    const long rss_before = peak_rss_kib();
    const auto t0 = std::chrono::steady_clock::now();
    const std::string m = message_of(f);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_NE(m.find("gpuradar::" + stage + ": "), std::string::npos) << m;
    for (const auto& n : names)
        EXPECT_NE(m.find(n), std::string::npos) << n << " not in: " << m;
    EXPECT_NE(m.find(" GiB"), std::string::npos) << m;
    EXPECT_LT(seconds, 0.25) << m;
    EXPECT_LT(peak_rss_kib() - rss_before, 64 * 1024) << m;
}

TEST(BufferSize, test_001_limits_are_exact)
{
    // 8-byte elements: the byte limit binds (2^30 elements); 4-byte: the element limit.
    const std::size_t cfloats = max_buffer_bytes / sizeof(cfloat);
    EXPECT_EQ(check_buffer_size("s", { { "a", cfloats } }, 8, "b"), cfloats);
    expect_invalid(
        [&] {
            check_buffer_size("s", { { "a", cfloats + 1 } }, 8, "b");
        },
        "a");
    EXPECT_EQ(check_buffer_size("s", { { "a", max_buffer_elements } }, 4, "b"),
              max_buffer_elements);
    expect_invalid(
        [] {
            check_buffer_size("s", { { "a", max_buffer_elements + 1 } }, 4, "b");
        },
        "a");
    expect_invalid(
        [] {
            check_buffer_size("s", { { "a", max_buffer_elements + 1 } }, 1, "b");
        },
        "a");
    // Products, not factors: two factors each within the limit.
    EXPECT_EQ(check_buffer_size("s", { { "a", 1 << 15 }, { "b", 1 << 15 } }, 8, "c"),
              std::size_t(1) << 30);
    expect_invalid(
        [] {
            check_buffer_size("s", { { "a", 1 << 15 }, { "b", (1 << 15) + 1 } }, 8, "c");
        },
        "a * b");
    // A smaller byte limit (a GNU Radio item: int bytes).
    EXPECT_EQ(check_buffer_size(
                  "s", { { "a", (1 << 28) - 1 } }, 8, "b", kernels::max_item_bytes),
              std::size_t((1 << 28) - 1));
    expect_invalid(
        [] {
            check_buffer_size("s", { { "a", 1 << 28 } }, 8, "b", kernels::max_item_bytes);
        },
        "a");
}

TEST(BufferSize, test_002_overflow_is_caught_and_reported)
{
    // 2^32 * 2^32 wraps to 0 in 64 bits: without the overflow check it would pass.
    const std::size_t two_32 = std::size_t(1) << 32;
    const auto m = message_of([&] {
        check_buffer_size("stage", { { "x", two_32 }, { "y", two_32 } }, 8, "it");
    });
    EXPECT_NE(m.find("gpuradar::stage: x * y must be at most"), std::string::npos) << m;
    EXPECT_NE(m.find("x = 4294967296, y = 4294967296"), std::string::npos) << m;
    EXPECT_NE(m.find("would need 1.37e+11 GiB"), std::string::npos) << m;
    // 2^61 elements fit 64 bits, their 8-byte size does not (2^64 wraps to 0).
    expect_invalid(
        [] {
            check_buffer_size("s", { { "n", std::size_t(1) << 61 } }, 8, "b");
        },
        "GiB");
    // Wrapping to a small non-zero product: 2^32 + 1 times 2^32 - 1 = 2^64 - 1.
    expect_invalid(
        [&] {
            check_buffer_size("s", { { "p", two_32 + 1 }, { "q", two_32 - 1 } }, 1, "b");
        },
        "p * q");
}

TEST(BufferSize, test_003_message_names_the_buffer_limit_and_memory)
{
    const auto m = message_of([] {
        check_buffer_size("corner_turn",
                          { { "npulses", two_20 }, { "nrange", 1 << 13 } },
                          8,
                          "the CPI");
    });
    EXPECT_EQ(m,
              "gpuradar::corner_turn: npulses * nrange must be at most 1073741824 "
              "elements (8.00 GiB of 8-byte elements) for the CPI (got npulses = "
              "1048576, nrange = 8192, which would need 64 GiB)");
}

TEST(BufferSize, test_004_corner_turn_refuses_a_huge_cpi)
{
    expect_refused_before_allocation(
        [] { kernels::corner_turn::make(cpu, two_20, two_20); },
        "corner_turn",
        { "npulses * nrange * channels", "8192 GiB" });
    expect_refused_before_allocation(
        [] { kernels::corner_turn::make(cpu, 1024, 1024, two_20); },
        "corner_turn",
        { "channels = 1048576" });
}

TEST(BufferSize, test_005_doppler_filter_refuses_a_huge_map)
{
    expect_refused_before_allocation(
        [] { kernels::doppler_filter::make(cpu, 64, two_20, two_20); },
        "doppler_filter",
        { "rows * nfft" });
}

TEST(BufferSize, test_006_pulse_compression_refuses_huge_sizes)
{
    const auto s = random_complex(16, 1);
    expect_refused_before_allocation(
        [&] { kernels::pulse_compression::make(cpu, two_20, two_20, s); },
        "pulse_compression",
        { "rows * nrange" });
    // The CPI fits (2^30 samples), the FFT workspace (fft_length >= nrange + 15) does
    // not.
    expect_refused_before_allocation(
        [&] {
            kernels::pulse_compression::make(cpu,
                                             two_20,
                                             1024,
                                             s,
                                             kernels::window_spec(),
                                             false,
                                             kernels::pulse_compression::method::fft);
        },
        "pulse_compression",
        { "rows * fft_length" });
}

TEST(BufferSize, test_007_pulse_doppler_processor_refuses_a_huge_cpi)
{
    kernels::pulse_doppler_processor::params p;
    p.npulses = 1024;
    p.nrange = two_20;
    p.channels = 4;
    p.waveform = random_complex(16, 2);
    expect_refused_before_allocation(
        [&] { kernels::pulse_doppler_processor::make(cpu, p); },
        "pulse_doppler_processor",
        { "nfft * nrange * channels", "nfft = 1024" });
    // nfft alone can make it too large.
    p.npulses = 16;
    p.channels = 1;
    p.nrange = 1024;
    p.nfft = std::size_t(1) << 24;
    expect_refused_before_allocation(
        [&] { kernels::pulse_doppler_processor::make(cpu, p); },
        "pulse_doppler_processor",
        { "nfft = 16777216" });
}

TEST(BufferSize, test_008_cfar_refuses_huge_maps_and_lists)
{
    kernels::cfar_2d_params p2;
    p2.nrange = two_20;
    p2.ndoppler = two_20;
    expect_refused_before_allocation([&] { kernels::cfar_2d::make(cpu, p2); },
                                     "cfar_2d",
                                     { "max_cpi * nrange * channels * ndoppler" });
    p2.nrange = p2.ndoppler = 64;
    p2.max_detections = max_buffer_elements;
    expect_refused_before_allocation(
        [&] { kernels::cfar_2d::make(cpu, p2); }, "cfar_2d", { "max_detections" });

    kernels::cfar_1d_params p1;
    p1.nrange = 4096;
    p1.max_items = two_20;
    expect_refused_before_allocation([&] { kernels::cfar_1d::make(cpu, p1); },
                                     "cfar_1d",
                                     { "max_items * channels * nrange" });
}

TEST(BufferSize, test_009_framer_refuses_a_huge_cpi_or_input)
{
    kernels::framer_config c;
    c.fs = 1e6;
    c.fc = 1e9;
    c.trigger = kernels::trigger_mode::free;
    c.npulses = two_20;
    c.nrange = two_20;
    c.pri_samples = double(two_20);
    expect_refused_before_allocation(
        [&] { kernels::pulse_framer f(c); }, "pulse_framer", { "npulses * nrange" });
    expect_refused_before_allocation([&] { kernels::pulse_framer::validate(c); },
                                     "pulse_framer",
                                     { "npulses * nrange" });
    // A small CPI with a long PRI: GNU Radio would buffer npulses PRIs of input.
    c.npulses = 1 << 16;
    c.nrange = 16;
    expect_refused_before_allocation([&] { kernels::pulse_framer::validate(c); },
                                     "pulse_framer",
                                     { "npulses * ceil(pri)" });
    expect_refused_before_allocation(
        [] { kernels::framer_copy::make(cpu, std::size_t(1) << 40); },
        "framer_copy",
        { "cpi_samples" });
}

} // namespace
} // namespace gpuradar::test
