/*
 * sar_focus/block/<backend>: the sar_focus block in a steady flowgraph against the CSA
 * kernel on the same azimuth block (issue 14: the block within 1.2x of the kernel time
 * for the same scene).
 *
 *   host_replay_source (raw stripmap pulses, one pulse per item) -> sar_focus -> sink
 *   device_replay_source (CUDA only: the pulses already in device memory) -> ... (the
 *   same), a second line with pulses_from "device": the block's own overhead without
 *   PCIe, as behind a GPU upstream block.
 *
 * The pulses are simulated once, outside the timing (point targets plus noise), and
 * replayed in a loop (the device source repeats the first stride pulses). The block
 * focuses azimuth blocks of naz pulses that overlap by lead + trail pulses, so each block
 * brings stride = naz - lead - trail new pulses and emits stride rows: the sink notes
 * when each block's rows arrived, and the steady time per block is the spacing of those
 * arrivals after the first few (start-up excluded). In the same run: the kernel alone
 * (kernels::csa on the same parameters and naz; device-resident on CUDA, event-timed), so
 * that ratio_to_kernel compares one focused azimuth block with the kernel's focusing of
 * one block of the same size: that is the ratio the 1.2x target applies to.
 * ratio_per_new_pulse charges the overlap too (the block's time per new pulse over the
 * kernel's time per pulse of a block).
 *
 * Where a block's time goes besides the kernel, measured in the same run: on CUDA the
 * new pulses cross PCIe (the device buffer's host-to-device copy, on the block's stream,
 * before its kernels) and the block copies its stride rows out (device to device); the
 * replay source copies the new pulses into the flowgraph's buffer with its memcpy
 * threads. The bytes the device buffers moved are counted and set against the pinned
 * copy bandwidth, so that copy-bound and overhead-bound runs can be told apart
 * (limited_by).
 */
#include "../../lib/stripmap_blocks.h"
#include "bench_gr_blocks.h"
#include "bench_stripmap.h"
#include <gnuradio/gpuradar/device_buffer.h>
#include <gnuradio/top_block.h>
#include <gpuradar/kernels/common/cpu_threads.h>
#include <gpuradar/kernels/sar/csa.h>
#include <algorithm>

