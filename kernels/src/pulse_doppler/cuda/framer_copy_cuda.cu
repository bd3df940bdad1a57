#include "common/cuda/cuda_check.h"
#include "common/cuda/dependent_launch.cuh"
#include "common/cuda/launch.h"
#include "pulse_doppler/framer_copy_backends.h"
#include "pulse_doppler/framer_copy_screen.h"
#include "pulse_doppler/front_end_correction_gather.h"
#include "pulse_doppler/front_end_correction_math.h"
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdint>

namespace gpuradar::kernels::detail {
namespace {

constexpr const char* who = "gpuradar::pulse_framer (cuda)";

// Counters per CPI slot on the device: nonfinite, clamped, saturated.
constexpr std::size_t counters_per_slot = 3;

// Adds one of the warp's tallies to *count with one atomic, and only when nonzero: clean
// data costs no atomics at all. Every lane calls it (blockDim.x is a multiple of 32 and
// the grid-stride loops end before it).
__device__ __forceinline__ void count_warp(unsigned int n, unsigned long long* count)
{
    for (int lanes = 16; lanes > 0; lanes /= 2)
        n += __shfl_down_sync(0xffffffffu, n, lanes);
    if ((threadIdx.x & 31u) == 0 && n != 0)
        atomicAdd(count, static_cast<unsigned long long>(n));
}

__device__ __forceinline__ float2 screen(float2 v,
                                         float clamp,
                                         float sat,
                                         screen_tally& t)
{
    screen_sample(v.x, v.y, clamp, sat, t);
    return v;
}

__device__ __forceinline__ float4 screen(float4 v,
                                         float clamp,
                                         float sat,
                                         screen_tally& t)
{
    screen_sample(v.x, v.y, clamp, sat, t);
    screen_sample(v.z, v.w, clamp, sat, t);
    return v;
}

// Grid-stride copy that screens every sample (framer_copy_screen.h) and counts into
// count[0..2] (nonfinite, clamped, saturated). V: float4 (two samples, 16-byte accesses)
// when both pointers allow, else float2 (one sample).
template <typename V>
__global__ void copy_finite_kernel(V* __restrict__ dst,
                                   const V* __restrict__ src,
                                   std::size_t n,
                                   float clamp,
                                   float sat,
                                   unsigned long long* count)
{
    screen_tally t;
    const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
    for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += stride)
        dst[i] = screen(src[i], clamp, sat, t);
    count_warp(t.nonfinite, count);
    count_warp(t.clamped, count + 1);
    count_warp(t.saturated, count + 2);
}

// Pulses per thread and iteration of the corrected copy: loads in flight per thread.
constexpr int correct_rows = 4;

struct correct_args {
    float2* dst;
    const float2* src;
    std::size_t npulses, nrange, gate;
    const float2* dc;           // per pulse, or null
    const float2* mean;         // per range sample, or null
    const front_end_iq_map* iq; // or null
    float clamp, sat;
    unsigned long long* count; // the slot's counters (copy_finite_kernel's)
};

// Sample k (0 or 1) of a float2 (one sample) or float4 (two) access.
__device__ __forceinline__ float2& sample_of(float2& v, int) { return v; }
__device__ __forceinline__ float2& sample_of(float4& v, int k)
{
    return reinterpret_cast<float2*>(&v)[k];
}

// copy_finite with corrections: each sample screened (copy_finite_kernel's screen and
// counts), then corrected by the CPI's map (correct_sample, the CPU twin's). blockIdx.y
// walks the pulses and x the range samples, so that no thread divides. V: float4 (two
// range samples, 16-byte accesses) when nrange is even and the pointers allow, else
// float2; q counts V's along the pulse.
template <typename V>
__global__ void copy_correct_kernel(correct_args a)
{
    constexpr int per = sizeof(V) / sizeof(float2); // samples per access
    wait_for_predecessor();                         // the estimate's kernels
    front_end_iq_map m;
    if (a.iq)
        m = *a.iq;
    screen_tally t;
    const std::size_t nv = a.nrange / per;
    const auto* src = reinterpret_cast<const V*>(a.src);
    auto* dst = reinterpret_cast<V*>(a.dst);
    const auto* mean = reinterpret_cast<const V*>(a.mean);
    const std::size_t q0 = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    const std::size_t qstride = std::size_t(gridDim.x) * blockDim.x;
    for (std::size_t pa = std::size_t(blockIdx.y) * correct_rows; pa < a.npulses;
         pa += std::size_t(gridDim.y) * correct_rows) {
        for (std::size_t q = q0; q < nv; q += qstride) {
            V v[correct_rows];
#pragma unroll
            for (int j = 0; j < correct_rows; ++j)
                if (pa + j < a.npulses)
                    v[j] = src[(pa + j) * nv + q];
            V mp{};
            if (mean)
                mp = mean[q];
#pragma unroll
            for (int j = 0; j < correct_rows; ++j) {
                const std::size_t p = pa + j;
                if (p >= a.npulses)
                    break;
                const float2 d = a.dc ? a.dc[p] : make_float2(0.0f, 0.0f);
#pragma unroll
                for (int k = 0; k < per; ++k) {
                    float2& y = sample_of(v[j], k);
                    const float2 mk = sample_of(mp, k);
                    screen_sample(y.x, y.y, a.clamp, a.sat, t);
                    correct_sample(
                        y.x, y.y, q * per + k < a.gate, d.x, d.y, mk.x, mk.y, m);
                }
                dst[p * nv + q] = v[j];
            }
        }
    }
    count_warp(t.nonfinite, a.count);
    count_warp(t.clamped, a.count + 1);
    count_warp(t.saturated, a.count + 2);
}

class framer_copy_cuda final : public framer_copy
{
public:
    framer_copy_cuda(std::size_t cpi_samples,
                     stream_ref stream,
                     sample_format input,
                     std::unique_ptr<front_end_correction> corrections)
        : framer_copy(std::move(corrections)),
          d_staging(cpi_samples * sizeof(cfloat)),
          d_stream(stream),
          d_convert(sample_convert::make(backend::cuda, input, stream)),
          d_saturation(saturation_level(input)),
          d_dependent(dependent_launch_supported(who))
    {
        grow_counts(initial_slots);
    }
    cfloat* staging() override { return d_staging.as<cfloat>(); }

