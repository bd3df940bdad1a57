/*
 * The `device` parameter of every GPU block and the device buffer's edges between
 * devices. Without a GPU: a negative index is refused at construction naming `device`,
 * the CPU backend logs any other index and ignores it (same output as device 0). On one
 * GPU (suites named *Cuda*): an index out of range is refused naming `device` and the
 * range; a chain whose blocks name device 0 behaves as one that names none; and edges
 * copied as between two devices (device 0 to device 0, set_peer_copy_on_one_device)
 * give the same output with their bytes counted exactly in transfer_stats().peer_bytes.
 */
#include "../peer_edges.h"
#include "invalid_argument_check.h"
#include "stripmap_scene.h"
#include "test_support.h"
#include <gnuradio/blocks/vector_sink.h>
#include <gnuradio/blocks/vector_source.h>
#include <gnuradio/gpuradar/backprojection.h>
#include <gnuradio/gpuradar/beamformer.h>
#include <gnuradio/gpuradar/cfar_1d.h>
#include <gnuradio/gpuradar/cfar_2d.h>
#include <gnuradio/gpuradar/corner_turn.h>
#include <gnuradio/gpuradar/device_buffer.h>
#include <gnuradio/gpuradar/doppler_filter.h>
#include <gnuradio/gpuradar/envelope.h>
#include <gnuradio/gpuradar/multiply_const.h>
#include <gnuradio/gpuradar/pulse_compression.h>
#include <gnuradio/gpuradar/pulse_doppler_processor.h>
#include <gnuradio/gpuradar/pulse_framer.h>
#include <gnuradio/gpuradar/sar_focus.h>
#include <gnuradio/logger.h>
#include <gnuradio/top_block.h>
#include <gpuradar/kernels/common/device_split.h>
#include <spdlog/sinks/dist_sink.h>
#include <spdlog/sinks/ostream_sink.h>
#include <array>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

