/*
 * e2e/PD/two_gpu: two simulated SDRs in one flowgraph (issue 16), each
 *   host_replay_source -> pulse_framer -> pulse_doppler_processor -> cfar_2d
 *   (mask -> device sink; detections -> its own detections_timer)
 * run in the same process: one chain alone on device 0, both chains on device 0 (one
 * GPU), then chain 0 on device 0 and chain 1 on device k, for every other device k
 * (on a host whose GPUs share PCIe switches, the pairs' host-to-device links differ).
 * Per run: the aggregate samples/s (the chains' samples over the wall time of
 * tb.run(), fill included) and each chain's steady samples/s (the spacing of its
 * detections PDUs after the first two CPIs, as e2e/PD), the peer bytes (0: the chains
 * share no edge) and the dropped CPIs; then, per pair, the two-GPU / one-GPU ratio of
 * the aggregate and of the chains' steady rates summed (2000 CPIs a chain, so that the
 * start of two devices' plans and buffers weighs little in the aggregate), against
 * both chains on one GPU and against one chain alone. Before them, the host's ceiling:
 * the two sources alone into null sinks, and the two sources with their framers (the
 * host-to-device copies) on one GPU and on each pair. With fewer than two CUDA devices
 * it prints one line, "skipped": true, with the reason.
 * Host input: each workload runs from fc32 host samples, then from the same quantised to
 * sc16 as an SDR gives them (field "input"; the framers take input_type sc16: half the
 * bytes for the host to write and PCIe to carry, issue 31 item 4); --input fc32 or sc16
 * runs one. Each speedup line compares runs of the same input.
 * Workloads: those of e2e/PD (one channel), same scene data.
 */
