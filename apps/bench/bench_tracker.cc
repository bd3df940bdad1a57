/*
 * From detections to targets (the tracker and the clustering on the CPU, one thread):
 *  - tracker/cpu: kernels::tracker with 200 live targets (constant velocity over 30 km
 *    and +-300 m/s, Pd 0.9) and 20 false alarms per scan: detections per second through
 *    update() (the scans are made beforehand, outside the timing).
 *  - detection_clustering/cpu: what clustering (cfar_2d_params::cluster) adds to the
 *    CPU CFAR's run + collect, on a 4096 x 128 map with 64 targets of several cells
 *    each. Count: the CFAR does O(window) work per cell for every cell, the clustering
 *    O(1) per detection (a sweep over the sorted list and a union-find) for D
 *    detections, D << cells; the CFAR reads four neighbours per detection either way.
 *  - detection_clustering/cuda: the same with the CFAR on the GPU, which merges on the
 *    device, on that map and on a PD-B-sized one.
 */
#include "bench_pd_common.h"
#include <gpuradar/kernels/detection/cfar_2d.h>
#include <gpuradar/kernels/detection/detection_clustering.h>
#include <gpuradar/kernels/tracking/tracker.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

namespace gpuradar::bench {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

//! Targets in the clustering benchmarks' maps.
constexpr std::size_t clustering_targets = 64;

//! Unit-mean exponential noise (a square-law map) plus `ntargets` Gaussian blobs 40 dB
//! up, 7 x 7 cells each, at random cells (wrapping in Doppler).
std::vector<float>
clustered_map(std::size_t nrange, std::size_t ndoppler, std::size_t ntargets)
{
    std::vector<float> map(nrange * ndoppler);
    std::mt19937 rng(4);
    std::exponential_distribution<float> e(1.f);
    std::uniform_real_distribution<double> u(0, 1);
    for (auto& x : map)
        x = e(rng);
    for (std::size_t t = 0; t < ntargets; ++t) {
        const double r0 = 20 + double(nrange - 40) * u(rng),
                     d0 = double(ndoppler) * u(rng);
        for (int dr = -3; dr <= 3; ++dr)
            for (int dd = -3; dd <= 3; ++dd) {
                const long r = long(r0) + dr;
                const long d = (long(d0) + dd + long(ndoppler)) % long(ndoppler);
                const double x = double(r) - r0, y = double(long(d0) + dd) - d0;
                map[std::size_t(r) * ndoppler + std::size_t(d)] +=
                    float(1e4 * std::exp(-(x * x + y * y) / (2 * 0.8 * 0.8)));
            }
    }
    return map;
}

struct clustering_timing {
    double cfar_s, clustered_s;
    std::size_t detections, clusters;
};

/*!
 * Median times of run + collect by the same CFAR without clustering (`plain`) and with
 * it (`merged`, cfar_2d_params::cluster), each a callable returning its report,
 * alternating round by round, `repeats` rounds after one untimed one. What clustering
 * adds is the difference: the merging itself, less the shorter list it brings back.
 */
template <typename Plain, typename Merged>
clustering_timing time_cfar_and_clustering(int repeats, Plain&& plain, Merged&& merged)
{
    kernels::cfar_report cells = plain(), targets = merged();
    std::vector<double> t_plain, t_merged;
    for (int i = 0; i < repeats; ++i) {
        auto t0 = std::chrono::steady_clock::now();
        cells = plain();
        t_plain.push_back(seconds_since(t0));
        t0 = std::chrono::steady_clock::now();
        targets = merged();
        t_merged.push_back(seconds_since(t0));
    }
    return { median(t_plain),
             median(t_merged),
             cells.detections.size(),
             targets.clusters.size() };
}

//! The fields both clustering benchmarks report (issue 19: fraction_of_cfar <= 0.1).
json_line clustering_line(const char* bench,
                          const std::string& device,
                          const char* map,
                          const kernels::cfar_2d_params& cp,
                          const clustering_timing& t)
{
    json_line line(bench);
    const double added = t.clustered_s - t.cfar_s;
    line.field("device", device)
        .field("map", map)
        .field("cells", static_cast<long long>(cp.nrange * cp.ndoppler))
        .field("targets", static_cast<long long>(clustering_targets))
        .field("detections", static_cast<long long>(t.detections))
        .field("clusters", static_cast<long long>(t.clusters))
        .field("cfar_ms", 1e3 * t.cfar_s)
        .field("cfar_clustered_ms", 1e3 * t.clustered_s)
        .field("cluster_ms", 1e3 * added)
        .field("fraction_of_cfar", added / t.cfar_s);
    return line;
}

} // namespace

