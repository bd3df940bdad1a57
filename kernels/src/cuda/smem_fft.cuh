/*
 * Shared-memory power-of-two FFTs for the stage kernels (internal, device code), used by
 * the fused Doppler kernel (pulse_doppler_cuda.cu) and the overlap-save pulse compression
 * (pulse_compression_cuda.cu).
 *
 * Both routines transform `count` sequences of n = 2^log2n samples that lie in shared
 * memory at sm + j * S (j < count, row stride S >= n), in place, with the forward kernel
 * exp(-2 pi i m k / n) and no scaling. `twiddle` holds n/2 values exp(-2 pi i t / n)
 * (global memory, read through the read-only cache); W_M^k = twiddle[k * n / M]. Two
 * radix-2 stages per barrier (a radix-2^2 butterfly on 4 samples in registers), one
 * plain radix-2 stage when log2n is odd. Every thread of the block (THREADS of them)
 * must call them; they end with a barrier, and the caller puts one between its own
 * shared-memory writes and the call.
 *
 *  - smem_fft_dit: decimation in time. Input in bit-reversed order (sequence sample m at
 *    position brev(m)), output in natural order.
 *  - smem_fft_dif: decimation in frequency. Input in natural order, output in
 *    bit-reversed order (bin k at position brev(k)).
 * A DIF forward transform, a product with a spectrum stored in bit-reversed order and a
 * DIT transform need no permutation pass (fast convolution).
 */
#ifndef INCLUDED_GPURADAR_KERNELS_SMEM_FFT_CUH
#define INCLUDED_GPURADAR_KERNELS_SMEM_FFT_CUH

#include "complex_math.cuh"
#include <cuda_runtime.h>