#include "bench_e2e_input.h"
#include "bench_pd_flowgraph.h"
#include <gpuradar/kernels/common/device_split.h>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace gpuradar::bench::pd {
namespace {

constexpr const char* bench_name = "e2e/PD/two_gpu";
constexpr int devices_needed = 2;

struct chains_result {
    double aggregate_sps = 0;
    std::vector<double> chain_sps;
    double detections_per_cpi = 0;
    std::uint64_t dropped = 0;
    std::uint64_t peer_bytes = 0;
};

//! Steady samples/s of one chain from its detections' arrivals (-1: too few CPIs).
double steady_sps(const std::vector<detections_timer::arrival>& a,
                  std::uint64_t cpi_samples)
{
    if (a.size() <= 3)
        return -1;
    const double ms =
        std::chrono::duration<double, std::milli>(a.back().when - a[2].when).count();
    return double(cpi_samples) * double(a.back().cpi - a[2].cpi) / (ms * 1e-3);
}

//! One chain per entry of `devices` in one flowgraph, chain k on devices[k].
chains_result run_chains(const workload& w,
                         const replay_data& samples,
                         std::uint64_t ncpi,
                         const source_tuning& tuning,
                         const std::vector<int>& devices)
{
    const auto nchains = int(devices.size());
    const std::uint64_t cpi_samples = w.npulses * w.nrange;
    auto tb = gr::make_top_block("e2e_two_gpu");
    std::vector<pd_chain> chains;
    std::vector<std::shared_ptr<detections_timer>> timers;
    for (int k = 0; k < nchains; ++k) {
        auto src = gnuradio::make_block_sptr<host_replay_source>(samples.data,
                                                                 samples.nsamples,
                                                                 samples.sample_bytes,
                                                                 ncpi * cpi_samples,
                                                                 cpi_samples,
                                                                 tuning,
                                                                 0.0);
        chains.emplace_back(w, "cuda", devices[k], samples.input_type);
        const auto cfar = chains.back().connect(tb, src);
        tb->connect(
            cfar,
            0,
            gnuradio::make_block_sptr<device_sink>(unsigned(w.npulses), 0, devices[k]),
            0);
        timers.push_back(gnuradio::make_block_sptr<detections_timer>());
        tb->msg_connect(cfar, "detections", timers.back(), "in");
    }
    grr::device_buffer::reset_transfer_stats();
    const double t = seconds([&] { tb->run(); });
    chains_result r;
    r.aggregate_sps = double(nchains * ncpi * cpi_samples) / t;
    std::size_t dets = 0, pdus = 0;
    for (int k = 0; k < nchains; ++k) {
        const auto a = timers[k]->arrivals();
        r.chain_sps.push_back(steady_sps(a, cpi_samples));
        for (const auto& x : a)
            dets += x.detections;
        pdus += a.size();
        r.dropped += chains[k].dropped_cpis();
    }
    r.detections_per_cpi = pdus ? double(dets) / double(pdus) : 0.0;
    r.peer_bytes = grr::device_buffer::transfer_stats().peer_bytes;
    return r;
}

/*!
 * What the host stages alone deliver with two chains: both sources into null sinks
 * ("sources"), or each source into a framer on devices[k] and a device sink there
 * ("sources+framers": the host-to-device copies of both chains, no GPU processing).
 * Aggregate samples/s over the wall time of tb.run().
 */
double host_stages_sps(const workload& w,
                       const replay_data& samples,
                       std::uint64_t ncpi,
                       const source_tuning& tuning,
                       const std::vector<int>& devices,
                       bool with_framers)
{
    auto tb = gr::make_top_block("e2e_two_gpu_host");
    for (std::size_t k = 0; k < devices.size(); ++k)
        connect_host_stage(tb,
                           w,
                           samples.data,
                           samples.nsamples,
                           samples.sample_bytes,
                           samples.input_type,
                           ncpi,
                           tuning,
                           "cuda",
                           with_framers,
                           devices[k]);
    const double t = seconds([&] { tb->run(); });
    return double(devices.size() * ncpi * w.npulses * w.nrange) / t;
}

//! The chains' steady rates summed (the flowgraph's start left out); -1 if unknown.
double steady_aggregate(const chains_result& r)
{
    double sum = 0;
    for (const double sps : r.chain_sps) {
        if (sps <= 0)
            return -1;
        sum += sps;
    }
    return sum;
}

/*!
 * Host-to-device copies from pinned memory on every device of `devices` at once (one
 * stream and one 256 MiB buffer pair each, the buffers pinned under their device): the
 * aggregate GB/s over the wall time of 8 copies per device after one warm-up each.
 * What the host's links give the framers with no source copying in front of them.
 */
double concurrent_h2d_gb_per_s(const std::vector<int>& devices)
{
    constexpr std::size_t bytes = std::size_t(256) << 20;
    constexpr int copies = 8;
    struct lane {
        kernels::cuda_stream stream;
        kernels::pinned_memory host;
        kernels::device_memory dev;
    };
    std::vector<lane> lanes;
    for (const int d : devices) {
        kernels::device_scope on(d);
        lanes.push_back({ kernels::cuda_stream(),
                          kernels::pinned_memory(bytes),
                          kernels::device_memory(bytes) });
        std::memset(lanes.back().host.get(), 1, bytes);
    }
    const auto copy_all = [&](int n) {
        for (std::size_t k = 0; k < lanes.size(); ++k) {
            kernels::device_scope on(devices[k]);
            for (int i = 0; i < n; ++i)
                kernels::copy_async(lanes[k].dev.get(),
                                    lanes[k].host.get(),
                                    bytes,
                                    kernels::copy_kind::host_to_device,
                                    lanes[k].stream.ref(),
                                    bench_name);
        }
        for (std::size_t k = 0; k < lanes.size(); ++k) {
            kernels::device_scope on(devices[k]);
            lanes[k].stream.synchronize(bench_name);
        }
    };
    copy_all(1);
    const double t = seconds([&] { copy_all(copies); });
    return double(lanes.size() * copies * bytes) / (t * 1e9);
}

//! The devices as the JSON field "devices": "0,1".
std::string device_list(const std::vector<int>& devices)
{
    std::string s;
    for (const int d : devices)
        s += (s.empty() ? "" : ",") + std::to_string(d);
    return s;
}

void emit(const workload& w,
          const std::string& input_type,
          const std::vector<int>& devices,
          std::uint64_t ncpi,
          const chains_result& r)
{
    auto line = json_line(bench_name);
    line.field("workload", w.name)
        .field("input", input_type)
        .field("devices", device_list(devices))
        .field("chains", static_cast<long long>(devices.size()))
        .field("cpis_per_chain", double(ncpi))
        .field("aggregate_samples_per_s", r.aggregate_sps);
    for (std::size_t k = 0; k < r.chain_sps.size(); ++k)
        line.field("chain" + std::to_string(k) + "_samples_per_s", r.chain_sps[k]);
    line.field("steady_aggregate_samples_per_s", steady_aggregate(r))
        .field("detections_per_cpi", r.detections_per_cpi)
        .field("dropped_cpis", double(r.dropped))
        .field("peer_bytes", double(r.peer_bytes))
        .emit();
}

void emit_host_stage(const workload& w,
                     const std::string& input_type,
                     const std::vector<int>& devices,
                     bool with_framers,
                     double sps)
{
    json_line(bench_name)
        .field("workload", w.name)
        .field("input", input_type)
        .field("host_stage", with_framers ? "sources+framers" : "sources")
        .field("devices", with_framers ? device_list(devices) : std::string("-"))
        .field("aggregate_samples_per_s", sps)
        .emit();
}

GPURADAR_BENCH("e2e/PD/two_gpu")
{
    const int count = kernels::cuda_device_count();
    if (!kernels::cuda_available() || count < devices_needed) {
        json_line(bench_name)
            .field("skipped", true)
            .field("reason", "needs 2 CUDA devices, found " + std::to_string(count))
            .emit();
        return;
    }
    for (int k = 0; k < count; ++k) {
        const auto devices = k == 0 ? std::vector<int>{ 0 } : std::vector<int>{ 0, k };
        json_line(bench_name)
            .field("host_stage", "pinned_h2d_alone")
            .field("devices", device_list(devices))
            .field("gb_per_s", concurrent_h2d_gb_per_s(devices))
            .emit();
    }
    for (const auto& w : workloads()) {
        if (w.channels != 1 || (!opt.workload.empty() && w.name != opt.workload))
            continue;
        const std::uint64_t n = opt.quick ? 5 : 2000;
        const auto fc32 = scene_samples(w, 2);
        const auto sc16 = quantise_sc16(fc32);
        for (const replay_data& samples : { replay_data(fc32), replay_data(sc16) }) {
            if (!e2e_input_selected(opt, samples.input_type))
                continue;
            const auto& input = samples.input_type;
            const auto host_stage = [&](const std::vector<int>& devices, bool framers) {
                emit_host_stage(
                    w,
                    input,
                    devices,
                    framers,
                    host_stages_sps(w, samples, n, opt.source, devices, framers));
            };
            const auto chains = [&](const std::vector<int>& devices) {
                const auto r = run_chains(w, samples, n, opt.source, devices);
                emit(w, input, devices, n, r);
                return r;
            };
            host_stage({ 0, 0 }, false);
            host_stage({ 0, 0 }, true);
            const auto alone = chains({ 0 });
            const auto one_gpu = chains({ 0, 0 });
            for (int k = 1; k < count; ++k) {
                host_stage({ 0, k }, true);
                const auto two = chains({ 0, k });
                json_line(bench_name)
                    .field("workload", w.name)
                    .field("input", input)
                    .field("devices", device_list({ 0, k }))
                    .field("speedup_two_gpus_over_one",
                           two.aggregate_sps / one_gpu.aggregate_sps)
                    .field("steady_speedup_two_gpus_over_one",
                           steady_aggregate(two) / steady_aggregate(one_gpu))
                    .field("speedup_over_one_chain_alone",
                           two.aggregate_sps / alone.aggregate_sps)
                    .emit();
            }
        }
    }
}

} // namespace
} // namespace gpuradar::bench::pd
