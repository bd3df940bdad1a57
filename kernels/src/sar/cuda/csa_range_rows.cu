/*
 * The fused chirp-scaling range stage (csa_range_rows.h) for F = nrange up to 8192: one
 * block per azimuth-frequency row at a time (grid-stride over rows); the row lives in
 * shared memory (smem_fft.cuh's padded layout) from the first load to the last store.
 * 16384-point rows are split over two blocks (csa_range_rows_pair.cu).
 *
 * Transform plan, as the overlap-save pulse compression's (pulse_compression_cuda.cu):
 * F = RS * 16^P. Forward: a DIF pass of radix RS (phase 1 applied to the loaded
 * samples), P - 1 radix-16 DIF passes in shared memory, and the
 * last one (length 16, stride 1) in registers, where bin k sits at its digit-reversed
 * position; phase 2 and the range window are applied there, conjugated, and the
 * inverse is the same passes transposed (DIT, the first one in the same registers), so
 * the unnormalised inverse transform comes out conjugated in natural order, ready for
 * phase 3 (or the resampler) on the way back to global memory.
 */
#include "common/cuda/complex_math.cuh"
#include "common/cuda/cuda_check.h"
#include "common/cuda/power_of_two.h"
#include "common/cuda/smem_fft.cuh"
#include "sar/cuda/csa_phase.cuh"
#include "sar/cuda/csa_range_rows.cuh"
#include "sar/cuda/csa_range_rows.h"
#include "sar/cuda/csa_range_rows_pair.h"
#include <cuda_pipeline.h>
#include <algorithm>

