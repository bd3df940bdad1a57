/*
 * pd_cpu/PD: the CPU backend's pulse-Doppler stages one by one on the PD workloads (one
 * channel), wall time per CPI on this machine: first call and median of the next ones.
 * Where the CPU end-to-end rate (e2e/PD, backend cpu) goes; the CFAR both as CA (the
 * chain's) and as OS (the costliest variant on the CPU).
 * Before them, the host work in front of the processor per CPI, for fc32 and for sc16
 * host samples (issue 31: "CPU sc16 >= 1.3x fc32"): "source_copy_<t>", the replay
 * source's copy of the CPI's bytes into the flowgraph buffer (one memcpy), and
 * "framer_copy_<t>", the CPU framer's CPI copy (framer_copy: the gates gathered into its
 * staging CPI, fc32 copied or sc16 converted by VOLK, then the screening copy into the
 * output buffer). The processor's stages are the same for both: the framer gives it
 * complex float. Last, the whole CPU processor (pulse compression to envelope) on a
 * complex float CPI ("processor_fc32") and on the same CPI as sc16 given to it directly
 * ("processor_sc16": its run_samples, VOLK's conversion of the CPI, then the same run).
 */
#include "bench_pd_common.h"
#include <gpuradar/kernels/common/cpu_threads.h>
#include <gpuradar/kernels/detection/cfar_2d.h>
#include <gpuradar/kernels/pulse_doppler/corner_turn.h>
#include <gpuradar/kernels/pulse_doppler/doppler_filter.h>
#include <gpuradar/kernels/pulse_doppler/envelope.h>
#include <gpuradar/kernels/pulse_doppler/framer_copy.h>
#include <gpuradar/kernels/pulse_doppler/pulse_compression.h>
#include <gpuradar/kernels/pulse_doppler/pulse_doppler_processor.h>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
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
        // The same CPI as interleaved int16 (its parts up to ~0.8 of full scale).
        std::vector<std::int16_t> q(2 * n);
        for (std::size_t i = 0; i < n; ++i) {
            q[2 * i] = std::int16_t(x[i].real() * 30000.0f);
            q[2 * i + 1] = std::int16_t(x[i].imag() * 30000.0f);
        }
        std::vector<cfloat> gr_buffer(n); // the flowgraph buffer the source writes
        const auto host_stages = [&](const char* type,
                                     const void* src,
                                     std::size_t bytes,
                                     kernels::sample_format f) {
            time_stage(w, (std::string("source_copy_") + type).c_str(), repeats, [&] {
                std::memcpy(gr_buffer.data(), src, n * bytes);
            });
            auto fc = kernels::framer_copy::make(cpu, n, kernels::stream_ref(), f);
            std::vector<std::uint64_t> offsets(w.npulses);
            for (std::size_t k = 0; k < w.npulses; ++k)
                offsets[k] = k * w.nrange;
            time_stage(w, (std::string("framer_copy_") + type).c_str(), repeats, [&] {
                fc->gather(fc->staging(), src, offsets, w.nrange);
                fc->copy_finite(y.data(), fc->staging(), n, 0);
            });
        };
        host_stages("fc32", x.data(), sizeof(cfloat), kernels::sample_format::fc32);
        host_stages(
            "sc16", q.data(), 2 * sizeof(std::int16_t), kernels::sample_format::sc16);
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
        for (const auto f :
             { kernels::sample_format::fc32, kernels::sample_format::sc16 }) {
            kernels::pulse_doppler_processor_params pp;
            pp.nrange = w.nrange;
            pp.npulses = w.npulses;
            pp.waveform = s;
            pp.range_window = kernels::window_spec::make("taylor");
            pp.normalize = true;
            pp.doppler_window = kernels::window_spec::make("hann");
            pp.input = f;
            auto proc = kernels::pulse_doppler_processor::make(cpu, pp);
            const bool sc16 = f == kernels::sample_format::sc16;
            const void* in = sc16 ? static_cast<const void*>(q.data()) : x.data();
            time_stage(w, sc16 ? "processor_sc16" : "processor_fc32", repeats, [&] {
                proc->run_samples(in, p.data());
            });
        }
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
