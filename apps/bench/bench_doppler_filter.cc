/*
 * doppler_filter and the kernels-only pulse-Doppler chain.
 *  doppler_filter/PD  one CPI after the corner turn (rows = nrange * channels, nfft =
 *                     npulses, Hann window, fftshift), MTI none and three_pulse: GB/s of
 *                     input + output beside a device copy. Passes: prepare (8 B in + 8 B
 *                     out per sample) + in-place FFT (>= 16 B per sample).
 *  pd_chain/PD        pulse_compression (auto) -> corner_turn -> doppler_filter ->
 *                     envelope (square law) per CPI, each stage timed alone and the chain
 *                     together, against the floor of reading the CPI once and writing
 *                     the power map once (12 B per sample at copy bandwidth). CFAR is
 *                     not in it (its own issue).
 */
#include "bench_pd_common.h"
#include <gpuradar/kernels/corner_turn.h>
#include <gpuradar/kernels/doppler_filter.h>
#include <gpuradar/kernels/envelope.h>
#include <gpuradar/kernels/pulse_compression.h>

namespace gpuradar::bench {

using kernels::cfloat;
using kernels::doppler_filter;

GPURADAR_BENCH("doppler_filter/PD")
{
    if (!pd::have_cuda("doppler_filter/PD"))
        return;
    const auto props = kernels::current_device_properties();
    kernels::cuda_stream s;
    for (const auto& w : pd::workloads()) {
        const std::size_t rows = w.nrange * w.channels;
        auto in = pd::random_device(w.samples(), s);
        kernels::device_memory out(w.bytes());
        const double copy = pd::copy_gb_per_s(w.bytes(), s, opt.repeats);
        for (auto mti :
             { doppler_filter::mti_mode::none, doppler_filter::mti_mode::three_pulse }) {
            auto df = doppler_filter::make(kernels::backend::cuda,
                                           w.npulses,
                                           rows,
                                           w.npulses,
                                           mti,
                                           kernels::window_spec::make("hann"),
                                           true,
                                           s.ref());
            const double ms = pd::time_ms(
                s, opt.repeats, [&] { df->run(in.as<cfloat>(), out.as<cfloat>()); });
            const double gbs = 2.0 * double(w.bytes()) / (ms * 1e6);
            json_line("doppler_filter/PD")
                .field("device", props.name)
                .field("workload", w.name)
                .field("mti", doppler_filter::to_string(mti))
                .field("rows", static_cast<long long>(rows))
                .field("nfft", static_cast<long long>(w.npulses))
                .field("ms", ms)
                .field("gb_per_s", gbs)
                .field("copy_gb_per_s", copy)
                .field("fraction_of_copy", gbs / copy)
                .field("pass_floor_ms", 4.0 * double(w.bytes()) / (copy * 1e6))
                .emit();
        }
    }
}

GPURADAR_BENCH("pd_chain/PD")
{
    if (!pd::have_cuda("pd_chain/PD"))
        return;
    const auto props = kernels::current_device_properties();
    kernels::cuda_stream s;
    const auto cuda = kernels::backend::cuda;
    for (const auto& w : pd::workloads()) {
        auto x = pd::random_device(w.samples(), s);
        kernels::device_memory a(w.bytes()), t(w.bytes()), d(w.bytes()),
            p(w.samples() * sizeof(float));
        const double copy = pd::copy_gb_per_s(w.bytes(), s, opt.repeats);
        const auto wf = kernels::lfm_chirp(50e6, double(w.waveform) / 100e6, 100e6);
        auto pc = kernels::pulse_compression::make(
            cuda,
            w.nrange,
            w.npulses * w.channels,
            wf,
            kernels::window_spec::make("taylor"),
            true,
            kernels::pulse_compression::method::automatic,
            s.ref());
        auto ct =
            kernels::corner_turn::make(cuda, w.npulses, w.nrange, w.channels, s.ref());
        auto df = doppler_filter::make(cuda,
                                       w.npulses,
                                       w.nrange * w.channels,
                                       w.npulses,
                                       doppler_filter::mti_mode::none,
                                       kernels::window_spec::make("hann"),
                                       true,
                                       s.ref());
        auto env = kernels::envelope::make(
            cuda, kernels::envelope::mode::square_law, false, s.ref());
        const int reps = opt.quick ? 5 : opt.repeats;
        const double pc_ms =
            pd::time_ms(s, reps, [&] { pc->run(x.as<cfloat>(), a.as<cfloat>()); });
        const double ct_ms =
            pd::time_ms(s, reps, [&] { ct->run(a.as<cfloat>(), t.as<cfloat>()); });
        const double df_ms =
            pd::time_ms(s, reps, [&] { df->run(t.as<cfloat>(), d.as<cfloat>()); });
        const double env_ms = pd::time_ms(
            s, reps, [&] { env->run(d.as<cfloat>(), p.as<float>(), w.samples()); });
        const double chain_ms = pd::time_ms(s, reps, [&] {
            pc->run(x.as<cfloat>(), a.as<cfloat>());
            ct->run(a.as<cfloat>(), t.as<cfloat>());
            df->run(t.as<cfloat>(), d.as<cfloat>());
            env->run(d.as<cfloat>(), p.as<float>(), w.samples());
        });
        json_line("pd_chain/PD")
            .field("device", props.name)
            .field("workload", w.name)
            .field("pc_method",
                   kernels::pulse_compression::to_string(pc->resolved_method()))
            .field("fft_length", static_cast<long long>(pc->fft_length()))
            .field("pulse_compression_ms", pc_ms)
            .field("corner_turn_ms", ct_ms)
            .field("doppler_filter_ms", df_ms)
            .field("envelope_ms", env_ms)
            .field("chain_ms", chain_ms)
            .field("floor_ms", 12.0 * double(w.samples()) / (copy * 1e6))
            .field("copy_gb_per_s", copy)
            .emit();
    }
}

} // namespace gpuradar::bench