GPURADAR_BENCH("tracker/cpu")
{
    const int ntargets = 200, scans = opt.quick ? 100 : 1000;
    const double scan_s = 0.01, pd = 0.9, false_alarms = 20;
    std::mt19937 rng(3);
    std::uniform_real_distribution<double> u(0, 1);
    std::normal_distribution<double> g;
    std::poisson_distribution<int> nfa(false_alarms);
    std::vector<std::pair<double, double>> targets; // (range at 0, closing velocity)
    for (int i = 0; i < ntargets; ++i)
        targets.push_back({ 1000 + 29000 * u(rng), -300 + 600 * u(rng) });
    kernels::tracker_params p;
    p.gate = 13.8;
    p.confirm_m = 3;
    p.confirm_n = 5;
    p.delete_misses = 5;
    p.range_sigma_m = 3.0;
    p.velocity_sigma_mps = 0.3;
    p.acceleration_sigma = 2.0;
    std::vector<std::vector<kernels::track_measurement>> z(scans);
    std::size_t total = 0;
    for (int k = 0; k < scans; ++k) {
        const double t = k * scan_s;
        for (const auto& [r0, v] : targets)
            if (u(rng) < pd)
                z[k].push_back({ r0 - v * t + p.range_sigma_m * g(rng),
                                 v + p.velocity_sigma_mps * g(rng) });
        for (int f = nfa(rng); f > 0; --f)
            z[k].push_back({ 1000 + 29000 * u(rng), -300 + 600 * u(rng) });
        total += z[k].size();
    }
    kernels::tracker trk(p);
    double live = 0;
    const auto t0 = std::chrono::steady_clock::now();
    for (int k = 0; k < scans; ++k) {
        trk.update(k * scan_s, z[k]);
        live += double(trk.tracks().size());
    }
    const double s = seconds_since(t0);
    std::size_t confirmed = 0;
    for (const auto& t : trk.tracks())
        confirmed += t.status != kernels::track_status::tentative;
    json_line("tracker/cpu")
        .field("device", "cpu (one thread)")
        .field("targets", static_cast<long long>(ntargets))
        .field("scans", static_cast<long long>(scans))
        .field("detections", static_cast<long long>(total))
        .field("mean_live_tracks", live / scans)
        .field("confirmed_at_end", static_cast<long long>(confirmed))
        .field("ms_per_scan", 1e3 * s / scans)
        .field("detections_per_s", double(total) / s)
        .emit();
}

GPURADAR_BENCH("detection_clustering/cpu")
{
    const std::size_t nrange = 4096, ndoppler = 128;
    const auto map = clustered_map(nrange, ndoppler, clustering_targets);
    kernels::cfar_2d_params cp;
    cp.nrange = nrange;
    cp.ndoppler = ndoppler;
    cp.max_detections = 1 << 16;
    auto plain = kernels::cfar_2d::make(kernels::backend::cpu, cp);
    cp.cluster = true;
    auto merged = kernels::cfar_2d::make(kernels::backend::cpu, cp);
    std::vector<std::uint8_t> mask(map.size());
    const auto run = [&](kernels::cfar_2d& cfar) {
        cfar.run(map.data(), mask.data(), nullptr, 1);
        return cfar.collect();
    };
    const auto t = time_cfar_and_clustering(
        opt.quick ? 3 : 20, [&] { return run(*plain); }, [&] { return run(*merged); });
    clustering_line("detection_clustering/cpu", "cpu (one thread)", "4096x128", cp, t)
        .emit();
}

/*
 * detection_clustering/cuda: the same with the CFAR on the CUDA backend (map and mask in
 * device memory; run() and collect() timed), without clustering (collect() brings the
 * detection list to the host) and with it (the publish kernel merges the list in one
 * block, only the clusters cross PCIe), on the 4096 x 128 map and on a PD-B-sized one
 * (CONVENTIONS.md's CFAR window). The CFAR always fetches the four neighbours of each
 * detection (cfar_2d has no switch for it), so their cost is inside both times.
 */
GPURADAR_BENCH("detection_clustering/cuda")
{
    if (!pd::have_cuda("detection_clustering/cuda"))
        return;
    struct map_case {
        const char* name;
        kernels::cfar_2d_params cp;
    };
    kernels::cfar_2d_params small;
    small.nrange = 4096;
    small.ndoppler = 128;
    const auto& pd_b = *std::find_if(
        pd::workloads().begin(), pd::workloads().end(), [](const pd::workload& w) {
            return std::string(w.name) == "PD-B";
        });
    const std::vector<map_case> cases = { { "4096x128", small },
                                          { "PD-B", pd::chain_cfar_params(pd_b) } };
    kernels::cuda_stream s;
    const std::string device = kernels::current_device_properties().name;
    for (auto c : cases) {
        c.cp.max_detections = 1 << 16;
        const auto host_map =
            clustered_map(c.cp.nrange, c.cp.ndoppler, clustering_targets);
        const std::size_t cells = host_map.size();
        const auto map = pd::to_device(host_map.data(), cells, s);
        kernels::device_memory mask(cells);
        auto plain = kernels::cfar_2d::make(kernels::backend::cuda, c.cp, s.ref());
        const int repeats = opt.quick ? 5 : std::max(20, opt.repeats);
        auto run_on = [&](kernels::cfar_2d& cfar) {
            cfar.run(map.as<float>(), mask.as<std::uint8_t>(), nullptr, 1);
        };
        const double kernel_ms = pd::time_ms(s, repeats, [&] { run_on(*plain); });
        // The CPU twin on the same map: its count beside the GPU's, a sanity check.
        std::vector<std::uint8_t> host_mask(cells);
        auto twin = kernels::cfar_2d::make(kernels::backend::cpu, c.cp);
        twin->run(host_map.data(), host_mask.data(), nullptr, 1);
        const auto twin_detections = twin->collect().detections.size();
        c.cp.cluster = true;
        auto merged = kernels::cfar_2d::make(kernels::backend::cuda, c.cp, s.ref());
        const auto run = [&](kernels::cfar_2d& cfar) {
            run_on(cfar);
            return cfar.collect();
        };
        const double merged_kernel_ms = pd::time_ms(s, repeats, [&] { run_on(*merged); });
        const auto t = time_cfar_and_clustering(
            repeats, [&] { return run(*plain); }, [&] { return run(*merged); });
        clustering_line("detection_clustering/cuda", device, c.name, c.cp, t)
            .field("cfar_run_only_ms", kernel_ms)
            .field("cfar_clustered_run_only_ms", merged_kernel_ms)
            .field("cpu_twin_detections", static_cast<long long>(twin_detections))
            .field("neighbour_fetch",
                   "always on: the CFAR reads range_prev/next and doppler_prev/next for "
                   "every detection (no option); included in cfar_ms")
            .emit();
    }
}

} // namespace gpuradar::bench
