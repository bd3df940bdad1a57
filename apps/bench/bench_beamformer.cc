/*
 * beamformer/PD: one CPI of PD-A (16 channels x 128 pulses x 9000 samples) formed into
 * 16 beams on the pulse stream. The floor is the bytes moved (every channel sample read
 * once, every beam sample written once) at the device-to-device copy rate measured in
 * the same run; the kernel is a long thin complex GEMM (k = channels) and should stay
 * within 1.5x of that floor.
 */
#include "bench_pd_common.h"
#include <gpuradar/kernels/array/beamformer.h>

namespace gpuradar::bench {

GPURADAR_BENCH("beamformer/PD")
{
    if (!pd::have_cuda("beamformer/PD"))
        return;
    const auto props = kernels::current_device_properties();
    kernels::cuda_stream s;
    for (const auto& w : pd::workloads()) {
        if (w.channels < 2)
            continue; // beamforming needs an array
        const std::size_t nbeams = w.channels;
        const std::size_t in_samples = w.samples();
        const std::size_t out_samples = nbeams * w.npulses * w.nrange;
        const std::size_t bytes = (in_samples + out_samples) * sizeof(kernels::cfloat);
        auto in = pd::random_device(in_samples, s);
        kernels::device_memory out(out_samples * sizeof(kernels::cfloat));
        const double copy = pd::copy_gb_per_s(bytes / 2, s, opt.repeats);
        const auto elements = kernels::ula_positions(w.channels, 0.5, 1.0);
        const auto weights =
            kernels::beamformer_weights(elements,
                                        1.0,
                                        kernels::beam_fan_deg(nbeams, -45.0, 45.0),
                                        kernels::window_spec::make("taylor"));
        auto bf = kernels::beamformer::make(
            kernels::backend::cuda, w.channels, nbeams, w.nrange, weights, s.ref());
        const double ms = pd::time_ms(s, opt.repeats, [&] {
            bf->run(in.as<kernels::cfloat>(), out.as<kernels::cfloat>(), w.npulses);
        });
        const double floor_ms = double(bytes) / (copy * 1e6);
        json_line("beamformer/PD")
            .field("device", props.name)
            .field("workload", w.name)
            .field("channels", static_cast<long long>(w.channels))
            .field("beams", static_cast<long long>(nbeams))
            .field("bytes", static_cast<long long>(bytes))
            .field("ms", ms)
            .field("gb_per_s", double(bytes) / (ms * 1e6))
            .field("copy_gb_per_s", copy)
            .field("floor_ms", floor_ms)
            .field("ratio_to_floor", ms / floor_ms)
            .emit();
    }
}

} // namespace gpuradar::bench
