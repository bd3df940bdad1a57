/*
 * CUDA CFAR, segmented estimator (ca, go, so): row sums of every tile row
 * (cfar_row_sums_of), then per cell the column of row sums (cfar_halves): O(wc + wr)
 * shared reads per cell, the same float additions in the same order as the CPU twin.
 */
#include "detection/cfar_math.h"
#include "detection/cuda/cfar_cuda_kernels.cuh"

namespace gpuradar::kernels::detail::cfar_cuda_kernels {
namespace {

//! Window reach up to which the segmented kernel is unrolled (predicated, immediate
//! shared-memory offsets): wr <= 8 rows, wc <= 4 columns per side covers the PD
//! workloads' window (6, 2; CONVENTIONS.md) and its neighbours; larger windows run the
//! loop version.
constexpr int unrolled_max_wr = 8;
constexpr int unrolled_max_wc = 4;

/*!
 * cfar_row_sums_of with the window's column reach known up to WC at compile time (WC = 0:
 * any reach, the loops of cfar_math.h). Same additions in the same order either way.
 */
template <int WC>
__device__ __forceinline__ cfar_row_sums row_sums(const float* x, int gc, int tc)
{
    if constexpr (WC == 0) {
        return cfar_row_sums_of([x](int u) { return x[u]; }, gc, tc);
    } else {
        float lo = 0.f, g = 0.f, hi = 0.f;
        const int w2 = 2 * (gc + tc);
#pragma unroll
        for (int u = 0; u <= 2 * WC; ++u) {
            if (u <= w2) {
                const float v = x[u];
                if (u < tc)
                    lo += v;
                else if (u <= tc + 2 * gc)
                    g += v;
                else
                    hi += v;
            }
        }
        return { (lo + g) + hi, lo + hi, lo, hi };
    }
}

/*!
 * cfar_halves with the window's row reach known up to WR at compile time (WR = 0: any
 * reach). Unrolled and predicated, rows in the same order as the CPU twin's loops.
 */
template <int WR>
__device__ __forceinline__ void halves_of(const float* full,
                                          const float* side,
                                          float lo0,
                                          float hi0,
                                          int gr,
                                          int tr,
                                          float& lead,
                                          float& lag)
{
    if constexpr (WR == 0) {
        cfar_halves([full](int dr) { return full[dr * tile_cols]; },
                    [side](int dr) { return side[dr * tile_cols]; },
                    lo0,
                    hi0,
                    gr,
                    tr,
                    lead,
                    lag);
    } else {
        const int wr = gr + tr;
        float a = 0.f;
#pragma unroll
        for (int k = WR; k >= 1; --k)
            if (k <= wr)
                a += k > gr ? full[-k * tile_cols] : side[-k * tile_cols];
        a += lo0;
        float b = hi0;
#pragma unroll
        for (int k = 1; k <= WR; ++k)
            if (k <= wr)
                b += k > gr ? full[k * tile_cols] : side[k * tile_cols];
        lead = a;
        lag = b;
    }
}

/*!
 * Segmented sums. Shared memory: the tile (trh x tch), then per tile row and cell column
 * the full and side row sums (trh x 32 each), and the lo/hi sums of the cell rows only
 * (tile_rows x 32 each): the CUT's own row is the one that needs them.
 */
template <cfar_variant V, int WR, int WC>
__global__ void __launch_bounds__(block_threads)
    cfar_segmented_kernel(const kernel_args a)
{
    extern __shared__ float smem[];
    const int wr = a.gr + a.tr, wc = a.gc + a.tc;
    const int trh = a.tile_rows + 2 * wr, tch = tile_cols + 2 * wc;
    float* tile = smem;
    float* s_full = tile + trh * tch;
    float* s_side = s_full + trh * tile_cols;
    float* s_lo = s_side + trh * tile_cols;
    float* s_hi = s_lo + a.tile_rows * tile_cols;

    begin_cfar_kernel(a);
    const block_place b = place_block(a);
    load_tile(a, b, trh, tch, 0.f, tile);
    __syncthreads();

    const int tid = threadIdx.y * tile_cols + threadIdx.x;
    for (int idx = tid; idx < trh * tile_cols; idx += block_threads) {
        const int i = idx / tile_cols, j = idx % tile_cols;
        const cfar_row_sums s = row_sums<WC>(tile + i * tch + j, a.gc, a.tc);
        s_full[idx] = s.full;
        s_side[idx] = s.side;
        if (i >= wr && i < wr + a.tile_rows) {
            s_lo[idx - wr * tile_cols] = s.lo;
            s_hi[idx - wr * tile_cols] = s.hi;
        }
    }
    __syncthreads();

    test_tile_cells(a, b, [&](int i, int j, int, int, const cfar_class_entry& e) {
        const int s0 = (i + wr) * tile_cols + j;
        float lead, lag;
        halves_of<WR>(s_full + s0,
                      s_side + s0,
                      s_lo[i * tile_cols + j],
                      s_hi[i * tile_cols + j],
                      a.gr,
                      a.tr,
                      lead,
                      lag);
        return cell_test{ tile[(i + wr) * tch + j + wc],
                          cfar_sum_threshold<V>(lead, lag, e) };
    });
}

template <int WR, int WC>
kernel_fn segmented_kernel_of(cfar_variant v)
{
    switch (v) {
    case cfar_variant::ca:
        return cfar_segmented_kernel<cfar_variant::ca, WR, WC>;
    case cfar_variant::go:
        return cfar_segmented_kernel<cfar_variant::go, WR, WC>;
    case cfar_variant::so:
        return cfar_segmented_kernel<cfar_variant::so, WR, WC>;
    default:
        return nullptr;
    }
}

} // namespace

kernel_fn segmented_kernel(cfar_variant v, int wr, int wc)
{
    return wr <= unrolled_max_wr && wc <= unrolled_max_wc
               ? segmented_kernel_of<unrolled_max_wr, unrolled_max_wc>(v)
               : segmented_kernel_of<0, 0>(v);
}

} // namespace gpuradar::kernels::detail::cfar_cuda_kernels
