/*
 * Helpers for the pulse-Doppler stage benchmarks (bench_pulse_compression.cc,
 * bench_corner_turn.cc, bench_doppler_filter.cc): the PD workloads of CONVENTIONS.md,
 * CUDA event timing, device inputs of random data (never zeros), and the device copy
 * figure every bandwidth is reported against.
 */
#ifndef INCLUDED_GPURADAR_BENCH_PD_COMMON_H
#define INCLUDED_GPURADAR_BENCH_PD_COMMON_H

#include "bench_registry.h"
#include <gpuradar/kernels/common/backend.h>
#include <gpuradar/kernels/common/cuda_resources.h>
#include <gpuradar/kernels/detection/cfar_2d.h>
#include <cstdint>
#include <vector>

namespace gpuradar::bench::pd {

using kernels::cfloat;

//! CONVENTIONS.md, Benchmark workloads (complex64).
struct workload {
    const char* name;
    std::size_t channels, npulses, nrange, waveform;
    std::size_t samples() const { return channels * npulses * nrange; }
    std::size_t bytes() const { return samples() * sizeof(cfloat); }
};
inline const std::vector<workload>& workloads()
{
    static const std::vector<workload> w = { { "PD-A", 16, 128, 9000, 1000 },
                                             { "PD-B", 1, 256, 16384, 512 },
                                             { "PD-C", 1, 1024, 4096, 256 } };
    return w;
}

//! CONVENTIONS.md's CFAR window on the workload's power map (Doppler guard / training
//! 1 / 1, range 1 / 5), CA, Pfa 1e-6, nfft = npulses.
inline kernels::cfar_2d_params chain_cfar_params(const workload& w)
{
    kernels::cfar_2d_params cp;
    cp.nrange = w.nrange;
    cp.ndoppler = w.npulses;
    cp.channels = w.channels;
    cp.guard_range = 1;
    cp.train_range = 5;
    cp.guard_doppler = 1;
    cp.train_doppler = 1;
    cp.pfa = 1e-6;
    return cp;
}

//! bench::time_ms (bench_registry.h), under the name the PD benches use.
using bench::time_ms;

//! A device copy of the n elements at `host` (complete when this returns).
template <typename T>
kernels::device_memory
to_device(const T* host, std::size_t n, const kernels::cuda_stream& s)
{
    kernels::device_memory d(n * sizeof(T));
    kernels::copy_async(
        d.get(), host, d.size(), kernels::copy_kind::host_to_device, s.ref(), "bench");
    s.synchronize("bench");
    return d;
}

//! The first n elements of `device`, copied to the host after the work queued on `s`.
template <typename T>
std::vector<T> to_host(const kernels::device_memory& device,
                       std::size_t n,
                       const kernels::cuda_stream& s)
{
    std::vector<T> host(n);
    kernels::copy_async(host.data(),
                        device.get(),
                        n * sizeof(T),
                        kernels::copy_kind::device_to_host,
                        s.ref(),
                        "bench");
    s.synchronize("bench");
    return host;
}

//! n complex samples of uniform noise in [-1, 1) (xorshift: fast for 10^8 samples).
inline kernels::device_memory random_device(std::size_t n, const kernels::cuda_stream& s)
{
    constexpr std::size_t chunk = std::size_t(1) << 20;
    std::vector<cfloat> host(std::min(n, chunk));
    std::uint32_t state = 2463534242u;
    auto next = [&] {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        return float(state) * (2.0f / 4294967296.0f) - 1.0f;
    };
    kernels::device_memory d(n * sizeof(cfloat));
    for (std::size_t off = 0; off < n; off += chunk) {
        const std::size_t len = std::min(chunk, n - off);
        for (std::size_t i = 0; i < len; ++i)
            host[i] = cfloat(next(), next());
        kernels::copy_async(d.as<cfloat>() + off,
                            host.data(),
                            len * sizeof(cfloat),
                            kernels::copy_kind::host_to_device,
                            s.ref(),
                            "bench");
        s.synchronize("bench"); // host is refilled next round
    }
    return d;
}

//! Device-to-device copy of `bytes`, in GB/s counting bytes read plus written.
inline double copy_gb_per_s(std::size_t bytes, const kernels::cuda_stream& s, int repeats)
{
    kernels::device_memory a = random_device(bytes / sizeof(cfloat), s), b(bytes);
    const double ms = time_ms(s, repeats, [&] {
        kernels::copy_async(b.get(),
                            a.get(),
                            bytes,
                            kernels::copy_kind::device_to_device,
                            s.ref(),
                            "bench");
    });
    return 2.0 * double(bytes) / (ms * 1e6);
}

//! Emits a "skipped" line and returns false when there is no usable CUDA device.
inline bool have_cuda(const char* bench)
{
    if (kernels::cuda_available())
        return true;
    json_line(bench).field("skipped", kernels::cuda_unavailable_reason()).emit();
    return false;
}

} // namespace gpuradar::bench::pd

#endif
