/*
 * e2e/PD/two_gpu: two simulated SDRs in one flowgraph (issue 16), each
 *   host_replay_source -> pulse_framer -> pulse_doppler_processor -> cfar_2d
 *   (mask -> device sink; detections -> its own detections_timer)
 * run twice in the same process: both chains on device 0 (one GPU), then chain k on
 * device k (two GPUs). Per run: the aggregate samples/s (both chains' samples over the
 * wall time of tb.run(), fill included) and each chain's steady samples/s (the spacing
 * of its detections PDUs after the first two CPIs, as e2e/PD), the peer bytes (0: the
 * chains share no edge) and the dropped CPIs; then the two-GPU / one-GPU ratio of the
 * aggregate and of the chains' steady rates summed (2000 CPIs a chain, so that the
 * start of two devices' plans and buffers weighs little in the aggregate). Before them,
 * the host's ceiling: the two sources alone into null sinks, and the two sources with
 * their framers (the host-to-device copies) on one GPU and on two. With fewer
 * than two CUDA devices it prints one line, "skipped": true, with the reason.
 * Workloads: those of e2e/PD (one channel), same scene data.
 */
#include "bench_pd_flowgraph.h"
#include <gpuradar/kernels/device_split.h>
#include <array>
#include <memory>

namespace gpuradar::bench::pd {
namespace {

constexpr const char* bench_name = "e2e/PD/two_gpu";
constexpr int nchains = 2;

struct pair_result {
    double aggregate_sps = 0;
    std::array<double, nchains> chain_sps{};
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

//! Two chains in one flowgraph, chain k on devices[k].
pair_result run_pair(const workload& w,
                     const std::vector<cfloat>& samples,
                     std::uint64_t ncpi,
                     const source_tuning& tuning,
                     const std::array<int, nchains>& devices)
{
    const std::uint64_t cpi_samples = w.npulses * w.nrange;
    auto tb = gr::make_top_block("e2e_two_gpu");
    std::vector<pd_chain> chains;
    std::vector<std::shared_ptr<detections_timer>> timers;
    for (int k = 0; k < nchains; ++k) {
        auto src = gnuradio::make_block_sptr<host_replay_source>(
            samples, ncpi * cpi_samples, cpi_samples, tuning, 0.0);
        chains.emplace_back(w, "cuda", devices[k]);
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
    pair_result r;
    r.aggregate_sps = double(nchains * ncpi * cpi_samples) / t;
    std::size_t dets = 0, pdus = 0;
    for (int k = 0; k < nchains; ++k) {
        const auto a = timers[k]->arrivals();
        r.chain_sps[k] = steady_sps(a, cpi_samples);
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
                       const std::vector<cfloat>& samples,
                       std::uint64_t ncpi,
                       const source_tuning& tuning,
                       const std::array<int, nchains>& devices,
                       bool with_framers)
{
    auto tb = gr::make_top_block("e2e_two_gpu_host");
    for (int k = 0; k < nchains; ++k)
        connect_host_stage(
            tb, w, samples, ncpi, tuning, "cuda", with_framers, devices[k]);
    const double t = seconds([&] { tb->run(); });
    return double(nchains * ncpi * w.npulses * w.nrange) / t;
}

//! The chains' steady rates summed (the flowgraph's start left out); -1 if unknown.
double steady_aggregate(const pair_result& r)
{
    double sum = 0;
    for (const double sps : r.chain_sps) {
        if (sps <= 0)
            return -1;
        sum += sps;
    }
    return sum;
}

void emit(const workload& w, int gpus, std::uint64_t ncpi, const pair_result& r)
{
    json_line(bench_name)
        .field("workload", w.name)
        .field("gpus", static_cast<long long>(gpus))
        .field("chains", static_cast<long long>(nchains))
        .field("cpis_per_chain", double(ncpi))
        .field("aggregate_samples_per_s", r.aggregate_sps)
        .field("chain0_samples_per_s", r.chain_sps[0])
        .field("chain1_samples_per_s", r.chain_sps[1])
        .field("steady_aggregate_samples_per_s", steady_aggregate(r))
        .field("detections_per_cpi", r.detections_per_cpi)
        .field("dropped_cpis", double(r.dropped))
        .field("peer_bytes", double(r.peer_bytes))
        .emit();
}

GPURADAR_BENCH("e2e/PD/two_gpu")
{
    const int count = kernels::cuda_device_count();
    if (!kernels::cuda_available() || count < nchains) {
        json_line(bench_name)
            .field("skipped", true)
            .field("reason", "needs 2 CUDA devices, found " + std::to_string(count))
            .emit();
        return;
    }
    for (const auto& w : workloads()) {
        if (w.channels != 1 || (!opt.workload.empty() && w.name != opt.workload))
            continue;
        const std::uint64_t n = opt.quick ? 5 : 2000;
        const auto samples = scene_samples(w, 2);
        json_line(bench_name)
            .field("workload", w.name)
            .field("host_stage", "sources")
            .field("aggregate_samples_per_s",
                   host_stages_sps(w, samples, n, opt.source, { 0, 1 }, false))
            .emit();
        for (const std::array<int, nchains>& devices :
             { std::array<int, nchains>{ 0, 0 }, std::array<int, nchains>{ 0, 1 } })
            json_line(bench_name)
                .field("workload", w.name)
                .field("host_stage", "sources+framers")
                .field("gpus", static_cast<long long>(devices[0] == devices[1] ? 1 : 2))
                .field("aggregate_samples_per_s",
                       host_stages_sps(w, samples, n, opt.source, devices, true))
                .emit();
        const auto one = run_pair(w, samples, n, opt.source, { 0, 0 });
        emit(w, 1, n, one);
        const auto two = run_pair(w, samples, n, opt.source, { 0, 1 });
        emit(w, 2, n, two);
        json_line(bench_name)
            .field("workload", w.name)
            .field("speedup_two_gpus_over_one", two.aggregate_sps / one.aggregate_sps)
            .field("steady_speedup_two_gpus_over_one",
                   steady_aggregate(two) / steady_aggregate(one))
            .emit();
    }
}

} // namespace
} // namespace gpuradar::bench::pd