namespace gpuradar::kernels::detail {

__device__ __forceinline__ float2 cadd(float2 a, float2 b)
{
    return make_float2(a.x + b.x, a.y + b.y);
}
__device__ __forceinline__ float2 csub(float2 a, float2 b)
{
    return make_float2(a.x - b.x, a.y - b.y);
}

//! The position of sample m of an n = 2^log2n transform in bit-reversed order.
__device__ __forceinline__ unsigned smem_fft_brev(unsigned m, unsigned log2n)
{
    return log2n ? (__brev(m) >> (32 - log2n)) : 0;
}

template <int THREADS>
__device__ __forceinline__ void smem_fft_dit(float2* sm,
                                             unsigned S,
                                             unsigned count,
                                             unsigned n_fft,
                                             unsigned log2n,
                                             const float2* __restrict__ twiddle)
{
    const unsigned total = count * n_fft;
    unsigned s = 0;                       // stages done: the current group size is 2^s
    const unsigned tw_scale_base = log2n; // twiddle of W_M^k = table[k * nfft / M]
    if (log2n & 1) {
        // One radix-2 stage with M = 2 (twiddle 1).
        for (unsigned t = threadIdx.x; t < total / 2; t += THREADS) {
            const unsigned j = t >> (log2n - 1);
            const unsigned q = t & (n_fft / 2 - 1);
            float2* row = sm + j * S + 2 * q;
            const float2 u = row[0], v = row[1];
            row[0] = cadd(u, v);
            row[1] = csub(u, v);
        }
        s = 1;
        __syncthreads();
    }
    for (; s < log2n; s += 2) {
        // Stages with half sizes h = 2^s (M = 2h) and 2h (M = 4h) on groups of 4h.
        const unsigned h = 1u << s;
        const unsigned quarter = n_fft / 4; // radix-2^2 butterflies per transform
        for (unsigned t = threadIdx.x; t < count * quarter; t += THREADS) {
            const unsigned j = t / quarter;
            const unsigned q = t - j * quarter;
            const unsigned g = q >> s;      // group of 4h
            const unsigned k = q & (h - 1); // position in the quarter
            float2* row = sm + j * S + g * 4 * h + k;
            float2 x0 = row[0], x1 = row[h], x2 = row[2 * h], x3 = row[3 * h];
            // Stage 1 (M = 2h): pairs (x0, x1), (x2, x3), twiddle W_{2h}^k.
            const float2 w1 = __ldg(twiddle + (k << (tw_scale_base - s - 1)));
            float2 t1 = cmul(x1, w1), t3 = cmul(x3, w1);
            float2 y0 = cadd(x0, t1), y1 = csub(x0, t1);
            float2 y2 = cadd(x2, t3), y3 = csub(x2, t3);
            // Stage 2 (M = 4h): pairs (y0, y2) with W_{4h}^k, (y1, y3) with W_{4h}^{k+h}.
            const unsigned sh2 = tw_scale_base - s - 2;
            const float2 w2 = __ldg(twiddle + (k << sh2));
            const float2 w3 = __ldg(twiddle + ((k + h) << sh2));
            const float2 u2 = cmul(y2, w2), u3 = cmul(y3, w3);
            row[0] = cadd(y0, u2);
            row[2 * h] = csub(y0, u2);
            row[h] = cadd(y1, u3);
            row[3 * h] = csub(y1, u3);
        }
        __syncthreads();
    }
}

template <int THREADS>
__device__ __forceinline__ void smem_fft_dif(float2* sm,
                                             unsigned S,
                                             unsigned count,
                                             unsigned n_fft,
                                             unsigned log2n,
                                             const float2* __restrict__ twiddle)
{
    // Stages with half sizes n/2, n/4, ..., 1 (Gentleman-Sande: a[k] = u + v,
    // a[k + h] = (u - v) W_{2h}^k), two per barrier on groups of 4H, H = 2^(s-2).
    unsigned s = log2n; // the next group size is 2^s
    const unsigned quarter = n_fft / 4;
    for (; s >= 2; s -= 2) {
        const unsigned H = 1u << (s - 2);
        const unsigned sh2 = log2n - s; // W_{4H}^k = table[k << sh2]
        for (unsigned t = threadIdx.x; t < count * quarter; t += THREADS) {
            const unsigned j = t / quarter;
            const unsigned q = t - j * quarter;
            const unsigned g = q >> (s - 2); // group of 4H
            const unsigned k = q & (H - 1);
            float2* row = sm + j * S + g * 4 * H + k;
            const float2 x0 = row[0], x1 = row[H], x2 = row[2 * H], x3 = row[3 * H];
            // Stage with half size 2H: (x0, x2) with W_{4H}^k, (x1, x3) with
            // W_{4H}^{k+H}.
            const float2 w2 = __ldg(twiddle + (k << sh2));
            const float2 w3 = __ldg(twiddle + ((k + H) << sh2));
            const float2 y0 = cadd(x0, x2), y2 = cmul(csub(x0, x2), w2);
            const float2 y1 = cadd(x1, x3), y3 = cmul(csub(x1, x3), w3);
            // Stage with half size H: (y0, y1) and (y2, y3) with W_{2H}^k.
            const float2 w1 = __ldg(twiddle + (k << (sh2 + 1)));
            row[0] = cadd(y0, y1);
            row[H] = cmul(csub(y0, y1), w1);
            row[2 * H] = cadd(y2, y3);
            row[3 * H] = cmul(csub(y2, y3), w1);
        }
        __syncthreads();
    }
    if (s == 1) {
        // The last stage, half size 1 (twiddle 1).
        const unsigned total = count * n_fft;
        for (unsigned t = threadIdx.x; t < total / 2; t += THREADS) {
            const unsigned j = t >> (log2n - 1);
            const unsigned q = t & (n_fft / 2 - 1);
            float2* row = sm + j * S + 2 * q;
            const float2 u = row[0], v = row[1];
            row[0] = cadd(u, v);
            row[1] = csub(u, v);
        }
        __syncthreads();
    }
}

} // namespace gpuradar::kernels::detail

#endif