namespace gpuradar::test {
namespace {

namespace grr = gr::gpuradar;
using gr::blocks::vector_sink_f;
using gr::blocks::vector_source_c;

//! One GPU block made with only `backend` and `device` chosen; returns its device().
struct gpu_block {
    const char* name;
    std::function<int(const char* backend, int device)> make;
};

template <class Sptr>
int device_of(const Sptr& b)
{
    return b->device();
}

std::vector<gpu_block> every_gpu_block()
{
    const auto sar = small_stripmap();
    return {
        { "multiply_const",
          [](const char* b, int d) {
              return device_of(grr::multiply_const::make(gr_complex(2, 0), 4, b, d));
          } },
        { "envelope",
          [](const char* b, int d) {
              return device_of(grr::envelope::make(4, "square_law", false, b, d));
          } },
        { "corner_turn",
          [](const char* b, int d) {
              return device_of(grr::corner_turn::make(4, 16, 1, b, d));
          } },
        { "doppler_filter",
          [](const char* b, int d) {
              return device_of(grr::doppler_filter::make(
                  4, 16, 8, 1, "none", "rectangular", 4, 35, 6, true, b, d));
          } },
        { "pulse_compression",
          [](const char* b, int d) {
              return device_of(grr::pulse_compression::make(64,
                                                            4,
                                                            1,
                                                            "lfm",
                                                            {},
                                                            1e6,
                                                            4e-6,
                                                            4e6,
                                                            true,
                                                            "rectangular",
                                                            4,
                                                            35,
                                                            6,
                                                            false,
                                                            "auto",
                                                            b,
                                                            d));
          } },
        { "pulse_doppler_processor",
          [](const char* b, int d) {
              grr::pulse_doppler_processor::params cfg;
              cfg.nrange = 64;
              cfg.npulses = 4;
              cfg.nfft = 8;
              cfg.bandwidth = 1e6;
              cfg.pulse_width = 4e-6;
              cfg.samp_rate = 4e6;
              cfg.backend = b;
              cfg.device = d;
              return device_of(grr::pulse_doppler_processor::make(cfg));
          } },
        { "pulse_framer",
          [](const char* b, int d) {
              return device_of(grr::pulse_framer::make(
                  100, 0, 64, 4, 1e6, 1e9, "free", "trigger", 0, b, d));
          } },
        { "cfar_1d",
          [](const char* b, int d) {
              return device_of(grr::cfar_1d::make(
                  64, 1, 1, 8, 1e-6, "ca", 0, "clip", false, 1, 64, b, d));
          } },
        { "cfar_2d",
          [](const char* b, int d) {
              return device_of(grr::cfar_2d::make(64,
                                                  16,
                                                  1,
                                                  1,
                                                  5,
                                                  1,
                                                  1,
                                                  1e-6,
                                                  "ca",
                                                  0,
                                                  "clip",
                                                  "wrap",
                                                  false,
                                                  64,
                                                  b,
                                                  false,
                                                  false,
                                                  d));
          } },
        { "beamformer",
          [](const char* b, int d) {
              return device_of(grr::beamformer::make(4,
                                                     64,
                                                     { 0.0 },
                                                     0,
                                                     -45,
                                                     45,
                                                     0.5,
                                                     {},
                                                     0,
                                                     "taylor",
                                                     4,
                                                     35,
                                                     6,
                                                     b,
                                                     {},
                                                     1,
                                                     0,
                                                     0,
                                                     1,
                                                     d));
          } },
        { "sar_focus",
          [sar](const char* b, int d) {
              return device_of(
                  make_sar_focus(sar, 0, b, "csa", "rectangular", "rectangular", d));
          } },
        { "backprojection",
          [](const char* b, int d) {
              return device_of(grr::backprojection::make(
                  8, 4, 4, 0, 0, 1, 1, 0, 1, "restart", "fast", {}, b, 1, 1.0, d));
          } },
    };
}

//! Everything GNU Radio's loggers write while it lives.
class log_capture
{
public:
    log_capture()
        : d_sink(std::make_shared<spdlog::sinks::ostream_sink_mt>(d_text)),
          d_dist(std::dynamic_pointer_cast<spdlog::sinks::dist_sink_mt>(
              gr::logging::singleton().default_backend()))
    {
        gr::logging::singleton().set_default_level(gr::log_level::info);
        d_dist->add_sink(d_sink);
    }
    ~log_capture() { d_dist->remove_sink(d_sink); }
    std::string text() const { return d_text.str(); }

private:
    std::ostringstream d_text;
    spdlog::sink_ptr d_sink;
    std::shared_ptr<spdlog::sinks::dist_sink_mt> d_dist;
};

TEST(DeviceParameterCpu, test_001_negative_refused_naming_device)
{
    for (const auto& blk : every_gpu_block())
        expect_invalid([&] { blk.make("cpu", -1); },
                       "device must be >= 0 (got -1)",
                       std::string("gpuradar::") + blk.name);
}

TEST(DeviceParameterCpu, test_002_cpu_backend_logs_and_ignores_the_index)
{
    for (const auto& blk : every_gpu_block()) {
        log_capture log;
        EXPECT_EQ(blk.make("cpu", 5), 5) << blk.name;
        const std::string text = log.text();
        EXPECT_NE(text.find("device 5 ignored: the CPU backend runs on the host"),
                  std::string::npos)
            << blk.name << " logged: " << text;
        EXPECT_NE(text.find(blk.name), std::string::npos) << blk.name << ": " << text;
    }
    // Device 0 (the default) is not worth a log line.
    log_capture quiet;
    grr::envelope::make(4, "square_law", false, "cpu", 0);
    EXPECT_EQ(quiet.text().find("ignored"), std::string::npos) << quiet.text();
}

//! The devices of run_chain's three blocks.
using chain_devices = std::array<int, 3>;

// host -> multiply_const -> multiply_const -> envelope (dB) -> host on `backend`, the
// blocks on `devices`; the output, checked against the fp64 reference.
std::vector<float> run_chain(unsigned vlen,
                             std::size_t nitems,
                             const char* backend,
                             const chain_devices& devices)
{
    const auto x = random_complex(vlen * nitems, 77);
    const gr_complex k1(0.5f, 0.25f), k2(-1.5f, 2.0f);
    auto tb = gr::make_top_block("device_chain");
    auto src = vector_source_c::make(x, false, vlen);
    auto m1 = grr::multiply_const::make(k1, vlen, backend, devices[0]);
    auto m2 = grr::multiply_const::make(k2, vlen, backend, devices[1]);
    auto env = grr::envelope::make(vlen, "linear", true, backend, devices[2]);
    auto snk = vector_sink_f::make(vlen, nitems);
    tb->connect(src, 0, m1, 0);
    tb->connect(m1, 0, m2, 0);
    tb->connect(m2, 0, env, 0);
    tb->connect(env, 0, snk, 0);
    tb->run();
    const std::complex<double> k = std::complex<double>(k1) * std::complex<double>(k2);
    std::vector<double> ref(x.size());
    for (std::size_t i = 0; i < x.size(); ++i)
        ref[i] = 20.0 * std::log10(std::abs(std::complex<double>(x[i]) * k));
    EXPECT_EQ(snk->data().size(), x.size());
    EXPECT_LT(rel_l2(snk->data(), ref), 1e-5);
    return snk->data();
}

TEST(DeviceParameterCpu, test_003_cpu_output_the_same_whatever_the_index)
{
    const auto named = run_chain(16, 300, "cpu", { 3, 1, 2 });
    const auto plain = run_chain(16, 300, "cpu", { 0, 0, 0 });
    EXPECT_EQ(named, plain);
}

// ---- CUDA (skipped without a device) ----

TEST(DeviceParameterCuda, test_010_out_of_range_refused_naming_device_and_range)
{
    GPURADAR_REQUIRE_CUDA();
    const int count = kernels::cuda_device_count();
    const std::string range = "device must be 0 to " + std::to_string(count - 1);
    for (const auto& blk : every_gpu_block()) {
        const std::string prefix = std::string("gpuradar::") + blk.name;
        expect_invalid([&] { blk.make("cuda", count); },
                       range + " (got " + std::to_string(count) + ")",
                       prefix);
        expect_invalid([&] { blk.make("cuda", -1); }, range + " (got -1)", prefix);
        EXPECT_EQ(blk.make("cuda", count - 1), count - 1) << blk.name;
    }
}

//! Byte counts of a run of run_chain on CUDA.
grr::device_buffer::stats
counted_chain(unsigned vlen, std::size_t nitems, const chain_devices& devices)
{
    grr::device_buffer::reset_transfer_stats();
    run_chain(vlen, nitems, "cuda", devices);
    return grr::device_buffer::transfer_stats();
}

TEST(DeviceParameterCuda, test_011_device_zero_named_behaves_as_today)
{
    GPURADAR_REQUIRE_CUDA();
    const unsigned vlen = 64;
    const std::size_t nitems = 1000;
    const auto s = counted_chain(vlen, nitems, { 0, 0, 0 });
    EXPECT_EQ(s.h2d_bytes, vlen * nitems * sizeof(gr_complex)) << "input crosses once";
    EXPECT_EQ(s.d2h_bytes, vlen * nitems * sizeof(float)) << "output crosses once";
    EXPECT_EQ(s.peer_bytes, 0u) << "one device: edges read in place";
}

//! set_peer_copy_on_one_device(true) while it lives.
struct peer_copy_on_one_device {
    peer_copy_on_one_device() { grr::set_peer_copy_on_one_device(true); }
    ~peer_copy_on_one_device() { grr::set_peer_copy_on_one_device(false); }
};

TEST(DeviceParameterCuda, test_012_peer_edges_on_one_device_count_exact_bytes)
{
    GPURADAR_REQUIRE_CUDA();
    const peer_copy_on_one_device on;
    const unsigned vlen = 64;
    const std::size_t nitems = 1000;
    const std::uint64_t item_bytes = vlen * sizeof(gr_complex);
    const auto s =
        counted_chain(vlen, nitems, { 0, 0, 0 }); // output checked in run_chain
    // m1 -> m2 and m2 -> envelope are copied, every item once; the ends as before.
    EXPECT_EQ(s.peer_bytes, 2 * nitems * item_bytes);
    EXPECT_EQ(s.h2d_bytes, nitems * item_bytes);
    EXPECT_EQ(s.d2h_bytes, vlen * nitems * sizeof(float));
}

TEST(DeviceParameterCuda, test_013_peer_edges_through_buffer_wraps)
{
    GPURADAR_REQUIRE_CUDA();
    const peer_copy_on_one_device on;
    // 24-byte items, many times the 16 MiB buffers, counts that do not divide them: the
    // wrap-around callbacks move the readers' copy.
    const unsigned vlen = 3;
    const std::size_t nitems = std::size_t(3) << 20;
    const auto s = counted_chain(vlen, nitems, { 0, 0, 0 });
    EXPECT_EQ(s.peer_bytes, 2 * nitems * vlen * sizeof(gr_complex));
}

// pulses -> pulse_compression -> corner_turn -> doppler_filter -> envelope -> host, all
// on `backend`, block k on devices[k]: CPI blocks, whose edges are event-ordered on one
// device and copied between two.
constexpr unsigned cpi_np = 16, cpi_nr = 128, cpi_nfft = 32, cpi_count = 5;

std::vector<float> run_cpi_chain(const char* backend,
                                 const std::array<int, 4>& devices = { 0, 0, 0, 0 })
{
    const auto x = random_complex(std::size_t(cpi_count) * cpi_np * cpi_nr, 78);
    auto tb = gr::make_top_block("cpi_chain");
    auto src = vector_source_c::make(x, false, cpi_nr);
    auto pc = grr::pulse_compression::make(cpi_nr,
                                           cpi_np,
                                           1,
                                           "lfm",
                                           {},
                                           1e6,
                                           4e-6,
                                           4e6,
                                           true,
                                           "hann",
                                           4,
                                           35,
                                           6,
                                           false,
                                           "auto",
                                           backend,
                                           devices[0]);
    auto ct = grr::corner_turn::make(cpi_np, cpi_nr, 1, backend, devices[1]);
    auto df = grr::doppler_filter::make(
        cpi_np, cpi_nr, cpi_nfft, 1, "none", "hann", 4, 35, 6, true, backend, devices[2]);
    auto env = grr::envelope::make(cpi_nfft, "square_law", false, backend, devices[3]);
    auto snk = vector_sink_f::make(cpi_nfft);
    tb->connect(src, 0, pc, 0);
    tb->connect(pc, 0, ct, 0);
    tb->connect(ct, 0, df, 0);
    tb->connect(df, 0, env, 0);
    tb->connect(env, 0, snk, 0);
    tb->run();
    return snk->data();
}

/*!
 * Bytes the CPI chain copies when its three CPI edges cross devices: per CPI the
 * compressed pulses, the range-major CPI and the Doppler spectra, each once.
 */
constexpr std::uint64_t cpi_chain_edge_bytes =
    (2 * std::uint64_t(cpi_np) * cpi_nr + std::uint64_t(cpi_nr) * cpi_nfft) *
    sizeof(gr_complex) * cpi_count;

TEST(DeviceParameterCuda, test_015_cpi_chain_over_peer_edges_matches_the_cpu)
{
    GPURADAR_REQUIRE_CUDA();
    const auto cpu = run_cpi_chain("cpu");
    ASSERT_EQ(cpu.size(), std::size_t(cpi_count) * cpi_nr * cpi_nfft);
    const peer_copy_on_one_device on;
    grr::device_buffer::reset_transfer_stats();
    const auto gpu = run_cpi_chain("cuda");
    const auto s = grr::device_buffer::transfer_stats();
    ASSERT_EQ(gpu.size(), cpu.size());
    EXPECT_LE(rel_l2(gpu, cpu), 1e-5);
    EXPECT_EQ(s.peer_bytes, cpi_chain_edge_bytes);
}

TEST(DeviceParameterCuda, test_016_cpi_chain_on_device_one_and_across_equals_device_zero)
{
    GPURADAR_REQUIRE_CUDA();
    if (kernels::cuda_device_count() < 2)
        GTEST_SKIP() << "needs two CUDA devices";
    const auto on_zero = run_cpi_chain("cuda", { 0, 0, 0, 0 });
    ASSERT_EQ(on_zero.size(), std::size_t(cpi_count) * cpi_nr * cpi_nfft);
    grr::device_buffer::reset_transfer_stats();
    const auto on_one = run_cpi_chain("cuda", { 1, 1, 1, 1 });
    EXPECT_EQ(grr::device_buffer::transfer_stats().peer_bytes, 0u);
    EXPECT_LE(rel_l2(on_one, on_zero), 1e-6);
    // Every CPI edge crosses: 0 -> 1 -> 0 -> 1.
    grr::device_buffer::reset_transfer_stats();
    const auto across = run_cpi_chain("cuda", { 0, 1, 0, 1 });
    EXPECT_EQ(grr::device_buffer::transfer_stats().peer_bytes, cpi_chain_edge_bytes);
    EXPECT_LE(rel_l2(across, on_zero), 1e-6);
}

TEST(DeviceParameterCuda, test_014_edges_between_two_devices)
{
    GPURADAR_REQUIRE_CUDA();
    if (kernels::cuda_device_count() < 2)
        GTEST_SKIP() << "needs two CUDA devices";
    const unsigned vlen = 64;
    const std::size_t nitems = 1000;
    const std::uint64_t item_bytes = vlen * sizeof(gr_complex);
    // Device 0 -> 1 -> 0: both edges between the multipliers and the envelope cross.
    const auto s = counted_chain(vlen, nitems, { 0, 1, 0 }); // output checked
    EXPECT_EQ(s.peer_bytes, 2 * nitems * item_bytes);
    EXPECT_EQ(s.h2d_bytes, nitems * item_bytes);
    EXPECT_EQ(s.d2h_bytes, vlen * nitems * sizeof(float));
    // Both multipliers on device 1 (the input's host edge lands there), the envelope on
    // 0: only the edge into the envelope crosses.
    const auto t = counted_chain(vlen, nitems, { 1, 1, 0 });
    EXPECT_EQ(t.peer_bytes, nitems * item_bytes);
}

} // namespace
} // namespace gpuradar::test