namespace gpuradar::kernels::detail {
namespace {

constexpr const char* who = "csa";
//! Threads per block: F / 16 (one radix-16 butterfly each per pass) up to this many.
constexpr unsigned max_threads = 512;
//! kernel_for's instances (a row per block); 2^14 is the pair kernel's
//! (csa_range_rows_pair.h).
constexpr unsigned min_log2F = 9, max_log2F = 13;

//! log2 of the first pass's radix: F = 2^log2F = RS * 16^P with 1 <= log2(RS) <= 4.
constexpr unsigned first_log2_radix(unsigned log2F) { return (log2F - 1) % 4 + 1; }

//! Queues cp.async copies of row m (if any) into buf in the padded layout.
__device__ __forceinline__ void
prefetch_row(const csa_range_rows_args& a, std::size_t m, float2* buf)
{
    if (m < a.naz) {
        const float2* row = a.rows + m * a.nrange;
        for (unsigned i = threadIdx.x; i < a.nrange; i += blockDim.x)
            __pipeline_memcpy_async(buf + smem_fft_pad(i), row + i, sizeof(float2));
    }
    __pipeline_commit();
}

/*
 * The grid is persistent and each block copies its next row into its second row buffer
 * with cp.async while it transforms the current one, so the row loads do not stall the
 * block.
 */
template <int RS, int ITERS, int THREADS, int MIN_BLOCKS>
__global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
    csa_range_rows_kernel(csa_range_rows_args a)
{
    extern __shared__ float2 smem[];
    constexpr unsigned log2RS = smem_fft_log2_radix(RS);
    const unsigned F = a.nrange, T = blockDim.x;
    const unsigned log2F = 31 - __clz(F);
    const unsigned sA = F / RS; // stride of the radix-RS passes (= ITERS * T)
    const unsigned log2L0 = log2F - log2RS;
    const unsigned padded = F + F / 16;
    prefetch_row(a, blockIdx.x, smem);
    unsigned n = 0; // rows this block has done: the buffer is n & 1
    for (std::size_t m = blockIdx.x; m < a.naz; m += gridDim.x, ++n) {
        float2* row = a.rows + m * F;
        float2* sm = smem + (n & 1u) * padded;
        __pipeline_wait_prior(0);
        __syncthreads(); // row m is in sm; the other buffer's last reads are done
        prefetch_row(a, m + gridDim.x, smem + ((n + 1) & 1u) * padded);
        const float wa = a.azimuth_weight[m];
        if (wa == 0.0f) { // outside the processed Doppler band (uniform per block)
            for (unsigned i = threadIdx.x; i < F; i += T)
                row[i] = make_float2(0.0f, 0.0f);
            continue;
        }
        // Forward pass radix RS from the prefetched row, phase 1 on the loaded samples.
        const csa_quadratic q1 = a.q1[m];
        float2 v[ITERS][RS];
#pragma unroll
        for (int it = 0; it < ITERS; ++it)
#pragma unroll
            for (int j = 0; j < RS; ++j)
                v[it][j] = sm[smem_fft_pad(threadIdx.x + it * T + j * sA)];
#pragma unroll
        for (int it = 0; it < ITERS; ++it)
#pragma unroll
            for (int j = 0; j < RS; ++j)
                v[it][j] = cmul(
                    v[it][j],
                    csa_phasor(q1, static_cast<double>(threadIdx.x + it * T + j * sA)));
        __syncthreads(); // every read of sm before this row's writes is done
#pragma unroll
        for (int it = 0; it < ITERS; ++it)
            smem_fft_first_dif_pass<RS>(v[it], sm, threadIdx.x + it * T, sA, a.twiddle);
        __syncthreads();
        for (unsigned log2L = log2L0; log2L > 4; log2L -= 4)
            smem_fft_pass<16, false>(sm, F, log2L, a.twiddle, log2F);
        // Last forward pass, phase 2 with the range window (conjugated: the inverse is
        // the forward transform of the conjugate), first inverse pass.
        csa_spectrum_pass(
            sm, F / 16, log2F, log2RS, a.q2[m], a.range_weight, [](unsigned pos) {
                return pos;
            });
        __syncthreads();
        for (unsigned log2L = 8; log2L <= log2L0; log2L += 4) {
            smem_fft_pass<16, true>(sm, F, log2L, a.twiddle, log2F);
        }
        // Last inverse pass radix RS: sample i = n1 + j sA of the row (conjugated).
#pragma unroll
        for (int it = 0; it < ITERS; ++it)
            smem_fft_last_dit_pass<RS>(v[it], sm, threadIdx.x + it * T, sA, a.twiddle);
        const csa_quadratic q3 = a.q3[m];
        if (a.resample_first == nullptr) {
#pragma unroll
            for (int it = 0; it < ITERS; ++it)
#pragma unroll
                for (int j = 0; j < RS; ++j) {
                    const unsigned i = threadIdx.x + it * T + j * sA;
                    row[i] = cmul(conj_scaled(v[it][j], wa),
                                  csa_phasor(q3, static_cast<double>(i)));
                }
            continue;
        }
        // Squint: the row back into shared memory in natural order, then resampled.
        __syncthreads(); // every thread has read its inverse-pass inputs
#pragma unroll
        for (int it = 0; it < ITERS; ++it)
#pragma unroll
            for (int j = 0; j < RS; ++j)
                sm[smem_fft_pad(threadIdx.x + it * T + j * sA)] =
                    make_float2(v[it][j].x, -v[it][j].y);
        __syncthreads();
        for (unsigned i = threadIdx.x; i < F; i += T) {
            const float2 x =
                csa_resampled(a, i, [sm](unsigned e) { return sm[smem_fft_pad(e)]; });
            row[i] = cmul(make_float2(x.x * wa, x.y * wa),
                          csa_phasor(q3, static_cast<double>(i)));
        }
    }
}

using kernel_t = void (*)(csa_range_rows_args);

//! Resident blocks per SM the register budget is sized for: 512 threads (16 warps), so
//! that a thread's 16 to 32 samples, the phases and the twiddles fit 128 registers
//! without spilling. The prefetch hides the row loads that more warps would otherwise
//! have to (24 warps and 80 registers spilled and ran slower: gpuradar_bench csa/cuda).
constexpr int min_blocks(unsigned threads)
{
    return threads >= 512 ? 1 : int(512 / threads);
}

//! The dynamic shared memory of the instance for F: two rows in the padded layout.
constexpr std::size_t shared_bytes(unsigned F)
{
    return 2 * (F + F / 16) * sizeof(float2);
}
static_assert(shared_bytes(1u << max_log2F) <= csa_max_shared_bytes);

//! The instance for F = 2^LOG2F: threads T = min(F / 16, max_threads), each running
//! ITERS = (F / RS) / T butterflies of the radix-RS passes.
template <unsigned LOG2F>
kernel_t instance()
{
    constexpr unsigned F = 1u << LOG2F, log2RS = first_log2_radix(LOG2F);
    constexpr unsigned T = std::min(F / 16, max_threads);
    constexpr int ITERS = int((F >> log2RS) / T);
    static_assert(ITERS * T == (F >> log2RS));
    return csa_range_rows_kernel<int(1u << log2RS), ITERS, int(T), min_blocks(T)>;
}

kernel_t kernel_for(unsigned log2F)
{
    switch (log2F) {
    case 9:
        return instance<9>();
    case 10:
        return instance<10>();
    case 11:
        return instance<11>();
    case 12:
        return instance<12>();
    default:
        return instance<13>();
    }
}

} // namespace

bool csa_range_rows_supported(std::size_t nrange)
{
    return power_of_two_between(nrange, min_log2F, max_log2F) ||
           csa_range_rows_pair_supported(nrange);
}

csa_range_rows_launch csa_range_rows_prepare(std::size_t nrange, std::size_t naz)
{
    if (csa_range_rows_pair_supported(nrange))
        return csa_range_rows_pair_prepare(naz);
    const unsigned F = static_cast<unsigned>(nrange);
    csa_range_rows_launch l;
    const unsigned log2F = log2_ceil(nrange);
    l.kernel = kernel_for(log2F);
    l.shared_bytes = shared_bytes(F);
    GPURADAR_CUDA_CHECK(who,
                        cudaFuncSetAttribute(l.kernel,
                                             cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             static_cast<int>(l.shared_bytes)));
    l.threads = std::min(F / 16, max_threads);
    // Prefetching needs rows to prefetch: a persistent grid of the resident blocks.
    int device = 0, sms = 0, per_sm = 0;
    GPURADAR_CUDA_CHECK(who, cudaGetDevice(&device));
    GPURADAR_CUDA_CHECK(
        who, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    GPURADAR_CUDA_CHECK(
        who,
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            &per_sm, l.kernel, static_cast<int>(l.threads), l.shared_bytes));
    l.blocks = static_cast<unsigned>(
        std::min<std::size_t>(naz, std::size_t(std::max(1, sms * per_sm))));
    return l;
}

cudaLaunchConfig_t csa_range_rows_config(const csa_range_rows_launch& l,
                                         cudaStream_t s,
                                         cudaLaunchAttribute& cluster)
{
    cluster = cudaLaunchAttribute{};
    cluster.id = cudaLaunchAttributeClusterDimension;
    cluster.val.clusterDim.x = l.cluster;
    cluster.val.clusterDim.y = 1;
    cluster.val.clusterDim.z = 1;
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(l.blocks);
    config.blockDim = dim3(l.threads);
    config.dynamicSmemBytes = l.shared_bytes;
    config.stream = s;
    config.attrs = &cluster;
    config.numAttrs = l.cluster > 1 ? 1 : 0;
    return config;
}

void csa_range_rows(const csa_range_rows_args& a,
                    const csa_range_rows_launch& l,
                    cudaStream_t s)
{
    cudaLaunchAttribute cluster;
    const cudaLaunchConfig_t config = csa_range_rows_config(l, s, cluster);
    GPURADAR_CUDA_CHECK(who, cudaLaunchKernelEx(&config, l.kernel, a));
}

} // namespace gpuradar::kernels::detail