    void gather(cfloat* dst,
                const void* src,
                const std::vector<std::uint64_t>& offsets,
                std::size_t nrange) override
    {
        if (offsets.empty())
            return;
        const auto* in = static_cast<const unsigned char*>(src);
        const std::size_t bytes = sample_bytes(d_convert->format());
        const std::uint64_t stride =
            offsets.size() > 1 ? offsets[1] - offsets[0] : nrange;
        bool uniform = true;
        for (std::size_t i = 1; i < offsets.size() && uniform; ++i)
            uniform = offsets[i] - offsets[i - 1] == stride;
        if (gather_with_sums(dst, in, offsets, stride, uniform, nrange))
            return;
        if (uniform) {
            // Every gate of an integer PRI in one strided pass (rows = gates).
            d_convert->rows(
                in + offsets[0] * bytes, stride, dst, nrange, nrange, offsets.size());
            return;
        }
        for (std::size_t i = 0; i < offsets.size(); ++i)
            d_convert->rows(
                in + offsets[i] * bytes, nrange, dst + i * nrange, nrange, nrange, 1);
    }

    void
    copy_finite(cfloat* dst, const cfloat* src, std::size_t n, std::size_t slot) override
    {
        if (slot >= d_slots)
            grow_counts(std::max(2 * d_slots, slot + 1));
        auto* count = d_counts.as<unsigned long long>() + counters_per_slot * slot;
        const auto stream = native(d_stream);
        d_used = std::max(d_used, slot + 1);
        if (d_corrections) {
            copy_corrected(dst, src, n, slot, count);
            return;
        }
        const bool aligned =
            reinterpret_cast<std::uintptr_t>(dst) % sizeof(float4) == 0 &&
            reinterpret_cast<std::uintptr_t>(src) % sizeof(float4) == 0;
        std::size_t done = 0;
        if (aligned && n >= 2) {
            const std::size_t npairs = n / 2;
            copy_finite_kernel<float4>
                <<<elementwise_blocks(npairs), elementwise_threads, 0, stream>>>(
                    reinterpret_cast<float4*>(dst),
                    reinterpret_cast<const float4*>(src),
                    npairs,
                    framer_clamp_level,
                    d_saturation,
                    count);
            GPURADAR_CUDA_CHECK_LAUNCH(who, "copy_finite_kernel<float4>");
            done = 2 * npairs;
        }
        if (done < n) {
            copy_finite_kernel<float2>
                <<<elementwise_blocks(n - done), elementwise_threads, 0, stream>>>(
                    reinterpret_cast<float2*>(dst + done),
                    reinterpret_cast<const float2*>(src + done),
                    n - done,
                    framer_clamp_level,
                    d_saturation,
                    count);
            GPURADAR_CUDA_CHECK_LAUNCH(who, "copy_finite_kernel<float2>");
        }
    }

