/*
 * The fused chirp-scaling range stage (csa_range_rows.h). One block per
 * azimuth-frequency row at a time (grid-stride over rows); the row of F = nrange points
 * lives in shared memory (smem_fft.cuh's padded layout) from the first load to the last
 * store.
 *
 * Transform plan, as the overlap-save pulse compression's (pulse_compression_cuda.cu):
 * F = RS * 16^P. Forward: a DIF pass of radix RS straight from global memory (phase 1
 * applied to the loaded samples), P - 1 radix-16 DIF passes in shared memory, and the
 * last one (length 16, stride 1) in registers, where bin k sits at its digit-reversed
 * position; phase 2 and the range window are applied there, conjugated, and the
 * inverse is the same passes transposed (DIT, the first one in the same registers), so
 * the unnormalised inverse transform comes out conjugated in natural order, ready for
 * phase 3 (or the resampler) on the way back to global memory.
 */
#include "complex_math.cuh"
#include "csa_phase.cuh"
#include "csa_range_rows.h"
#include "cuda_check.h"
#include "power_of_two.h"
#include "smem_fft.cuh"
#include <cuda_pipeline.h>
#include <algorithm>

namespace gpuradar::kernels::detail {
namespace {

constexpr const char* who = "csa";
//! Threads per block: F / 16 (one radix-16 butterfly each per pass) up to this many.
constexpr unsigned max_threads = 512;
constexpr unsigned min_log2F = 9, max_log2F = 14; // kernel_for's instances

//! log2 of the first pass's radix: F = 2^log2F = RS * 16^P with 1 <= log2(RS) <= 4.
constexpr unsigned first_log2_radix(unsigned log2F) { return (log2F - 1) % 4 + 1; }

//! The most dynamic shared memory a block may have on sm_90.
constexpr std::size_t max_shared_bytes = 227 * 1024;

//! The range bin whose value the forward passes leave at shared position pos: the top
//! log2(RS) bits are its lowest digit (radix RS), the nibbles below its radix-16 digits
//! from the lowest up.
__device__ __forceinline__ unsigned bin_at(unsigned pos, unsigned log2F, unsigned log2RS)
{
    const unsigned low_bits = log2F - log2RS;
    unsigned low = pos & ((1u << low_bits) - 1), digits = 0;
    for (unsigned b = 0; b < low_bits; b += 4) {
        digits = (digits << 4) | (low & 15u);
        low >>= 4;
    }
    return (pos >> low_bits) | (digits << log2RS);
}

//! Queues cp.async copies of the first `count` samples of row m (if any) into buf in
//! the padded layout.
__device__ __forceinline__ void
prefetch_row(const csa_range_rows_args& a, std::size_t m, float2* buf, unsigned count)
{
    if (m < a.naz) {
        const float2* row = a.rows + m * a.nrange;
        for (unsigned i = threadIdx.x; i < count; i += blockDim.x)
            __pipeline_memcpy_async(buf + smem_fft_pad(i), row + i, sizeof(float2));
    }
    __pipeline_commit();
}

__device__ __forceinline__ float2 conj_scaled(float2 v, float w)
{
    return make_float2(v.x * w, -v.y * w);
}

/*
 * PREFETCH (when two rows' shared memory fit the block's budget): the grid is
 * persistent and each block copies its next row into the second buffer with cp.async
 * while it transforms the current one, so the row loads no longer stall the block.
 * PART_J > 0 (when only part of a second row fits): the same with the next row's first
 * PART_J * F / RS samples (the first radix-RS pass's slices j < PART_J), copied into a
 * part buffer after the row once the current row's first pass has read it; the other
 * slices still come straight from global memory.
 */
template <int RS, int ITERS, int THREADS, int MIN_BLOCKS, bool PREFETCH, int PART_J>
__global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
    csa_range_rows_kernel(csa_range_rows_args a)
{
    static_assert(!(PREFETCH && PART_J > 0) && PART_J < RS);
    extern __shared__ float2 smem[];
    constexpr unsigned log2RS = smem_fft_log2_radix(RS);
    const unsigned F = a.nrange, T = blockDim.x;
    const unsigned log2F = 31 - __clz(F);
    const unsigned sA = F / RS; // stride of the radix-RS passes (= ITERS * T)
    const unsigned log2L0 = log2F - log2RS;
    const unsigned padded = F + F / 16;
    float2* const part = smem + padded; // PART_J > 0
    if constexpr (PREFETCH)
        prefetch_row(a, blockIdx.x, smem, F);
    if constexpr (PART_J > 0)
        prefetch_row(a, blockIdx.x, part, PART_J * sA);
    unsigned n = 0; // rows this block has done: the buffer is n & 1
    for (std::size_t m = blockIdx.x; m < a.naz; m += gridDim.x, ++n) {
        float2* row = a.rows + m * F;
        float2* sm = smem + (PREFETCH ? (n & 1u) * padded : 0u);
        if constexpr (PREFETCH) {
            __pipeline_wait_prior(0);
            __syncthreads(); // row m is in sm; the other buffer's last reads are done
            prefetch_row(a, m + gridDim.x, smem + ((n + 1) & 1u) * padded, F);
        }
        if constexpr (PART_J > 0) {
            __pipeline_wait_prior(0);
            __syncthreads(); // row m's part is in `part`
        }
        const float wa = a.azimuth_weight[m];
        if (wa == 0.0f) { // outside the processed Doppler band (uniform per block)
            if constexpr (PART_J > 0)
                prefetch_row(a, m + gridDim.x, part, PART_J * sA);
            for (unsigned i = threadIdx.x; i < F; i += T)
                row[i] = make_float2(0.0f, 0.0f);
            continue;
        }
        // Forward pass radix RS (from the prefetched row, else from global memory with
        // all loads issued before the barrier), phase 1 on the loaded samples.
        const csa_quadratic q1 = a.q1[m];
        float2 v[ITERS][RS];
#pragma unroll
        for (int it = 0; it < ITERS; ++it)
#pragma unroll
            for (int j = 0; j < RS; ++j) {
                const unsigned i = threadIdx.x + it * T + j * sA;
                v[it][j] = PREFETCH || j < PART_J
                               ? (PREFETCH ? sm : part)[smem_fft_pad(i)]
                               : row[i];
            }
#pragma unroll
        for (int it = 0; it < ITERS; ++it)
#pragma unroll
            for (int j = 0; j < RS; ++j)
                v[it][j] = cmul(
                    v[it][j],
                    csa_phasor(q1, static_cast<double>(threadIdx.x + it * T + j * sA)));
        __syncthreads(); // every read of sm before this row's writes is done
        if constexpr (PART_J > 0)
            prefetch_row(a, m + gridDim.x, part, PART_J * sA); // `part` is read
#pragma unroll
        for (int it = 0; it < ITERS; ++it)
            smem_fft_first_dif_pass<RS>(v[it], sm, threadIdx.x + it * T, sA, a.twiddle);
        __syncthreads();
        for (unsigned log2L = log2L0; log2L > 4; log2L -= 4)
            smem_fft_pass<16, false>(sm, F, log2L, a.twiddle, log2F);
        // Last forward pass, phase 2 with the range window (conjugated: the inverse is
        // the forward transform of the conjugate), first inverse pass.
        const csa_quadratic q2 = a.q2[m];
        for (unsigned t = threadIdx.x; t < F / 16; t += T) {
            float2 u[16];
#pragma unroll
            for (int j = 0; j < 16; ++j)
                u[j] = sm[smem_fft_pad(t * 16 + j)];
            smem_fft_reg_dft<16>(u);
            // Position t * 16 + r holds bin k0 + r F / 16 (r is its top radix-16 digit).
            const unsigned k0 = bin_at(t * 16, log2F, log2RS);
#pragma unroll
            for (int r = 0; r < 16; ++r) {
                const unsigned k = k0 + r * (F / 16);
                u[r] = conj_scaled(cmul(u[r], csa_phasor(q2, csa_signed_bin(k, F))),
                                   __ldg(a.range_weight + k));
            }
            smem_fft_reg_dft<16>(u);
#pragma unroll
            for (int j = 0; j < 16; ++j)
                sm[smem_fft_pad(t * 16 + j)] = u[j];
        }
        __syncthreads();
        for (unsigned log2L = 8; log2L <= log2L0; log2L += 4)
            smem_fft_pass<16, true>(sm, F, log2L, a.twiddle, log2F);
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
            const int first = __ldg(a.resample_first + i);
            const float* h = a.resample_taps + std::size_t(i) * csa_resample_taps;
            float2 acc = make_float2(0.0f, 0.0f);
#pragma unroll 8
            for (int t = 0; t < csa_resample_taps; ++t) {
                const float2 x = sm[smem_fft_pad(first + t)];
                const float w = __ldg(h + t);
                acc.x = fmaf(w, x.x, acc.x);
                acc.y = fmaf(w, x.y, acc.y);
            }
            row[i] = cmul(make_float2(acc.x * wa, acc.y * wa),
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

//! The instance for F = 2^LOG2F: threads T = min(F / 16, max_threads), each running
//! ITERS = (F / RS) / T butterflies of the radix-RS passes.
//! Shared memory of one row (the padded layout).
constexpr std::size_t row_bytes(unsigned F) { return (F + F / 16) * sizeof(float2); }

//! Whether the instance for F double-buffers: two rows within the per-block budget.
constexpr bool prefetches(unsigned F) { return 2 * row_bytes(F) <= max_shared_bytes; }

//! Without room for two rows: how many of the first pass's RS slices of F / RS samples
//! the next row's part buffer holds (the most that fit beside the row).
constexpr int part_slices(unsigned F, unsigned RS)
{
    int j = 0;
    while (j + 1 < int(RS) &&
           row_bytes(F) + row_bytes((j + 1) * (F / RS)) <= max_shared_bytes)
        ++j;
    return prefetches(F) ? 0 : j;
}

//! The dynamic shared memory of the instance for F.
constexpr std::size_t shared_bytes(unsigned F, unsigned RS)
{
    return prefetches(F) ? 2 * row_bytes(F)
                         : row_bytes(F) + row_bytes(part_slices(F, RS) * (F / RS));
}

//! The instance for F = 2^LOG2F: threads T = min(F / 16, max_threads), each running
//! ITERS = (F / RS) / T butterflies of the radix-RS passes.
template <unsigned LOG2F>
kernel_t instance()
{
    constexpr unsigned F = 1u << LOG2F, log2RS = first_log2_radix(LOG2F);
    constexpr unsigned T = std::min(F / 16, max_threads);
    constexpr int ITERS = int((F >> log2RS) / T);
    static_assert(ITERS * T == (F >> log2RS));
    return csa_range_rows_kernel<int(1u << log2RS),
                                 ITERS,
                                 int(T),
                                 min_blocks(T),
                                 prefetches(F),
                                 part_slices(F, 1u << log2RS)>;
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
    case 13:
        return instance<13>();
    default:
        return instance<14>();
    }
}

} // namespace

bool csa_range_rows_supported(std::size_t nrange)
{
    return power_of_two_between(nrange, min_log2F, max_log2F);
}

csa_range_rows_launch csa_range_rows_prepare(std::size_t nrange, std::size_t naz)
{
    const unsigned F = static_cast<unsigned>(nrange);
    csa_range_rows_launch l;
    const unsigned log2F = log2_ceil(nrange);
    l.kernel = kernel_for(log2F);
    const unsigned RS = 1u << first_log2_radix(log2F);
    const bool prefetch = prefetches(F) || part_slices(F, RS) > 0;
    l.shared_bytes = shared_bytes(F, RS);
    GPURADAR_CUDA_CHECK(who,
                        cudaFuncSetAttribute(l.kernel,
                                             cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             static_cast<int>(l.shared_bytes)));
    l.threads = std::min(F / 16, max_threads);
    // Prefetching needs rows to prefetch: a persistent grid of the resident blocks.
    std::size_t resident = std::size_t(1) << 30;
    if (prefetch) {
        int device = 0, sms = 0, per_sm = 0;
        GPURADAR_CUDA_CHECK(who, cudaGetDevice(&device));
        GPURADAR_CUDA_CHECK(
            who, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
        GPURADAR_CUDA_CHECK(
            who,
            cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                &per_sm, l.kernel, static_cast<int>(l.threads), l.shared_bytes));
        resident = std::size_t(std::max(1, sms * per_sm));
    }
    l.blocks = static_cast<unsigned>(std::min<std::size_t>(naz, resident));
    return l;
}

void csa_range_rows(const csa_range_rows_args& a,
                    const csa_range_rows_launch& l,
                    cudaStream_t s)
{
    l.kernel<<<l.blocks, l.threads, l.shared_bytes, s>>>(a);
    GPURADAR_CUDA_CHECK_LAUNCH(who, "csa_range_rows");
}

} // namespace gpuradar::kernels::detail
