/*
 * pulse_compression benchmarks.
 *  pulse_compression/PD            one CPI of each PD workload, fft and fir methods, the
 *                                  CPI's GB/s (input + output bytes) beside a device
 * copy. pulse_compression/crossover     fir vs fft time against waveform length on the PD
 *                                  shapes: where `auto` should switch (CUDA).
 *  pulse_compression/crossover_cpu the same on the CPU twin, one core, a 16-pulse batch.
 *  pulse_compression/fft_length    each PD shape with FFT lengths forced through make()'s
 *                                  fft_length: 7-smooth, 5-smooth and power-of-two sizes
 *                                  around the automatic one (what the factors cost).
 * Counts per CPI of N = rows * nrange samples, waveform L, FFT length F per row:
 *  minimum traffic 16 N bytes (read x, write y);
 *  fft, the least any two-FFT method moves: read x (8N), write and read the workspace
 *  (16 rows F), write y (8N) = 16 N + 16 rows F bytes (pass_floor_ms);
 *  fft with separate kernels: pad (8N + 8 rows F) + 2 FFTs (>= 16 rows F each) +
 *  multiply (16 rows F) + strip (8N + 8N) = 32 N + 56 rows F;
 *  fir: 8 L N complex multiply-adds = 8 L N flops, traffic 16 N;
 *  overlap_save: read x (8 N plus the L-1 overlap of each segment), write y (8 N).
 */
#include "bench_pd_common.h"
#include <gpuradar/kernels/pulse_doppler/pulse_compression.h>
#include <chrono>