    // One device-to-host copy of the slots used since the last take, one wait.
    void take_counts(framer_sample_counts* counts, std::size_t n) override
    {
        if (d_used > 0)
            GPURADAR_CUDA_CHECK(who,
                                cudaMemcpyAsync(d_host_counts.get(),
                                                d_counts.get(),
                                                d_used * slot_bytes,
                                                cudaMemcpyDeviceToHost,
                                                native(d_stream)));
        d_counts_copied.record(d_stream);
        d_counts_copied.synchronize();
        const auto* host = d_host_counts.as<std::uint64_t>();
        for (std::size_t i = 0; i < n; ++i) {
            counts[i] = framer_sample_counts{};
            if (i < d_used) {
                counts[i].nonfinite = host[counters_per_slot * i];
                counts[i].clamped = host[counters_per_slot * i + 1];
                counts[i].saturated = host[counters_per_slot * i + 2];
            }
        }
        zero_counts();
    }

private:
    static constexpr std::size_t initial_slots = 8;

    // Rows of the staging CPI gathered by the corrections' sums pass, which converts and
    // writes them as d_convert would and takes the corrections' sums on the way (false:
    // no corrections with sums, or dst is not a row of the staging CPI).
    bool gather_with_sums(cfloat* dst,
                          const unsigned char* in,
                          const std::vector<std::uint64_t>& offsets,
                          std::uint64_t stride,
                          bool uniform,
                          std::size_t nrange)
    {
        const cfloat* rows = d_staging.as<cfloat>();
        if (!d_corrections || nrange != d_corrections->config().nrange || dst < rows ||
            dst >= rows + d_corrections->config().npulses * nrange ||
            (dst - rows) % nrange != 0)
            return false;
        const std::size_t row = static_cast<std::size_t>(dst - rows) / nrange;
        const std::size_t bytes = sample_bytes(d_convert->format());
        const sample_format f = d_convert->format();
        if (uniform)
            return gather_rows_with_sums(*d_corrections,
                                         dst,
                                         in + offsets[0] * bytes,
                                         f,
                                         stride,
                                         row,
                                         offsets.size());
        for (std::size_t i = 0; i < offsets.size(); ++i)
            if (!gather_rows_with_sums(*d_corrections,
                                       dst + i * nrange,
                                       in + offsets[i] * bytes,
                                       f,
                                       nrange,
                                       row + i,
                                       1))
                return false;
        return true;
    }