namespace gpuradar::bench {
namespace {

using pd::cfloat;
using pd::clock_type;

//! The issue-14 target: block time per focused azimuth block over the kernel's.
constexpr double target_ratio = 1.2;
//! Point targets in the replayed scene.
constexpr std::size_t scene_targets = 24;

struct focus_case {
    const char* backend;
    std::size_t nrange, naz;
    std::size_t skip_blocks;     //!< blocks before the steady timing starts
    std::size_t measured_blocks; //!< block spacings timed per run
    int runs;                    //!< flowgraph runs (median, spread)
};

focus_case pick_case(bool cuda, const options& opt)
{
    if (cuda)
        return opt.quick ? focus_case{ "cuda", 512, 1024, 2, 8, 1 }
                         : focus_case{ "cuda", 2048, 4096, 3, 40, 5 };
    return opt.quick ? focus_case{ "cpu", 512, 1024, 1, 3, 1 }
                     : focus_case{ "cpu", 1024, 1024, 2, 12, 5 };
}

//! The block of case c (CSA, rectangular windows).
gr::gpuradar::sar_focus::sptr make_block(const kernels::stripmap_params& p,
                                         const focus_case& c)
{
    return gr::gpuradar::make_sar_focus(p, unsigned(c.naz), c.backend);
}

//! Where the flowgraph's pulses come from.
enum class pulse_source {
    host,  //!< host_replay_source: on CUDA they cross PCIe through the device buffer
    device //!< device_replay_source (CUDA): already in device memory, no PCIe
};

struct flowgraph_run {
    double ms_per_block = -1;
    std::uint64_t pulses = 0, blocks = 0, failed_blocks = 0;
    gr::gpuradar::device_buffer::stats bytes;
};

/*!
 * One steady run of skip + 1 + measured blocks. The device source replays the scene's
 * first stride pulses over and over (whole repeats only, so it may send pulses the last
 * block does not need).
 */
flowgraph_run run_flowgraph(const kernels::stripmap_params& p,
                            const focus_case& c,
                            const std::vector<cfloat>& pulses,
                            pulse_source from,
                            const source_tuning& tuning)
{
    const bool cuda = std::string(c.backend) == "cuda";
    auto focus = make_block(p, c);
    const std::uint64_t stride = focus->stride();
    const std::uint64_t nblocks = c.skip_blocks + 1 + c.measured_blocks;
    const std::size_t row_bytes = p.nrange * sizeof(cfloat);
    flowgraph_run r;
    r.pulses = (nblocks - 1) * stride + focus->naz();
    auto tb = gr::make_top_block("sar_focus_block");
    kernels::device_memory stride_pulses;
    if (from == pulse_source::device) {
        stride_pulses =
            pd::to_device(pulses.data(), stride * p.nrange, kernels::cuda_stream());
        const std::uint64_t repeats = (r.pulses + stride - 1) / stride;
        r.pulses = repeats * stride;
        tb->connect(gnuradio::make_block_sptr<pd::device_replay_source>(
                        stride_pulses, row_bytes, int(stride), repeats),
                    0,
                    focus,
                    0);
    } else {
        tb->connect(gnuradio::make_block_sptr<pd::host_replay_source>(
                        pulses, r.pulses, stride, tuning, 0.0, 1, p.nrange),
                    0,
                    focus,
                    0);
    }
    std::function<double()> steady;
    if (cuda) {
        auto sink = gnuradio::make_block_sptr<pd::device_sink>(row_bytes, stride);
        tb->connect(focus, 0, sink, 0);
        steady = [sink, &c] { return sink->steady_ms_per_cpi(c.skip_blocks); };
    } else {
        auto sink = gnuradio::make_block_sptr<pd::host_sink>(row_bytes, stride);
        tb->connect(focus, 0, sink, 0);
        steady = [sink, &c] { return sink->arrivals().steady_ms_per_cpi(c.skip_blocks); };
    }
    gr::gpuradar::device_buffer::reset_transfer_stats();
    tb->run();
    r.bytes = gr::gpuradar::device_buffer::transfer_stats();
    r.ms_per_block = steady();
    r.blocks = focus->blocks();
    r.failed_blocks = focus->failed_blocks();
    return r;
}

//! Median milliseconds of f on the host (wall time), `repeats` calls after one warm-up.
template <typename F>
double host_ms(int repeats, F&& f)
{
    f();
    std::vector<double> t;
    for (int i = 0; i < repeats; ++i)
        t.push_back(1e3 * pd::seconds(f));
    return median(t);
}

//! The replay source's memcpy of one block's new pulses (its copy threads).
double source_memcpy_ms(const std::vector<cfloat>& pulses,
                        std::size_t bytes,
                        const source_tuning& tuning,
                        int repeats)
{
    pd::copy_pool pool(pd::copy_pool::threads_for(tuning.copy_threads));
    std::vector<cfloat> dst(bytes / sizeof(cfloat));
    return host_ms(repeats, [&] { pool.copy(dst.data(), pulses.data(), bytes); });
}

//! Host-to-device copy of `bytes` from pinned memory, GB/s.
double pinned_h2d_gb_per_s(std::size_t bytes, const kernels::cuda_stream& s, int repeats)
{
    kernels::pinned_memory host(bytes);
    std::memset(host.get(), 1, bytes);
    kernels::device_memory dev(bytes);
    const double ms = pd::time_ms(s, repeats, [&] {
        kernels::copy_async(dev.get(),
                            host.get(),
                            bytes,
                            kernels::copy_kind::host_to_device,
                            s.ref(),
                            "bench");
    });
    return double(bytes) / (ms * 1e6);
}

//! The CSA kernel on the scene's first naz pulses (device-resident on CUDA).
double kernel_ms_per_block(const kernels::stripmap_params& p,
                           const focus_case& c,
                           const std::vector<cfloat>& pulses,
                           int repeats)
{
    const std::size_t n = c.naz * p.nrange;
    if (std::string(c.backend) == "cpu") {
        auto f = kernels::csa::make(kernels::backend::cpu, p, c.naz, {});
        std::vector<cfloat> image(n);
        return host_ms(repeats, [&] { f->run(pulses.data(), image.data()); });
    }
    kernels::cuda_stream s;
    const auto raw = pd::to_device(pulses.data(), n, s);
    kernels::device_memory image(n * sizeof(cfloat));
    auto f = kernels::csa::make(kernels::backend::cuda, p, c.naz, {}, s.ref());
    return pd::time_ms(s, repeats, [&] { f->run(raw.as<cfloat>(), image.as<cfloat>()); });
}

/*!
 * What holds the block back when it misses the target: the host source's memcpy when it
 * alone takes longer than the block's work on its stream (it runs beside it), else the
 * copies queued on the block's stream with its kernels (`copies`) when they exceed the
 * target's allowance over the kernel, else the flowgraph's own overhead.
 */
std::string limited_by(double ratio,
                       double kernel_ms,
                       double source_ms,
                       double copies_ms,
                       const char* copies)
{
    if (ratio <= target_ratio)
        return "none";
    if (source_ms >= kernel_ms + copies_ms)
        return "source_host_memcpy";
    if (copies_ms > (target_ratio - 1.0) * kernel_ms)
        return copies;
    return "flowgraph_overhead";
}

//! What one benchmark measured besides the flowgraph runs.
struct focus_context {
    focus_case c;
    std::size_t stride;
    double kernel_ms;
    double source_ms; //!< host source memcpy per block (0: no host source)
};

//! Steady time per block, median of the runs.
double median_ms_per_block(const std::vector<flowgraph_run>& runs)
{
    std::vector<double> t;
    for (const auto& r : runs)
        t.push_back(r.ms_per_block);
    return median(t);
}

//! The runs' figures against the kernel's; the caller adds the copies and emits.
json_line focus_line(const char* name,
                     const focus_context& k,
                     const std::vector<flowgraph_run>& runs)
{
    std::uint64_t failed = 0;
    double lo = runs.front().ms_per_block, hi = lo;
    for (const auto& r : runs) {
        failed += r.failed_blocks;
        lo = std::min(lo, r.ms_per_block);
        hi = std::max(hi, r.ms_per_block);
    }
    const double ms = median_ms_per_block(runs), ratio = ms / k.kernel_ms;
    const auto naz = double(k.c.naz), stride = double(k.stride);
    json_line line(name);
    line.field("nrange", static_cast<long long>(k.c.nrange))
        .field("naz", static_cast<long long>(k.c.naz))
        .field("new_pulses_per_block", static_cast<long long>(k.stride))
        .field("overlap_pulses", static_cast<long long>(k.c.naz - k.stride))
        .field("scene_targets", static_cast<long long>(scene_targets))
        .field("runs", static_cast<long long>(runs.size()))
        .field("blocks_timed_per_run", static_cast<long long>(k.c.measured_blocks))
        .field("blocks_focused_last_run", static_cast<long long>(runs.back().blocks))
        .field("failed_blocks", static_cast<long long>(failed))
        .field("kernel_ms_per_block", k.kernel_ms)
        .field("block_ms_per_block", ms)
        .field("block_ms_min", lo)
        .field("block_ms_max", hi)
        .field("ratio_to_kernel", ratio)
        .field("ratio_per_new_pulse", ratio * naz / stride)
        .field("target_ratio", target_ratio)
        .field("target_applies_to",
               "ratio_to_kernel: one focused azimuth block of naz pulses, block vs "
               "kernel on the same block")
        .field("meets_target", ratio <= target_ratio)
        .field("pulses_per_s", stride / (ms * 1e-3))
        .field("kernel_pulses_per_s", naz / (k.kernel_ms * 1e-3))
        .field("kernel_new_pulses_per_s", stride / (k.kernel_ms * 1e-3));
    return line;
}

std::vector<flowgraph_run> run_flowgraphs(const kernels::stripmap_params& p,
                                          const focus_case& c,
                                          const std::vector<cfloat>& pulses,
                                          pulse_source from,
                                          const source_tuning& tuning)
{
    std::vector<flowgraph_run> runs;
    for (int r = 0; r < c.runs; ++r)
        runs.push_back(run_flowgraph(p, c, pulses, from, tuning));
    return runs;
}

//! The limit and whether host copies are it, then emits.
void emit_with_limit(json_line& line,
                     const focus_context& k,
                     double block_ms,
                     double copies_ms,
                     const char* copies)
{
    const std::string bound =
        limited_by(block_ms / k.kernel_ms, k.kernel_ms, k.source_ms, copies_ms, copies);
    line.field("limited_by", bound)
        .field("host_copy_bound",
               bound == "source_host_memcpy" || bound == "host_to_device_copy")
        .emit();
}

void bench_cpu(const options& opt)
{
    const focus_case c = pick_case(false, opt);
    const auto p = sar::bench_params(c.nrange);
    const std::size_t stride = make_block(p, c)->stride();
    const auto pulses = sar::raw_scene(p, 2 * c.naz, scene_targets);
    const int repeats = opt.quick ? 3 : std::max(3, std::min(opt.repeats, 5));
    const std::size_t new_bytes = stride * p.nrange * sizeof(cfloat);
    const focus_context k{ c,
                           stride,
                           kernel_ms_per_block(p, c, pulses, repeats),
                           source_memcpy_ms(pulses, new_bytes, opt.source, repeats) };
    const auto runs = run_flowgraphs(p, c, pulses, pulse_source::host, opt.source);
    auto line = focus_line("sar_focus/block/cpu", k, runs);
    line.field("device", "cpu")
        .field("threads", static_cast<long long>(kernels::cpu_threads()))
        .field("pulses_from", "host")
        .field("source_memcpy_ms_per_block", k.source_ms);
    emit_with_limit(line, k, median_ms_per_block(runs), 0.0, "none");
}

/*!
 * Two lines: pulses from the host (the device buffer copies each new pulse to the
 * device, on the block's stream before its kernels) and pulses already on the device
 * (the block's own overhead: its output copy and the flowgraph).
 */
void bench_cuda(const options& opt)
{
    const char* name = "sar_focus/block/cuda";
    if (!pd::have_cuda(name))
        return;
    const focus_case c = pick_case(true, opt);
    const auto p = sar::bench_params(c.nrange);
    const std::size_t stride = make_block(p, c)->stride();
    const auto pulses = sar::raw_scene(p, 2 * c.naz, scene_targets);
    const int repeats = opt.quick ? 3 : std::max(3, std::min(opt.repeats, 50));
    const std::size_t row_bytes = p.nrange * sizeof(cfloat),
                      new_bytes = stride * row_bytes;
    const double kernel_ms = kernel_ms_per_block(p, c, pulses, repeats);
    kernels::cuda_stream s;
    const double pinned = pinned_h2d_gb_per_s(new_bytes, s, repeats);
    const double d2d = pd::copy_gb_per_s(new_bytes, s, repeats);
    const double h2d_ms = double(new_bytes) / (pinned * 1e6);
    const double out_ms = 2.0 * double(new_bytes) / (d2d * 1e6); // read + write
    const std::string device = kernels::current_device_properties().name;
    for (const auto from : { pulse_source::host, pulse_source::device }) {
        const bool host = from == pulse_source::host;
        const focus_context k{
            c,
            stride,
            kernel_ms,
            host ? source_memcpy_ms(pulses, new_bytes, opt.source, repeats) : 0.0
        };
        const auto runs = run_flowgraphs(p, c, pulses, from, opt.source);
        const double ms = median_ms_per_block(runs);
        const auto& last = runs.back();
        const double h2d_per_pulse = double(last.bytes.h2d_bytes) / double(last.pulses);
        const double copies_ms = (host ? h2d_ms : 0.0) + out_ms;
        auto line = focus_line(name, k, runs);
        line.field("device", device)
            .field("pulses_from", host ? "host" : "device")
            .field("pulse_bytes", static_cast<long long>(row_bytes))
            .field("h2d_bytes_per_pulse", h2d_per_pulse)
            .field("d2d_bytes_last_run", static_cast<long long>(last.bytes.d2d_bytes))
            .field("d2h_bytes_last_run", static_cast<long long>(last.bytes.d2h_bytes))
            .field("pinned_h2d_gb_per_s", pinned)
            .field("d2d_copy_gb_per_s", d2d)
            .field("block_h2d_gb_per_s", h2d_per_pulse * double(stride) / (ms * 1e6))
            .field("h2d_ms_per_block_at_pinned", h2d_ms)
            .field("output_copy_ms_per_block", out_ms)
            .field("stream_serial_ms_per_block", kernel_ms + copies_ms);
        if (host)
            line.field("source_memcpy_ms_per_block", k.source_ms)
                .field("h2d_alone_exceeds_target",
                       h2d_ms > (target_ratio - 1.0) * kernel_ms);
        emit_with_limit(
            line, k, ms, copies_ms, host ? "host_to_device_copy" : "device_copies");
    }
}

} // namespace

GPURADAR_BENCH("sar_focus/block/cuda") { bench_cuda(opt); }
GPURADAR_BENCH("sar_focus/block/cpu") { bench_cpu(opt); }

} // namespace gpuradar::bench
