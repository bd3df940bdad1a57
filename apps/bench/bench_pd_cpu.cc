/*
 * pd_cpu/PD: the CPU backend's pulse-Doppler stages one by one on the PD workloads (one
 * channel), wall time per CPI on this machine: first call and median of the next ones.
 * Where the CPU end-to-end rate (e2e/PD, backend cpu) goes; the CFAR both as CA (the
 * chain's) and as OS (the costliest variant on the CPU).
 */
#include "bench_pd_common.h"
#include <gpuradar/kernels/common/cpu_threads.h>
#include <gpuradar/kernels/detection/cfar_2d.h>
#include <gpuradar/kernels/pulse_doppler/corner_turn.h>
#include <gpuradar/kernels/pulse_doppler/doppler_filter.h>
#include <gpuradar/kernels/pulse_doppler/envelope.h>
#include <gpuradar/kernels/pulse_doppler/pulse_compression.h>
#include <algorithm>
#include <chrono>
#include <functional>

namespace gpuradar::bench::pd {
namespace {

double ms_of(const std::function<void()>& f)
{
    const auto t0 = std::chrono::steady_clock::now();
    f();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                     t0)
        .count();
}

void time_stage(const workload& w,
                const char* stage,
                int repeats,
                const std::function<void()>& f)
{
    const double first = ms_of(f);
    std::vector<double> t;
    for (int i = 0; i < repeats; ++i)
        t.push_back(ms_of(f));
    std::sort(t.begin(), t.end());
    json_line("pd_cpu/PD")
        .field("workload", w.name)
        .field("stage", stage)
        .field("cpu_threads", static_cast<long long>(kernels::cpu_threads()))
        .field("first_ms", first)
        .field("median_ms", t[t.size() / 2])
        .field("msps", double(w.npulses * w.nrange) / (t[t.size() / 2] * 1e3))
        .emit();
}

GPURADAR_BENCH("pd_cpu/PD")
{
    const auto cpu = kernels::backend::cpu;
    const int repeats = opt.quick ? 2 : 5;
    for (const auto& w : workloads()) {
        if (w.channels != 1 || (!opt.workload.empty() && w.name != opt.workload))
            continue;
        const std::size_t n = w.npulses * w.nrange, nfft = w.npulses;
        std::vector<cfloat> x(n), y(n), z(n), d(n);
        std::vector<float> p(n);
        std::vector<std::uint8_t> mask(n);
        std::uint32_t state = 1234567u;
        for (auto& v : x) {
            state = state * 1664525u + 1013904223u;
            v = cfloat(float(state >> 8) * 1e-7f - 0.8f,
                       float(state & 0xffff) * 1e-5f - 0.3f);
        }
        const auto s = kernels::lfm_chirp(50e6, double(w.waveform) / 100e6, 100e6);
        auto pc = kernels::pulse_compression::make(
            cpu, w.nrange, w.npulses, s, kernels::window_spec::make("taylor"), true);
        auto ct = kernels::corner_turn::make(cpu, w.npulses, w.nrange, 1);
        auto df = kernels::doppler_filter::make(cpu,
                                                w.npulses,
                                                w.nrange,
                                                nfft,
                                                kernels::doppler_filter::mti_mode::none,
                                                kernels::window_spec::make("hann"),
                                                true);
        auto env =
            kernels::envelope::make(cpu, kernels::envelope::mode::square_law, false);
        kernels::cfar_2d_params cp;
        cp.nrange = w.nrange;
        cp.ndoppler = nfft;
        auto cfar = kernels::cfar_2d::make(cpu, cp);
        time_stage(w, "pulse_compression", repeats, [&] { pc->run(x.data(), y.data()); });
        time_stage(w, "corner_turn", repeats, [&] { ct->run(y.data(), z.data()); });
        time_stage(w, "doppler_filter", repeats, [&] { df->run(z.data(), d.data()); });
        time_stage(w, "envelope", repeats, [&] { env->run(d.data(), p.data(), n); });
        time_stage(
            w, "cfar_2d", repeats, [&] { cfar->run(p.data(), mask.data(), nullptr, 1); });
        cp.variant = kernels::cfar_variant::os;
        cp.os_k = kernels::cfar_default_os_k(cfar->training_cells());
        auto os = kernels::cfar_2d::make(cpu, cp);
        time_stage(w, "cfar_2d_os", repeats, [&] {
            os->run(p.data(), mask.data(), nullptr, 1);
        });
    }
}

} // namespace
} // namespace gpuradar::bench::pd
