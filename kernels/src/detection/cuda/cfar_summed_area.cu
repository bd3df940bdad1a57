/*
 * CUDA CFAR, summed-area estimator (ca, go, so): an fp64 integral image of the tile,
 * warp-shuffle scans of its rows then its columns; every half is then three rectangles of
 * four corners, O(1) per cell. fp64 because a float table of a whole tile would cancel
 * away the training sums (prefix sums ~1e3 x larger than a window's). Chosen by the
 * caller (cfar_estimator::summed_area) or by `automatic` where a tall window's segmented
 * tile does not fit in shared memory (cfar_cuda.cu, choose_kernel).
 *
 * Cells at or above cfar_max_training_power are counted like non-finite ones (their
 * windows get T = +Inf) instead of entering the table; the segmented estimators give
 * those windows a finite T from the capped level, which no finite cell of the window but
 * a huge one can exceed. A table's sums are exact to 2^-53 of the tile's total: a tile
 * with cells 10^13 above its noise (below the cap) has that much rounding in the sums of
 * its other windows; the segmented estimators have no such limit.
 */
#include "detection/cfar_math.h"
#include "detection/cuda/cfar_cuda_kernels.cuh"

namespace gpuradar::kernels::detail::cfar_cuda_kernels {
namespace {

//! Inclusive scan of n values p[0], p[step], ... by one warp, 32 at a time.
template <typename T>
__device__ __forceinline__ void warp_scan(T* p, int n, int step)
{
    const int lane = threadIdx.x & 31;
    T carry = 0;
    for (int base = 0; base < n; base += 32) {
        const int t = base + lane;
        T v = t < n ? p[t * step] : T(0);
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
            const T u = __shfl_up_sync(full_warp, v, o);
            if (lane >= o)
                v += u;
        }
        v += carry;
        if (t < n)
            p[t * step] = v;
        carry = __shfl_sync(full_warp, v, 31);
    }
}

//! 2-D inclusive prefix sums of the (rows x cols) table at s + pitch + 1 (row 0 and
//! column 0 of the table stay zero).
template <typename T>
__device__ __forceinline__ void sat_scan(T* s, int rows, int cols, int pitch)
{
    const int warp = threadIdx.y;
    for (int i = 1 + warp; i <= rows; i += block_rows)
        warp_scan(s + i * pitch + 1, cols, 1);
    __syncthreads();
    for (int j = 1 + warp; j <= cols; j += block_rows)
        warp_scan(s + pitch + j, rows, pitch);
    __syncthreads();
}

//! Sum over window offsets [r0, r1] x [c0, c1] of the CUT at table position (ci, cj);
//! zero for an empty range.
template <typename T>
__device__ __forceinline__ T
sat_rect(const T* s, int pitch, int ci, int cj, int r0, int r1, int c0, int c1)
{
    const T* lo = s + (ci + r0 - 1) * pitch;
    const T* hi = s + (ci + r1) * pitch;
    return (hi[cj + c1] - lo[cj + c1]) - (hi[cj + c0 - 1] - lo[cj + c0 - 1]);
}

template <typename T>
struct halves {
    T lead, lag;
};

//! Lead and lag training sums (see cfar_variant) as sums and differences of rectangles.
template <typename T>
__device__ __forceinline__ halves<T>
sat_halves(const T* s, int pitch, int ci, int cj, int gr, int tr, int gc, int tc)
{
    const int wr = gr + tr, wc = gc + tc;
    return { sat_rect(s, pitch, ci, cj, -wr, -1, -wc, wc) -
                 sat_rect(s, pitch, ci, cj, -gr, -1, -gc, gc) +
                 sat_rect(s, pitch, ci, cj, 0, 0, -wc, -gc - 1),
             sat_rect(s, pitch, ci, cj, 1, wr, -wc, wc) -
                 sat_rect(s, pitch, ci, cj, 1, gr, -gc, gc) +
                 sat_rect(s, pitch, ci, cj, 0, 0, gc + 1, wc) };
}

template <cfar_variant V>
__global__ void __launch_bounds__(block_threads) cfar_sat_kernel(const kernel_args a)
{
    extern __shared__ double dsmem[];
    const int wr = a.gr + a.tr, wc = a.gc + a.tc;
    const int trh = a.tile_rows + 2 * wr, tch = tile_cols + 2 * wc;
    const int pitch = sat_pitch(tch);
    double* sat = dsmem;
    int* bad = reinterpret_cast<int*>(sat + (trh + 1) * pitch);

    begin_cfar_kernel(a);
    const block_place b = place_block(a);
    const int tid = threadIdx.y * blockDim.x + threadIdx.x;
    int any_bad = 0;
    for (int idx = tid; idx < (trh + 1) * pitch; idx += block_threads) {
        const int i = idx / pitch, j = idx - (idx / pitch) * pitch;
        double v = 0;
        int nonfinite = 0;
        if (i > 0 && j > 0 && j <= tch) {
            const int r = resolve(b.r0 - wr + i - 1, a.nrows, a.row_wrap);
            const int c = resolve(b.c0 - wc + j - 1, a.ncols, a.col_wrap);
            if (r >= 0 && c >= 0) {
                const float f = __ldg(b.map + r * a.row_stride + c);
                // A cell at the training cap goes to the count table with the
                // non-finite ones: in the fp64 table it would cancel away the sums of
                // the tile's other windows (2^100 x 2^-53 >> their noise).
                nonfinite = !cfar_finite(f) || f >= cfar_max_training_power;
                v = nonfinite ? 0.0 : double(f);
            }
        }
        sat[idx] = v;
        bad[idx] = nonfinite;
        any_bad |= nonfinite;
    }
    // Non-finite cells are rare: their count table is built only where a tile has one.
    any_bad = __syncthreads_or(any_bad);
    sat_scan(sat, trh, tch, pitch);
    if (any_bad)
        sat_scan(bad, trh, tch, pitch);

    test_tile_cells(a, b, [&](int i, int j, int r, int c, const cfar_class_entry& e) {
        const int ci = i + wr + 1, cj = j + wc + 1;
        const halves<double> h = sat_halves(sat, pitch, ci, cj, a.gr, a.tr, a.gc, a.tc);
        // Rounding can leave -1e-16 where a half is all zeros; power is >= 0.
        float fl = float(fmax(h.lead, 0.0)), fg = float(fmax(h.lag, 0.0));
        if (any_bad) {
            const halves<int> n = sat_halves(bad, pitch, ci, cj, a.gr, a.tr, a.gc, a.tc);
            fl = n.lead ? INFINITY : fl;
            fg = n.lag ? INFINITY : fg;
        }
        return cell_test{ __ldg(b.map + r * a.row_stride + c),
                          cfar_sum_threshold<V>(fl, fg, e) };
    });
}

} // namespace

kernel_fn summed_area_kernel(cfar_variant v)
{
    switch (v) {
    case cfar_variant::ca:
        return cfar_sat_kernel<cfar_variant::ca>;
    case cfar_variant::go:
        return cfar_sat_kernel<cfar_variant::go>;
    case cfar_variant::so:
        return cfar_sat_kernel<cfar_variant::so>;
    default:
        return nullptr;
    }
}

} // namespace gpuradar::kernels::detail::cfar_cuda_kernels
