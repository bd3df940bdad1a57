/*
 * Shared-memory power-of-two FFTs for the stage kernels (internal, device code), used by
 * the fused Doppler kernel (pulse_doppler_processor_cuda.cu), the overlap-save pulse
 * compression (pulse_compression_cuda.cu) and the chirp-scaling range stage and
 * azimuth transform (csa_range_rows.cu, csa_azimuth_fft.cu: the in-register DFTs).
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

#include "common/cuda/complex_math.cuh"
#include <cuda_runtime.h>

namespace gpuradar::kernels::detail {

//! The position of sample m of an n = 2^log2n transform in bit-reversed order.
__device__ __forceinline__ unsigned smem_fft_brev(unsigned m, unsigned log2n)
{
    return log2n ? (__brev(m) >> (32 - log2n)) : 0;
}

//! The radix-2 stage of size 2 (twiddle 1) on every transform of the row-strided
//! (stride S) set of `total` samples: adjacent pairs (u, v) -> (u + v, u - v).
template <int THREADS>
__device__ __forceinline__ void
smem_fft_pairs(float2* sm, unsigned S, unsigned total, unsigned n_fft, unsigned log2n)
{
    for (unsigned t = threadIdx.x; t < total / 2; t += THREADS) {
        const unsigned j = t >> (log2n - 1);
        const unsigned q = t & (n_fft / 2 - 1);
        float2* row = sm + j * S + 2 * q;
        const float2 u = row[0], v = row[1];
        row[0] = cadd(u, v);
        row[1] = csub(u, v);
    }
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
        smem_fft_pairs<THREADS>(sm, S, total, n_fft, log2n);
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
        smem_fft_pairs<THREADS>(sm, S, total, n_fft, log2n);
        __syncthreads();
    }
}


/*
 * Mixed-radix passes for one long transform per block (overlap-save pulse compression):
 * n = R_0 R_1 ... R_{P-1}, each R a power of two <= 16. Pass p works on sub-transforms of
 * length L_p = n / (R_0 ... R_{p-1}) at stride s = L_p / R_p: a thread loads R samples
 * (stride s) into registers, runs an R-point DFT there, and stores them back to the same
 * places, so a pass reads and writes shared memory once for log2(R) radix-2 stages.
 *  - smem_fft_pass<R, false> (DIF): DFT over the loaded samples, then the twiddles
 *    W_{L_p}^{n1 r} (n1 the position in the stride): after passes 0..P-1, bin k of the
 *    transform sits at its mixed-radix digit-reversed position (os_digit_position).
 *  - smem_fft_pass<R, true> (DIT): its transpose (twiddles first, then the DFT).
 *    Passes P-1..0 on data in digit-reversed order give the transform in natural order.
 * Shared-memory index of logical position i: smem_fft_pad(i) (one pad slot per 16
 * samples, so that the strided loads of the last passes hit distinct banks).
 * `twiddle` has n values exp(-2 pi i t / n) (a table in global memory, or the split
 * table below); a butterfly reads W^1, W^2, W^4, W^8 of its n1 there and forms the
 * other powers by at most two complex products.
 */
__device__ __forceinline__ unsigned smem_fft_pad(unsigned i) { return i + (i >> 4); }

//! W_16^k = exp(-2 pi i k / 16) for a compile-time k in [0, 8).
__device__ __forceinline__ float2 smem_fft_w16(int k)
{
    constexpr float c1 = 0.92387953251128674f, s1 = 0.38268343236508977f;
    constexpr float h = 0.70710678118654752f;
    switch (k) {
    case 0:
        return make_float2(1.0f, 0.0f);
    case 1:
        return make_float2(c1, -s1);
    case 2:
        return make_float2(h, -h);
    case 3:
        return make_float2(s1, -c1);
    case 4:
        return make_float2(0.0f, -1.0f);
    case 5:
        return make_float2(-s1, -c1);
    case 6:
        return make_float2(-h, -h);
    default:
        return make_float2(-c1, -s1);
    }
}

