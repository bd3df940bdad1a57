/*
 * CUDA CFAR, ordered statistic (os). Without a threshold map, a rank count decides
 * whether a cell is a detection (rank_test_passes) and only the few cells that are
 * select their k-th smallest training cell, the whole warp ranking the cells together
 * (warp_select), for the detection list. With a threshold map every cell selects:
 * the N training cells go into registers (N <= os_register_max) and a bitonic network
 * sorts them; larger windows use the radix search.
 */
#include "detection/cfar_math.h"
#include "detection/cuda/cfar_cuda_kernels.cuh"

namespace gpuradar::kernels::detail::cfar_cuda_kernels {
namespace {

//! Ascending bitonic sort of a register array (N a power of two, fully unrolled).
template <int N>
__device__ __forceinline__ void bitonic_sort(float (&v)[N])
{
#pragma unroll
    for (int k = 2; k <= N; k <<= 1) {
#pragma unroll
        for (int j = k >> 1; j > 0; j >>= 1) {
#pragma unroll
            for (int i = 0; i < N; ++i) {
                const int l = i ^ j;
                if (l > i) {
                    const float lo = fminf(v[i], v[l]), hi = fmaxf(v[i], v[l]);
                    const bool up = (i & k) == 0;
                    v[i] = up ? lo : hi;
                    v[l] = up ? hi : lo;
                }
            }
        }
    }
}

//! Order-preserving map of floats to unsigned keys (negative values reversed).
__device__ __forceinline__ unsigned float_key(float f)
{
    const unsigned u = __float_as_uint(f);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}
__device__ __forceinline__ float key_float(unsigned k)
{
    return __uint_as_float((k & 0x80000000u) ? (k & 0x7fffffffu) : ~k);
}

//! k-th smallest (1-based) of ctr[delta[0..n)] by a most-significant-bit-first search.
__device__ float radix_select(const float* ctr, const int* delta, int n, int k)
{
    unsigned prefix = 0;
    for (int bit = 31; bit >= 0; --bit) {
        const unsigned high = bit == 31 ? 0u : (~0u << (bit + 1));
        int below = 0;
        for (int t = 0; t < n; ++t) {
            const unsigned key = float_key(ctr[delta[t]]);
            below += (key & high) == prefix && !((key >> bit) & 1u);
        }
        if (k > below) {
            prefix |= 1u << bit;
            k -= below;
        }
    }
    return key_float(prefix);
}

/*!
 * The rank test. x > scale * (k-th smallest training cell) exactly when at least k
 * training cells v have scale * v < x: float multiplication by a positive scale is
 * monotone, so both sides round alike and the decision is the one the selection would
 * give, bit for bit. That set of cells is {v <= y} for the largest float y with
 * scale * y < x (x finite), so the test costs one load and compare per training cell,
 * against the sorting network's ~N log^2 N / 4 compare-exchanges, and stops as soon as
 * more than N - k cells lie above y: a noise cell (nearly every cell) is decided after
 * about N - k of its N cells. Absent cells (+Inf) and NaN lie above y.
 */
__device__ __forceinline__ float largest_counted(float x, float scale)
{
    float y = __fdividef(x, scale); // a first guess, corrected to the exact bound below
    if (x > 0.f && y > 0.f && y < INFINITY) {
        // Positive floats order as their bit patterns: one step is +-1 on the integer.
        int bits = __float_as_int(y);
        while (!(scale * __int_as_float(bits) < x))
            --bits; // stops at 0 at the latest: scale * 0 < x
        while (scale * __int_as_float(bits + 1) < x)
            ++bits; // stops before +Inf: scale * Inf < x is false
        return __int_as_float(bits);
    }
    y = x / scale;
    while (!(scale * y < x))
        y = nextafterf(y, -INFINITY);
    for (float up = nextafterf(y, INFINITY); scale * up < x;
         up = nextafterf(up, INFINITY))
        y = up;
    return y;
}

/*!
 * At least k of the window's training cells around ctr (tile row pitch tch; the window
 * ring, the guard box left out) are <= y. Window extents fixed at compile time (GR >= 0)
 * unroll into constant offsets.
 */
template <int GR, int TR, int GC, int TC>
__device__ __forceinline__ bool
rank_test_passes(const kernel_args& a, const float* ctr, int tch, float y, int k)
{
    const int gr = GR >= 0 ? GR : a.gr, wr = GR >= 0 ? GR + TR : a.gr + a.tr;
    const int gc = GR >= 0 ? GC : a.gc, wc = GR >= 0 ? GC + TC : a.gc + a.tc;
    const int max_above = a.os_n - k;
    int above = 0;
#pragma unroll
    for (int dr = -wr; dr <= wr; ++dr) {
        const float* row = ctr + dr * tch;
        if (dr < -gr || dr > gr) {
#pragma unroll
            for (int dc = -wc; dc <= wc; ++dc)
                above += !(row[dc] <= y);
        } else {
#pragma unroll
            for (int dc = gc + 1; dc <= wc; ++dc)
                above += !(row[-dc] <= y) + !(row[dc] <= y);
        }
        if (above > max_above)
            return false;
    }
    return true;
}

/*!
 * The k-th smallest (1-based) training cell of the cell at `ctr` (the same on every
 * lane), selected by the whole warp: each lane ranks its cells against all n, and the
 * cell with fewer than k smaller and at least k smaller-or-equal is the one. A single
 * lane's radix select takes 32 n dependent shared loads, long enough to hold its block
 * (and the kernel's tail) for the whole run.
 */
__device__ float warp_select(const float* ctr, const int* delta, int n, int k)
{
    const int lane = int(threadIdx.x & 31u);
    for (int base = 0; base < n; base += 32) {
        const int t = base + lane;
        const float v = t < n ? ctr[delta[t]] : INFINITY;
        int less = 0, less_or_equal = 0;
        for (int u = 0; u < n; ++u) {
            const float w = ctr[delta[u]];
            less += w < v;
            less_or_equal += w <= v;
        }
        const unsigned kth =
            __ballot_sync(full_warp, t < n && less < k && k <= less_or_equal);
        if (kth)
            return __shfl_sync(full_warp, v, __ffs(kth) - 1);
    }
    return INFINITY; // not reached for 1 <= k <= n
}

//! The tile (absent cells +Inf) and the training offsets into shared memory.
__device__ __forceinline__ void load_os_tile(const kernel_args& a,
                                             const block_place& b,
                                             int trh,
                                             int tch,
                                             int ndelta,
                                             float* tile,
                                             int* delta)
{
    // Absent cells rank above everything (+Inf); a clipped window's k' <= N' present
    // cells, so its k'-th smallest is a present cell's.
    load_tile(a, b, trh, tch, INFINITY, tile);
    const int tid = threadIdx.y * blockDim.x + threadIdx.x;
    for (int t = tid; t < ndelta; t += block_threads)
        delta[t] = t < a.os_n ? a.os_delta[t] : 0;
    __syncthreads();
}

/*!
 * Runs without a threshold map: the rank test per cell (the window fixed at compile time
 * when DESIGN_WINDOW), then the warp selects the order statistic of each cell that
 * passed, for its threshold in the detection list.
 */
template <bool DESIGN_WINDOW>
__global__ void __launch_bounds__(block_threads) cfar_os_rank_kernel(const kernel_args a)
{
    extern __shared__ float smem[];
    // The design window's extents as constants: the test's offsets fold into the loads.
    const int wr = DESIGN_WINDOW ? design_gr + design_tr : a.gr + a.tr;
    const int wc = DESIGN_WINDOW ? design_gc + design_tc : a.gc + a.tc;
    const int trh = a.tile_rows + 2 * wr, tch = tile_cols + 2 * wc;
    float* tile = smem;
    int* delta = reinterpret_cast<int*>(tile + trh * tch);

    begin_cfar_kernel(a);
    const block_place b = place_block(a);
    load_os_tile(a, b, trh, tch, a.os_n, tile, delta);

    const int j = threadIdx.x, c = b.c0 + j;
    const int col_class = cfar_clip_class(c, a.ncols, wc, a.col_wrap);
    for (int i = threadIdx.y; i < a.tile_rows; i += block_rows) { // the same i warp-wide
        const int r = b.r0 + i;
        const bool valid = r < a.nrows && c < a.ncols;
        const float* ctr = tile + (i + wr) * tch + j + wc;
        float x = 0.f, scale = 0.f, alpha = 1.f;
        int k = 1;
        bool passes = false;
        if (valid) {
            x = *ctr;
            const cfar_class_entry e =
                class_entry(a, cfar_clip_class(r, a.nrows, wr, a.row_wrap), col_class);
            scale = e.scale_lead;
            alpha = e.alpha;
            k = e.k;
            if (cfar_finite(x)) {
                const float y = largest_counted(x, scale);
                passes =
                    DESIGN_WINDOW
                        ? rank_test_passes<design_gr, design_tr, design_gc, design_tc>(
                              a, ctr, tch, y, k)
                        : rank_test_passes<-1, 0, 0, 0>(a, ctr, tch, y, k);
            }
        }
        // +Inf fails x > t: not a detection, and there is no threshold map to write.
        float kth = INFINITY;
        for (unsigned pending = __ballot_sync(full_warp, passes); pending;
             pending &= pending - 1) {
            const int src = __ffs(pending) - 1;
            const float s =
                warp_select(ctr - j + src, delta, a.os_n, __shfl_sync(full_warp, k, src));
            kth = j == src ? s : kth;
        }
        finish_cell(a, b, r, c, valid, x, scale * kth, alpha);
    }
}

//! Runs with a threshold map: every cell selects. NMAX > 0: registers and a sorting
//! network (N <= NMAX); NMAX == 0: radix select.
template <int NMAX>
__global__ void __launch_bounds__(block_threads) cfar_os_kernel(const kernel_args a)
{
    extern __shared__ float smem[];
    const int wr = a.gr + a.tr, wc = a.gc + a.tc;
    const int trh = a.tile_rows + 2 * wr, tch = tile_cols + 2 * wc;
    float* tile = smem;
    int* delta = reinterpret_cast<int*>(tile + trh * tch);

    begin_cfar_kernel(a);
    const block_place b = place_block(a);
    load_os_tile(a, b, trh, tch, a.os_n > NMAX ? a.os_n : NMAX, tile, delta);

    // The cell loop of test_tile_cells written out: with the selection inside a lambda
    // the kernel ran a few percent slower (`gpuradar_bench cfar_2d/PD`, os).
    const int j = threadIdx.x, c = b.c0 + j;
    const int col_class = cfar_clip_class(c, a.ncols, wc, a.col_wrap);
    for (int i = threadIdx.y; i < a.tile_rows; i += block_rows) {
        const int r = b.r0 + i;
        const bool valid = r < a.nrows && c < a.ncols;
        float x = 0.f, t = 0.f, alpha = 1.f;
        if (valid) {
            const float* ctr = tile + (i + wr) * tch + j + wc;
            x = *ctr;
            const cfar_class_entry e =
                class_entry(a, cfar_clip_class(r, a.nrows, wr, a.row_wrap), col_class);
            float kth;
            if constexpr (NMAX > 0) {
                float v[NMAX];
#pragma unroll
                for (int u = 0; u < NMAX; ++u)
                    v[u] = u < a.os_n ? ctr[delta[u]] : INFINITY;
                bitonic_sort(v);
                kth = v[0];
#pragma unroll
                for (int u = 1; u < NMAX; ++u)
                    kth = u == e.k - 1 ? v[u] : kth;
            } else {
                kth = radix_select(ctr, delta, a.os_n, e.k);
            }
            t = e.scale_lead * kth;
            alpha = e.alpha;
        }
        finish_cell(a, b, r, c, valid, x, t, alpha);
    }
}

} // namespace

kernel_fn ordered_statistic_kernel(int n, bool threshold_map, bool design_window)
{
    if (!threshold_map)
        return design_window ? cfar_os_rank_kernel<true> : cfar_os_rank_kernel<false>;
    return n <= 32   ? cfar_os_kernel<32>
           : n <= 64 ? cfar_os_kernel<os_register_max>
                     : cfar_os_kernel<0>;
}

} // namespace gpuradar::kernels::detail::cfar_cuda_kernels
