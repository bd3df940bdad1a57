/*
 * Device helpers shared by the chirp-scaling range stage's kernels (internal):
 * csa_range_rows.cu (a row per block) and csa_range_rows_pair.cu (a row per
 * two-block cluster).
 */
#ifndef INCLUDED_GPURADAR_KERNELS_CSA_RANGE_ROWS_CUH
#define INCLUDED_GPURADAR_KERNELS_CSA_RANGE_ROWS_CUH

#include "common/cuda/complex_math.cuh"
#include "common/cuda/smem_fft.cuh"
#include "sar/cuda/csa_phase.cuh"
#include "sar/cuda/csa_range_rows.h"
#include <cuda_runtime.h>
#include <cstddef>

namespace gpuradar::kernels::detail {

//! The most dynamic shared memory a block may have on sm_90.
constexpr std::size_t csa_max_shared_bytes = 227 * 1024;

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

__device__ __forceinline__ float2 conj_scaled(float2 v, float w)
{
    return make_float2(v.x * w, -v.y * w);
}

/*
 * Between the transforms, in registers: the last forward radix-16 pass, phase 2 with
 * the range window (conjugated: the inverse is the forward transform of the conjugate)
 * and the first inverse pass, on `groups` groups of 16 shared positions. Position
 * t * 16 + r of the block's shared row holds bin k0 + r F / 16 (r is the bin's top
 * radix-16 digit), k0 the bin at the group's place in the whole row's forward order,
 * `row_position(t * 16)`.
 */
template <typename RowPosition>
__device__ __forceinline__ void csa_spectrum_pass(float2* sm,
                                                  unsigned groups,
                                                  unsigned log2F,
                                                  unsigned log2RS,
                                                  const csa_quadratic& q2,
                                                  const float* __restrict__ range_weight,
                                                  RowPosition row_position)
{
    const unsigned F = 1u << log2F;
    for (unsigned t = threadIdx.x; t < groups; t += blockDim.x) {
        // The weights first: their loads are in flight during the DFT.
        const unsigned k0 = bin_at(row_position(t * 16), log2F, log2RS);
        float w[16];
#pragma unroll
        for (int r = 0; r < 16; ++r)
            w[r] = __ldg(range_weight + k0 + r * (F / 16));
        float2 u[16];
#pragma unroll
        for (int j = 0; j < 16; ++j)
            u[j] = sm[smem_fft_pad(t * 16 + j)];
        smem_fft_reg_dft<16>(u);
#pragma unroll
        for (int r = 0; r < 16; ++r) {
            const unsigned k = k0 + r * (F / 16);
            u[r] = conj_scaled(cmul(u[r], csa_phasor(q2, csa_signed_bin(k, F))), w[r]);
        }
        smem_fft_reg_dft<16>(u);
#pragma unroll
        for (int j = 0; j < 16; ++j)
            sm[smem_fft_pad(t * 16 + j)] = u[j];
    }
}

//! The squint resampler's output column i, from the row in natural order
//! (`sample(e)` is its sample e).
template <typename Sample>
__device__ __forceinline__ float2 csa_resampled(const csa_range_rows_args& a,
                                                unsigned i,
                                                Sample sample)
{
    const int first = __ldg(a.resample_first + i);
    const float* h = a.resample_taps + std::size_t(i) * csa_resample_taps;
    float2 acc = make_float2(0.0f, 0.0f);
#pragma unroll 8
    for (int t = 0; t < csa_resample_taps; ++t) {
        const float2 x = sample(unsigned(first + t));
        const float w = __ldg(h + t);
        acc.x = fmaf(w, x.x, acc.x);
        acc.y = fmaf(w, x.y, acc.y);
    }
    return acc;
}

} // namespace gpuradar::kernels::detail

#endif
