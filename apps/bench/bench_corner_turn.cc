/*
 * corner_turn/PD: one CPI of each PD workload transposed (8 B read + 8 B written per
 * sample, no arithmetic), GB/s beside a device copy of the same bytes. Target >= 90 % of
 * the copy.
 */
#include "bench_pd_common.h"
#include <gpuradar/kernels/pulse_doppler/corner_turn.h>

namespace gpuradar::bench {

GPURADAR_BENCH("corner_turn/PD")
{
    if (!pd::have_cuda("corner_turn/PD"))
        return;
    const auto props = kernels::current_device_properties();
    kernels::cuda_stream s;
    for (const auto& w : pd::workloads()) {
        auto in = pd::random_device(w.samples(), s);
        kernels::device_memory out(w.bytes());
        const double copy = pd::copy_gb_per_s(w.bytes(), s, opt.repeats);
        auto ct = kernels::corner_turn::make(
            kernels::backend::cuda, w.npulses, w.nrange, w.channels, s.ref());
        const double ms = pd::time_ms(s, opt.repeats, [&] {
            ct->run(in.as<kernels::cfloat>(), out.as<kernels::cfloat>());
        });
        const double gbs = 2.0 * double(w.bytes()) / (ms * 1e6);
        json_line("corner_turn/PD")
            .field("device", props.name)
            .field("workload", w.name)
            .field("bytes", static_cast<long long>(w.bytes()))
            .field("ms", ms)
            .field("gb_per_s", gbs)
            .field("copy_gb_per_s", copy)
            .field("fraction_of_copy", gbs / copy)
            .emit();
    }
}

} // namespace gpuradar::bench