template <int R>
__host__ __device__ constexpr int smem_fft_reg_brev(int r)
{
    int out = 0;
    for (int b = 1; b < R; b <<= 1) {
        out <<= 1;
        if (r & b)
            out |= 1;
    }
    return out;
}

//! In-register R-point DFT (R a power of two <= 16), natural order in and out.
template <int R>
__device__ __forceinline__ void smem_fft_reg_dft(float2 (&v)[R])
{
#pragma unroll
    for (int h = R / 2; h >= 1; h /= 2) {
#pragma unroll
        for (int i = 0; i < R; ++i) {
            if ((i & h) == 0) {
                const int k = i & (h - 1);
                const float2 u = v[i], w = v[i + h];
                v[i] = cadd(u, w);
                const float2 d = csub(u, w);
                // W_16^4 = -i: a swap and a sign instead of a product (with (0, -1) it
                // still costs three instructions: x * 0 does not fold in IEEE
                // arithmetic; `gpuradar_bench pd_chain/default`, PD-C).
                const int e = k * (16 / (2 * h));
                v[i + h] = k == 0   ? d
                           : e == 4 ? make_float2(d.y, -d.x)
                                    : cmul(d, smem_fft_w16(e));
            }
        }
    }
    float2 t[R];
#pragma unroll
    for (int r = 0; r < R; ++r)
        t[r] = v[smem_fft_reg_brev<R>(r)];
#pragma unroll
    for (int r = 0; r < R; ++r)
        v[r] = t[r];
}

//! log2 of a radix R in {2, 4, 8, 16} (the passes' compile-time radices).
__host__ __device__ constexpr int smem_fft_log2_radix(int R)
{
    return R == 2 ? 1 : R == 4 ? 2 : R == 8 ? 3 : 4;
}

__host__ __device__ constexpr int smem_fft_high_bit(int r)
{
    int h = 1;
    while (2 * h <= r)
        h *= 2;
    return h;
}

//! Twiddle W^k from a full table of n values in global memory (read-only cache).
__device__ __forceinline__ float2 smem_fft_twiddle_at(const float2* __restrict__ table,
                                                      unsigned k)
{
    return __ldg(table + k);
}

/*
 * The same n = 4^log2_lo values as two short tables in shared memory, for kernels
 * whose shared memory leaves the L1 cache too small to hold a full table:
 * W^k = hi[k >> log2_lo] lo[k mod 2^log2_lo], with hi[j] = W^(j 2^log2_lo) and
 * lo[j] = W^j (one rounding more than a full table's value).
 */
struct smem_fft_split_twiddle {
    const float2* hi;
    const float2* lo;
    unsigned log2_lo;
};

__device__ __forceinline__ float2 smem_fft_twiddle_at(const smem_fft_split_twiddle& t,
                                                      unsigned k)
{
    return cmul(t.hi[k >> t.log2_lo], t.lo[k & ((1u << t.log2_lo) - 1)]);
}

/*
 * One pass's twiddles in pairs by butterfly (dft_pass_twiddles: float4 q nb + n1 holds
 * W_L^(2q n1) and W_L^((2q + 1) n1), nb butterflies), read as R / 2 coalesced float4
 * loads instead of four table loads and the products that form the other powers;
 * step = n1 << log2_step (the pass's stride in the n-point table).
 */
struct smem_fft_pass_twiddles {
    const float4* w;
    unsigned log2_step, butterflies;
};

//! w[r] = W^(r * step) for r < R, from the table (n values) at r = 1, 2, 4, 8.
template <int R, typename Table>
__device__ __forceinline__ void
smem_fft_powers(float2 (&w)[R], const Table& twiddle, unsigned step)
{
    w[0] = make_float2(1.0f, 0.0f);
#pragma unroll
    for (int b = 1; b < R; b <<= 1)
        w[b] = smem_fft_twiddle_at(twiddle, b * step);
#pragma unroll
    for (int r = 3; r < R; ++r) {
        if (r & (r - 1)) {
            const int hi = smem_fft_high_bit(r); // compile-time after unrolling
            w[r] = cmul(w[r - hi], w[hi]);
        }
    }
}