namespace gpuradar::bench {
namespace {

using kernels::pulse_compression;
using method = pulse_compression::method;

std::vector<kernels::cfloat> waveform(std::size_t L)
{
    // A chirp filling the band at 2x oversampling: the usual radar case, never zeros.
    return kernels::lfm_chirp(50e6, double(L) / 100e6, 100e6);
}

} // namespace

GPURADAR_BENCH("pulse_compression/PD")
{
    if (!pd::have_cuda("pulse_compression/PD"))
        return;
    const auto props = kernels::current_device_properties();
    kernels::cuda_stream s;
    for (const auto& w : pd::workloads()) {
        const std::size_t rows = w.channels * w.npulses;
        auto in = pd::random_device(w.samples(), s);
        kernels::device_memory out(w.bytes());
        const double copy = pd::copy_gb_per_s(w.bytes(), s, opt.repeats);
        for (method m : { method::fft, method::fir, method::overlap_save }) {
            auto pc = pulse_compression::make(kernels::backend::cuda,
                                              w.nrange,
                                              rows,
                                              waveform(w.waveform),
                                              kernels::window_spec(),
                                              true,
                                              m,
                                              s.ref());
            const double ms = time_ms(s, opt.quick ? 5 : opt.repeats, [&] {
                pc->run(in.as<kernels::cfloat>(), out.as<kernels::cfloat>());
            });
            const double min_bytes = 2.0 * w.bytes();
            // Read x, write + read the workspace, write y.
            const double fft_bytes =
                2.0 * w.bytes() + 16.0 * double(rows) * double(pc->fft_length());
            const double gbs = min_bytes / (ms * 1e6);
            auto line = json_line("pulse_compression/PD");
            line.field("device", props.name)
                .field("workload", w.name)
                .field("method", pulse_compression::to_string(m))
                .field("rows", static_cast<long long>(rows))
                .field("nrange", static_cast<long long>(w.nrange))
                .field("waveform", static_cast<long long>(w.waveform))
                .field("fft_length", static_cast<long long>(pc->fft_length()))
                .field("implementation", pc->implementation())
                .field("ms", ms)
                .field("gb_per_s", gbs)
                .field("copy_gb_per_s", copy)
                .field("fraction_of_copy", gbs / copy);
            if (m == method::fft)
                line.field("pass_floor_ms", fft_bytes / (copy * 1e6));
            else if (m == method::overlap_save)
                line.field("os_fft", static_cast<long long>(pc->overlap_save_fft()))
                    .field("floor_ms", min_bytes / (copy * 1e6));
            else
                line.field("tflop_per_s",
                           8.0 * double(w.waveform) * double(w.samples()) / (ms * 1e9));
            line.emit();
        }
    }
}

/*
 * overlap_save against fft (and fir up to 256 taps) over waveform lengths on the PD
 * shapes: where `automatic` should pick overlap_save (CUDA). One line per (shape, L).
 */
GPURADAR_BENCH("pulse_compression/PD_overlap_save_sweep")
{
    if (!pd::have_cuda("pulse_compression/PD_overlap_save_sweep"))
        return;
    const auto props = kernels::current_device_properties();
    kernels::cuda_stream s;
    const std::size_t taps[] = { 1, 32, 64, 128, 192, 256, 512, 1000, 1500, 2048 };
    for (const auto& w : pd::workloads()) {
        const std::size_t rows = w.channels * w.npulses;
        auto in = pd::random_device(w.samples(), s);
        kernels::device_memory out(w.bytes());
        for (std::size_t L : taps) {
            auto line = json_line("pulse_compression/PD_overlap_save_sweep");
            line.field("device", props.name)
                .field("shape", w.name)
                .field("taps", static_cast<long long>(L));
            for (method m : { method::fft, method::overlap_save, method::fir }) {
                if (m == method::fir && L > 256)
                    continue;
                auto pc = pulse_compression::make(kernels::backend::cuda,
                                                  w.nrange,
                                                  rows,
                                                  waveform(L),
                                                  kernels::window_spec(),
                                                  true,
                                                  m,
                                                  s.ref());
                const double ms = time_ms(s, opt.quick ? 5 : 20, [&] {
                    pc->run(in.as<kernels::cfloat>(), out.as<kernels::cfloat>());
                });
                line.field(std::string(pulse_compression::to_string(m)) + "_ms", ms);
                if (m == method::overlap_save)
                    line.field("os_fft", static_cast<long long>(pc->overlap_save_fft()));
            }
            line.emit();
        }
    }
}

GPURADAR_BENCH("pulse_compression/crossover")
{
    if (!pd::have_cuda("pulse_compression/crossover"))
        return;
    const auto props = kernels::current_device_properties();
    kernels::cuda_stream s;
    const std::size_t taps[] = { 8, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512 };
    for (const auto& w : pd::workloads()) {
        const std::size_t rows = w.channels * w.npulses;
        auto in = pd::random_device(w.samples(), s);
        kernels::device_memory out(w.bytes());
        std::size_t crossover = 0;
        bool fir_still_faster = true;
        for (std::size_t L : taps) {
            double t[2];
            for (method m : { method::fft, method::fir }) {
                auto pc = pulse_compression::make(kernels::backend::cuda,
                                                  w.nrange,
                                                  rows,
                                                  waveform(L),
                                                  kernels::window_spec(),
                                                  true,
                                                  m,
                                                  s.ref());
                t[m == method::fir] = time_ms(s, opt.quick ? 5 : 20, [&] {
                    pc->run(in.as<kernels::cfloat>(), out.as<kernels::cfloat>());
                });
            }
            if (fir_still_faster && t[1] < t[0])
                crossover = L;
            else
                fir_still_faster = false;
            json_line("pulse_compression/crossover")
                .field("device", props.name)
                .field("shape", w.name)
                .field("taps", static_cast<long long>(L))
                .field("fft_ms", t[0])
                .field("fir_ms", t[1])
                .emit();
        }
        json_line("pulse_compression/crossover")
            .field("device", props.name)
            .field("shape", w.name)
            .field("fir_faster_up_to_taps", static_cast<long long>(crossover))
            .field("constant_in_use",
                   static_cast<long long>(pulse_compression::fir_crossover_taps_cuda))
            .emit();
    }
}

GPURADAR_BENCH("pulse_compression/fft_length")
{
    if (!pd::have_cuda("pulse_compression/fft_length"))
        return;
    const auto props = kernels::current_device_properties();
    kernels::cuda_stream s;
    // Each PD shape with its own waveform and the FFT lengths >= nrange + L - 1 around
    // the automatic choice: 7-smooth ones (fast_fft_length's), 5-smooth ones
    // (preferred_fft_length's), powers of two.
    struct sweep {
        const char* shape;
        std::size_t rows, nrange, L;
        std::vector<std::size_t> lengths;
    };
    const std::vector<sweep> sweeps = {
        { "PD-A",
          2048,
          9000,
          1000,
          { 10000,
            10080,
            10125,
            10206,
            10240,
            10368,
            10500,
            10800,
            11520,
            12288,
            16384 } },
        { "PD-B",
          256,
          16384,
          512,
          { 16896,
            17010,
            17150,
            17280,
            17496,
            18000,
            18432,
            19200,
            20480,
            24576,
            32768 } },
        { "PD-C",
          1024,
          4096,
          256,
          { 4374, 4375, 4410, 4500, 4608, 4800, 5000, 5120, 6144, 8192 } },
    };
    for (const auto& sw : sweeps) {
        auto in = pd::random_device(sw.rows * sw.nrange, s);
        kernels::device_memory out(sw.rows * sw.nrange * sizeof(kernels::cfloat));
        const std::size_t automatic = kernels::preferred_fft_length(sw.nrange + sw.L - 1);
        for (std::size_t n : sw.lengths) {
            auto pc = pulse_compression::make(kernels::backend::cuda,
                                              sw.nrange,
                                              sw.rows,
                                              waveform(sw.L),
                                              kernels::window_spec(),
                                              true,
                                              method::fft,
                                              s.ref(),
                                              n);
            const double ms = time_ms(s, opt.quick ? 5 : 20, [&] {
                pc->run(in.as<kernels::cfloat>(), out.as<kernels::cfloat>());
            });
            json_line("pulse_compression/fft_length")
                .field("device", props.name)
                .field("shape", sw.shape)
                .field("rows", static_cast<long long>(sw.rows))
                .field("nrange", static_cast<long long>(sw.nrange))
                .field("waveform", static_cast<long long>(sw.L))
                .field("fft_length", static_cast<long long>(pc->fft_length()))
                .field("automatic", pc->fft_length() == automatic)
                .field("fast_fft_length",
                       pc->fft_length() == kernels::fast_fft_length(sw.nrange + sw.L - 1))
                .field("implementation", pc->implementation())
                .field("ms", ms)
                .emit();
        }
    }
}

GPURADAR_BENCH("pulse_compression/crossover_cpu")
{
    const std::size_t rows = 16, nrange = 4096;
    std::vector<kernels::cfloat> in(rows * nrange), out(in.size());
    for (std::size_t i = 0; i < in.size(); ++i)
        in[i] = kernels::cfloat(float(i % 7) - 3.0f, float(i % 11) - 5.0f);
    for (std::size_t L : { 4, 8, 16, 24, 32, 48, 64, 96, 128 }) {
        double t[2];
        for (method m : { method::fft, method::fir }) {
            auto pc = pulse_compression::make(kernels::backend::cpu,
                                              nrange,
                                              rows,
                                              waveform(L),
                                              kernels::window_spec(),
                                              true,
                                              m);
            std::vector<double> samples;
            for (int i = 0; i < (opt.quick ? 3 : 15); ++i) {
                const auto t0 = std::chrono::steady_clock::now();
                pc->run(in.data(), out.data());
                samples.push_back(std::chrono::duration<double, std::milli>(
                                      std::chrono::steady_clock::now() - t0)
                                      .count());
            }
            t[m == method::fir] = median(samples);
        }
        json_line("pulse_compression/crossover_cpu")
            .field("rows", static_cast<long long>(rows))
            .field("nrange", static_cast<long long>(nrange))
            .field("taps", static_cast<long long>(L))
            .field("fft_ms", t[0])
            .field("fir_ms", t[1])
            .emit();
    }
}

} // namespace gpuradar::bench
