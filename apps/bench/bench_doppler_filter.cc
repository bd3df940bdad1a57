/*
 * doppler_filter benchmarks (the chain is in bench_pd_chain.cc).
 *  doppler_filter/PD  one CPI after the corner turn (rows = nrange * channels, nfft =
 *                     npulses, Hann window, fftshift), MTI none and three_pulse: GB/s of
 *                     input + output beside a device copy. Passes: prepare (8 B in + 8 B
 *                     out per sample) + in-place FFT (>= 16 B per sample).
 */
#include "bench_pd_common.h"
#include <gpuradar/kernels/pulse_doppler/doppler_filter.h>

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

} // namespace gpuradar::bench
