/*
 * CFAR benchmarks (CUDA; one CPU figure for scale):
 *  - cfar_2d/PD: CFAR alone on the power map of each PD workload (channels x nrange x
 *    npulses floats, CONVENTIONS.md's window: guard/train Doppler 1,1, range 1,5), every
 *    variant and both estimators. Bytes per cell: 4 read + 1 written (mask), + 4 with the
 *    threshold output. GB/s beside a device copy measured in the same run.
 *  - cfar_window_sweep: CA on the PD-B map, segmented vs summed-area table, square,
 *    range-elongated and Doppler-elongated windows from N = 16 to ~3500 training cells:
 *    which is faster where (cfar_plan.h: the automatic estimator's choice).
 *  - cfar_1d/lines: range-only CFAR on PD-C-sized lines.
 */
#include "bench_pd_common.h"
#include <gpuradar/kernels/common/cpu_threads.h>
#include <gpuradar/kernels/detection/cfar_1d.h>
#include <gpuradar/kernels/detection/cfar_2d.h>
#include <chrono>
#include <cmath>

namespace gpuradar::bench {
namespace {

using kernels::cfar_estimator;
using kernels::cfar_variant;

//! n unit-mean exponential floats (square-law noise) on the device; never zeros.
kernels::device_memory exponential_device(std::size_t n, const kernels::cuda_stream& s)
{
    std::vector<float> host(n);
    std::uint64_t state = 0x853c49e6748fea9bull;
    for (auto& x : host) {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        x = float(-std::log((double(state >> 11) + 1.0) * 0x1.0p-53));
    }
    return pd::to_device(host.data(), n, s);
}

//! The PD workload's power map as a cfar_2d configuration (CONVENTIONS.md's window).
kernels::cfar_2d_params pd_params(const pd::workload& w)
{
    kernels::cfar_2d_params p;
    p.nrange = w.nrange;
    p.ndoppler = w.npulses;
    p.channels = w.channels;
    p.pfa = 1e-6;
    p.max_detections = 1 << 20;
    return p;
}

struct cfar_case {
    cfar_variant variant;
    cfar_estimator estimator;
    bool threshold_out;
    bool local_max;
};

} // namespace

GPURADAR_BENCH("cfar_2d/PD")
{
    if (!pd::have_cuda("cfar_2d/PD"))
        return;
    const auto props = kernels::current_device_properties();
    kernels::cuda_stream s;
    const std::vector<cfar_case> cases = {
        { cfar_variant::ca, cfar_estimator::segmented, false, false },
        { cfar_variant::ca, cfar_estimator::summed_area, false, false },
        { cfar_variant::ca, cfar_estimator::segmented, true, true },
        { cfar_variant::go, cfar_estimator::segmented, false, false },
        { cfar_variant::go, cfar_estimator::summed_area, false, false },
        { cfar_variant::so, cfar_estimator::segmented, false, false },
        { cfar_variant::so, cfar_estimator::summed_area, false, false },
        { cfar_variant::os, cfar_estimator::segmented, false, false },
    };
    for (const auto& w : pd::workloads()) {
        const std::size_t cells = w.channels * w.npulses * w.nrange;
        auto power = exponential_device(cells, s);
        kernels::device_memory mask(cells), thr(cells * sizeof(float));
        const double copy = pd::copy_gb_per_s(cells * sizeof(float), s, opt.repeats);
        for (const auto& c : cases) {
            auto p = pd_params(w);
            p.variant = c.variant;
            p.os_k = kernels::cfar_default_os_k(56);
            p.estimator = c.estimator;
            p.local_max = c.local_max;
            auto cfar = kernels::cfar_2d::make(kernels::backend::cuda, p, s.ref());
            float* t = c.threshold_out ? thr.as<float>() : nullptr;
            const double ms = pd::time_ms(s, opt.repeats, [&] {
                cfar->run(power.as<float>(), mask.as<std::uint8_t>(), t, 1);
            });
            // run() and collect() together: what a block spends per CPI, readback
            // included.
            const double ms_collect = pd::time_ms(s, opt.repeats, [&] {
                cfar->run(power.as<float>(), mask.as<std::uint8_t>(), t, 1);
                (void)cfar->collect();
            });
            const auto report = cfar->collect();
            const double bytes =
                double(cells) * (sizeof(float) + 1 + (t ? sizeof(float) : 0));
            const double gbs = bytes / (ms * 1e6);
            json_line("cfar_2d/PD")
                .field("device", props.name)
                .field("workload", w.name)
                .field("variant", to_string(c.variant))
                .field("estimator", to_string(cfar->estimator()))
                .field("threshold_out", c.threshold_out)
                .field("local_max", c.local_max)
                .field("training_cells", static_cast<long long>(cfar->training_cells()))
                .field("cells", static_cast<long long>(cells))
                .field("ms", ms)
                .field("run_collect_ms", ms_collect)
                .field("gcells_per_s", double(cells) / (ms * 1e6))
                .field("gb_per_s", gbs)
                .field("copy_gb_per_s", copy)
                .field("fraction_of_copy", gbs / copy)
                .field("detections", static_cast<long long>(report.found))
                .emit();
        }
        // The CPU twin on the same map, CA, for scale (the CPU pool, host timing).
        if (!opt.quick) {
            const std::vector<float> host = pd::to_host<float>(power, cells, s);
            std::vector<std::uint8_t> hmask(cells);
            auto cpu = kernels::cfar_2d::make(kernels::backend::cpu, pd_params(w));
            std::vector<double> t;
            for (int i = 0; i < 3; ++i) {
                const auto t0 = std::chrono::steady_clock::now();
                cpu->run(host.data(), hmask.data(), nullptr, 1);
                t.push_back(std::chrono::duration<double, std::milli>(
                                std::chrono::steady_clock::now() - t0)
                                .count());
            }
            const double ms = median(t);
            json_line("cfar_2d/PD")
                .field("device", "cpu")
                .field("threads", static_cast<long long>(kernels::cpu_threads()))
                .field("workload", w.name)
                .field("variant", "ca")
                .field("cells", static_cast<long long>(cells))
                .field("ms", ms)
                .field("gcells_per_s", double(cells) / (ms * 1e6))
                .emit();
        }
    }
}

GPURADAR_BENCH("cfar_window_sweep")
{
    if (!pd::have_cuda("cfar_window_sweep"))
        return;
    const auto props = kernels::current_device_properties();
    kernels::cuda_stream s;
    const auto& w = pd::workloads()[1]; // PD-B: 16384 x 256
    const std::size_t cells = w.nrange * w.npulses;
    auto power = exponential_device(cells, s);
    kernels::device_memory mask(cells);
    struct window {
        const char* shape;
        int gr, tr, gd, td;
    };
    std::vector<window> windows;
    for (int t : { 1, 2, 3, 4, 6, 8, 10, 12, 14, 16, 20, 24, 28 })
        windows.push_back({ "square", 1, t, 1, t });
    for (int t : { 5, 10, 20, 30, 40, 50, 60, 80, 100 })
        windows.push_back({ "range", 1, t, 1, 1 });
    for (int t : { 4, 8, 16, 32, 48, 64, 96 })
        windows.push_back({ "doppler", 1, 1, 1, t });
    for (const auto& win : windows) {
        auto p = pd_params(w);
        p.guard_range = win.gr;
        p.train_range = win.tr;
        p.guard_doppler = win.gd;
        p.train_doppler = win.td;
        double ms[2] = { 0, 0 };
        int n = 0;
        const cfar_estimator est[2] = { cfar_estimator::segmented,
                                        cfar_estimator::summed_area };
        for (int e = 0; e < 2; ++e) {
            p.estimator = est[e];
            try {
                auto cfar = kernels::cfar_2d::make(kernels::backend::cuda, p, s.ref());
                n = cfar->training_cells();
                ms[e] = pd::time_ms(s, opt.repeats, [&] {
                    cfar->run(power.as<float>(), mask.as<std::uint8_t>(), nullptr, 1);
                });
            } catch (const std::invalid_argument&) {
                ms[e] = -1; // this estimator's tile does not fit in shared memory
            }
        }
        json_line("cfar_window_sweep")
            .field("device", props.name)
            .field("workload", w.name)
            .field("shape", win.shape)
            .field("train_range", static_cast<long long>(win.tr))
            .field("train_doppler", static_cast<long long>(win.td))
            .field("training_cells", static_cast<long long>(n))
            .field("segmented_ms", ms[0])
            .field("summed_area_ms", ms[1])
            .field("faster",
                   ms[0] < 0        ? "summed_area"
                   : ms[1] < 0      ? "segmented"
                   : ms[0] <= ms[1] ? "segmented"
                                    : "summed_area")
            .emit();
    }
}

GPURADAR_BENCH("cfar_1d/lines")
{
    if (!pd::have_cuda("cfar_1d/lines"))
        return;
    const auto props = kernels::current_device_properties();
    kernels::cuda_stream s;
    // PD-C-sized: 1024 lines of 4096 range bins.
    kernels::cfar_1d_params p;
    p.nrange = 4096;
    p.max_items = 1024;
    p.guard = 2;
    p.train = 16;
    p.pfa = 1e-6;
    p.max_detections = 1 << 20;
    const std::size_t cells = p.nrange * p.max_items;
    auto power = exponential_device(cells, s);
    kernels::device_memory mask(cells);
    const double copy = pd::copy_gb_per_s(cells * sizeof(float), s, opt.repeats);
    for (auto v : { cfar_variant::ca, cfar_variant::go, cfar_variant::os }) {
        p.variant = v;
        p.os_k = kernels::cfar_default_os_k(2 * p.train);
        auto cfar = kernels::cfar_1d::make(kernels::backend::cuda, p, s.ref());
        const double ms = pd::time_ms(s, opt.repeats, [&] {
            cfar->run(power.as<float>(), mask.as<std::uint8_t>(), nullptr, p.max_items);
        });
        const double gbs = double(cells) * 5 / (ms * 1e6);
        json_line("cfar_1d/lines")
            .field("device", props.name)
            .field("variant", to_string(v))
            .field("estimator", to_string(cfar->estimator()))
            .field("cells", static_cast<long long>(cells))
            .field("ms", ms)
            .field("gcells_per_s", double(cells) / (ms * 1e6))
            .field("gb_per_s", gbs)
            .field("copy_gb_per_s", copy)
            .field("fraction_of_copy", gbs / copy)
            .emit();
    }
}

} // namespace gpuradar::bench
