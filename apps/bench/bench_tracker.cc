/*
 * From detections to targets (CPU, one thread):
 *  - tracker/cpu: kernels::tracker with 200 live targets (constant velocity over 30 km
 *    and +-300 m/s, Pd 0.9) and 20 false alarms per scan: detections per second through
 *    update() (the scans are made beforehand, outside the timing).
 *  - detection_clustering/cpu: the clustering of a CFAR report beside the CPU CFAR that
 *    made it, on a 4096 x 128 map with 64 targets of several cells each: the fraction
 *    clustering adds. Count: the CFAR does O(window) work per cell for every cell, the
 *    clustering O(log D) per detection for D detections (plus four map reads per
 *    detection inside the CFAR, GPU or CPU), D << cells.
 */
#include "bench_registry.h"
#include <gpuradar/kernels/cfar_2d.h>
#include <gpuradar/kernels/detection_clustering.h>
#include <gpuradar/kernels/tracker.h>
#include <chrono>
#include <cmath>
#include <random>

namespace gpuradar::bench {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
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
    const std::size_t nrange = 4096, ndoppler = 128, ntargets = 64;
    std::vector<float> map(nrange * ndoppler);
    std::mt19937 rng(4);
    std::exponential_distribution<float> e(1.f);
    std::uniform_real_distribution<double> u(0, 1);
    for (auto& x : map)
        x = e(rng);
    for (std::size_t t = 0; t < ntargets; ++t) {
        const double r0 = 20 + (nrange - 40) * u(rng), d0 = ndoppler * u(rng);
        for (int dr = -3; dr <= 3; ++dr)
            for (int dd = -3; dd <= 3; ++dd) {
                const long r = long(r0) + dr;
                const long d = (long(d0) + dd + long(ndoppler)) % long(ndoppler);
                const double x = r - r0, y = long(d0) + dd - d0;
                map[std::size_t(r) * ndoppler + std::size_t(d)] +=
                    float(1e4 * std::exp(-(x * x + y * y) / (2 * 0.8 * 0.8)));
            }
    }
    kernels::cfar_2d_params cp;
    cp.nrange = nrange;
    cp.ndoppler = ndoppler;
    cp.max_detections = 1 << 16;
    auto cfar = kernels::cfar_2d::make(kernels::backend::cpu, cp);
    kernels::detection_clustering clustering({ nrange, ndoppler, false, true });
    std::vector<std::uint8_t> mask(map.size());
    const int repeats = opt.quick ? 3 : 20;
    std::vector<double> t_cfar, t_cluster;
    kernels::cfar_report report;
    std::size_t clusters = 0;
    for (int i = 0; i < repeats; ++i) {
        auto t0 = std::chrono::steady_clock::now();
        cfar->run(map.data(), mask.data(), nullptr, 1);
        report = cfar->collect();
        t_cfar.push_back(seconds_since(t0));
        t0 = std::chrono::steady_clock::now();
        clusters = clustering.cluster(report.detections).size();
        t_cluster.push_back(seconds_since(t0));
    }
    const double cf = median(t_cfar), cl = median(t_cluster);
    json_line("detection_clustering/cpu")
        .field("device", "cpu (one thread)")
        .field("cells", static_cast<long long>(map.size()))
        .field("detections", static_cast<long long>(report.detections.size()))
        .field("clusters", static_cast<long long>(clusters))
        .field("cfar_ms", 1e3 * cf)
        .field("cluster_ms", 1e3 * cl)
        .field("cluster_us_per_detection", 1e6 * cl / double(report.detections.size()))
        .field("fraction_of_cfar", cl / cf)
        .emit();
}

} // namespace gpuradar::bench