//! v[r] *= W^(r * step) for r < R (step != 0), the powers from the table as
//! smem_fft_powers: a pass's twiddles.
template <int R, typename Table>
__device__ __forceinline__ void
smem_fft_twiddle(float2 (&v)[R], const Table& twiddle, unsigned step)
{
    float2 w[R];
    smem_fft_powers<R>(w, twiddle, step);
#pragma unroll
    for (int r = 1; r < R; ++r)
        v[r] = cmul(v[r], w[r]);
}

//! The same from a pass's own table: its butterfly's R twiddles in R / 2 loads.
template <int R>
__device__ __forceinline__ void
smem_fft_twiddle(float2 (&v)[R], const smem_fft_pass_twiddles& t, unsigned step)
{
    static_assert(R >= 2, "whole float4 pairs");
    const float4* w = t.w + (step >> t.log2_step);
#pragma unroll
    for (int q = 0; q < R / 2; ++q) {
        const float4 p = __ldg(w + q * t.butterflies);
        if (q > 0)
            v[2 * q] = cmul(v[2 * q], make_float2(p.x, p.y));
        v[2 * q + 1] = cmul(v[2 * q + 1], make_float2(p.z, p.w));
    }
}

/*
 * The first (DIF) pass of a transform whose samples a thread already holds in
 * registers: the R samples at n1 + r stride (stride = n / R, the whole transform's
 * first butterfly), transformed, twiddled by W_n^(r n1) and stored at their places.
 * smem_fft_last_dit_pass is its transpose: the same places loaded, twiddled and
 * transformed, the outputs left in registers for the caller to store.
 */
template <int R, typename Table>
__device__ __forceinline__ void smem_fft_first_dif_pass(
    float2 (&v)[R], float2* sm, unsigned n1, unsigned stride, const Table& twiddle)
{
    smem_fft_reg_dft<R>(v);
    if (n1 != 0)
        smem_fft_twiddle<R>(v, twiddle, n1);
#pragma unroll
    for (int r = 0; r < R; ++r)
        sm[smem_fft_pad(n1 + r * stride)] = v[r];
}

template <int R, typename Table>
__device__ __forceinline__ void smem_fft_last_dit_pass(
    float2 (&v)[R], const float2* sm, unsigned n1, unsigned stride, const Table& twiddle)
{
#pragma unroll
    for (int r = 0; r < R; ++r)
        v[r] = sm[smem_fft_pad(n1 + r * stride)];
    if (n1 != 0)
        smem_fft_twiddle<R>(v, twiddle, n1);
    smem_fft_reg_dft<R>(v);
}

//! One pass (see above): DIF = DFT then twiddles, DIT = twiddles then DFT, on the
//! samples a thread loads and stores back at the same places.
template <int R, bool DIT, typename Table>
__device__ __forceinline__ void smem_fft_pass(
    float2* sm, unsigned n, unsigned log2L, const Table& twiddle, unsigned log2n)
{
    constexpr int log2R = smem_fft_log2_radix(R);
    const unsigned log2s = log2L - log2R;
    const unsigned s = 1u << log2s;
    for (unsigned b = threadIdx.x; b < n / R; b += blockDim.x) {
        const unsigned sub = b >> log2s, n1 = b & (s - 1);
        const unsigned base = (sub << log2L) + n1;
        float2 v[R];
#pragma unroll
        for (int j = 0; j < R; ++j)
            v[j] = sm[smem_fft_pad(base + j * s)];
        if constexpr (!DIT)
            smem_fft_reg_dft<R>(v);
        if (n1 != 0)
            smem_fft_twiddle<R>(v, twiddle, n1 << (log2n - log2L));
        if constexpr (DIT)
            smem_fft_reg_dft<R>(v);
#pragma unroll
        for (int r = 0; r < R; ++r)
            sm[smem_fft_pad(base + r * s)] = v[r];
    }
    __syncthreads();
}

} // namespace gpuradar::kernels::detail

#endif