    // The estimate's kernels from src, then the screened, corrected copy in one pass.
    void copy_corrected(cfloat* dst,
                        const cfloat* src,
                        std::size_t n,
                        std::size_t slot,
                        unsigned long long* count)
    {
        require_whole_cpi(*d_corrections, n, who);
        d_corrections->estimate(src, slot);
        const front_end_map m = d_corrections->map();
        correct_args a{ reinterpret_cast<float2*>(dst),
                        reinterpret_cast<const float2*>(src),
                        m.npulses,
                        m.nrange,
                        m.gate,
                        reinterpret_cast<const float2*>(m.dc),
                        reinterpret_cast<const float2*>(m.mean),
                        m.iq,
                        framer_clamp_level,
                        d_saturation,
                        count };
        const bool pairs = m.nrange % 2 == 0 &&
                           reinterpret_cast<std::uintptr_t>(dst) % sizeof(float4) == 0 &&
                           reinterpret_cast<std::uintptr_t>(src) % sizeof(float4) == 0 &&
                           reinterpret_cast<std::uintptr_t>(m.mean) % sizeof(float4) == 0;
        // About elementwise_max_blocks blocks, a row of blocks per correct_rows pulses.
        const std::size_t nv = pairs ? m.nrange / 2 : m.nrange;
        const std::size_t bx = (nv + elementwise_threads - 1) / elementwise_threads;
        const std::size_t by = std::min<std::size_t>(
            { (m.npulses + correct_rows - 1) / correct_rows,
              max_grid_y,
              std::max<std::size_t>(1, elementwise_max_blocks / bx) });
        const dim3 grid(static_cast<unsigned int>(bx), static_cast<unsigned int>(by));
        const auto s = native(d_stream);
        if (pairs)
            launch_dependent(d_dependent,
                             copy_correct_kernel<float4>,
                             grid,
                             elementwise_threads,
                             0,
                             s,
                             who,
                             a);
        else
            launch_dependent(d_dependent,
                             copy_correct_kernel<float2>,
                             grid,
                             elementwise_threads,
                             0,
                             s,
                             who,
                             a);
    }

    static constexpr std::size_t max_grid_y = 65535; // CUDA's limit on gridDim.y
    static constexpr std::size_t slot_bytes = counters_per_slot * sizeof(std::uint64_t);

    void zero_counts()
    {
        if (d_used > 0)
            GPURADAR_CUDA_CHECK(
                who,
                cudaMemsetAsync(
                    d_counts.get(), 0, d_used * slot_bytes, native(d_stream)));
        d_used = 0;
    }

    // More slots than a process() call has used so far (rare: the first calls only).
    // The counts queued so far move to the larger array; the old one is freed only after
    // the stream is done with it.
    void grow_counts(std::size_t slots)
    {
        const auto s = native(d_stream);
        GPURADAR_CUDA_CHECK(who, cudaStreamSynchronize(s));
        device_memory counts(slots * slot_bytes);
        pinned_memory host_counts(slots * slot_bytes);
        GPURADAR_CUDA_CHECK(who, cudaMemsetAsync(counts.get(), 0, counts.size(), s));
        if (d_slots > 0) {
            GPURADAR_CUDA_CHECK(who,
                                cudaMemcpyAsync(counts.get(),
                                                d_counts.get(),
                                                d_counts.size(),
                                                cudaMemcpyDeviceToDevice,
                                                s));
            GPURADAR_CUDA_CHECK(who, cudaStreamSynchronize(s));
        }
        d_counts = std::move(counts);
        d_host_counts = std::move(host_counts);
        d_slots = slots;
    }

    device_memory d_staging;
    stream_ref d_stream;
    std::unique_ptr<sample_convert> d_convert; // the gates' copy (and conversion)
    std::size_t d_slots = 0;                   // capacity of the arrays below
    float d_saturation;                        // saturation_level(input)
    std::size_t d_used = 0;      // slots written since the last take_counts()
    device_memory d_counts;      // counters_per_slot per CPI slot (unsigned long long)
    pinned_memory d_host_counts; // take_counts()'s copy of them
    cuda_event d_counts_copied;  // recorded by take_counts()
    const bool d_dependent;      // the corrected copy's dependent launch
};

} // namespace

std::unique_ptr<framer_copy>
make_framer_copy_cuda(std::size_t cpi_samples,
                      stream_ref stream,
                      sample_format input,
                      std::unique_ptr<front_end_correction> corrections)
{
    return std::make_unique<framer_copy_cuda>(
        cpi_samples, stream, input, std::move(corrections));
}

} // namespace gpuradar::kernels::detail
