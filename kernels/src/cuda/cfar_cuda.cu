/*
 * CUDA CFAR: one fused kernel per run (estimate, threshold test, local maximum, mask,
 * optional threshold, device-side compaction of the detections, non-finite counts).
 *
 * Each block owns a tile of tile_rows x tile_cols cells of one map and loads it with its
 * halo (the window's reach) into shared memory once. Three ways to form the estimate:
 *  - segmented (ca, go, so): row sums of every tile row (cfar_row_sums_of), then per
 *    cell the column of row sums (cfar_halves): O(wc + wr) shared reads per cell, the
 *    same float additions in the same order as the CPU twin.
 *  - summed-area (ca, go, so): an fp64 integral image of the tile, warp-shuffle scans of
 *    its rows then its columns; every half is then three rectangles of four corners.
 *    O(1) per cell; fp64 because a float table of a whole tile would cancel away the
 *    training sums (prefix sums ~1e3 x larger than a window's).
 *  - row-vector segmented (ca, go, so; DESIGN.md's window on maps of whole float4 rows,
 *    the PD chain's case): a thread owns 4 adjacent cells, a warp 128 columns of a row;
 *    the same sums as the segmented kernel, in the same order, ~4x fewer instructions
 *    per cell (cfar_vec_kernel below).
 *  - os: per cell, the N training cells go into registers (N <= 64) and a bitonic network
 *    sorts them; larger windows select the k-th smallest by a radix search over the
 *    cells in shared memory (32 passes).
 */
#include "../cfar_plan.h"
#include "../param_check.h"
#include "cuda_check.h"
#include "dependent_launch.cuh"
#include "l2_residency.h"
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace gpuradar::kernels::detail {
namespace {

//! One warp across the columns (Doppler): each tile row is a coalesced 128-byte load.
constexpr int tile_cols = 32;
//! 8 warps per block: enough to hide load latency, few enough that several blocks fit.
constexpr int block_rows = 8;
constexpr int block_threads = tile_cols * block_rows;
//! Cell rows per tile (4 per thread): the halo of 2 wr rows (12 for the PD window) is
//! loaded once per 32 rows instead of once per 8. Halved while shared memory is short.
constexpr int max_tile_rows = 32;
//! Grid y and z limits of a launch; larger runs are split into several launches.
constexpr unsigned max_grid_yz = 65535;
//! Windows of up to this many training cells sort in registers (os).
constexpr int os_register_max = 64;
//! Window reach up to which the segmented kernel is unrolled (predicated, immediate
//! shared-memory offsets): wr <= 8 rows, wc <= 4 columns per side covers DESIGN.md's PD
//! window (6, 2) and its neighbours; larger windows run the loop version.
constexpr int unrolled_max_wr = 8;
constexpr int unrolled_max_wc = 4;
//! Tile loads in flight per thread before they are stored (memory-level parallelism).
constexpr int load_batch = 4;
//! Detections copied back with the counters in the one copy that ends each run (24 B
//! each): a typical CPI's list crosses PCIe without a second round trip.
constexpr std::size_t list_prefix = 1024;

//! The list head copied back each run: list_prefix, or (A/B timing) the environment
//! variable GPURADAR_CFAR_CUDA_LIST_HEAD (entries, >= 0). Longer lists take a second copy
//! in collect().
std::size_t list_head_from_env()
{
    const char* e = std::getenv("GPURADAR_CFAR_CUDA_LIST_HEAD");
    if (e == nullptr || *e == '\0')
        return list_prefix;
    char* end = nullptr;
    const long long v = std::strtoll(e, &end, 10);
    return (*end == '\0' && v >= 0) ? std::size_t(v) : list_prefix;
}
constexpr unsigned full_warp = 0xffffffffu;

struct device_detection {
    std::uint32_t map, row, col;
    float power, threshold, noise;
};

struct kernel_args {
    const float* in;
    std::uint8_t* mask;
    float* thr;
    // Geometry of this launch (see cfar_cuda::run for the one-row flattening).
    int nrows, ncols;
    long long row_stride, group_stride;
    int channels;
    int map0;      // first map of this launch (blockIdx.z offset)
    int tile_row0; // first tile row of this launch (blockIdx.y offset)
    int tile_rows;
    int rows_per_label; // label (reported map) = map + row / rows_per_label
    // Window
    int gr, tr, gc, tc;
    bool row_wrap, col_wrap, local_max;
    int lm_rows;
    const cfar_class_entry* classes;
    cfar_class_entry interior;
    const int* os_delta; // shared-memory offsets of the training cells from the CUT
    int os_n;
    // Outputs beside the mask
    unsigned long long* det_count;
    device_detection* det_list;
    unsigned long long det_capacity;
    unsigned long long* nonfinite; // per label
    // The other result area's counters, zeroed for the next run by block (0, 0, 0) of
    // the first launch of this run (nullptr in the other launches).
    unsigned long long* reset;
    int reset_n;
};

/*!
 * First statement of every CFAR kernel: wait for the power map's producer (a dependent
 * launch may start this kernel while that kernel finishes), then zero the next run's
 * counters (no memset between the map's producer and this kernel). Stream order makes
 * that area free: the previous run's copy back of it finished before this kernel began.
 */
__device__ __forceinline__ void begin_cfar_kernel(const kernel_args& a)
{
    wait_for_predecessor();
    allow_dependents();
    if (a.reset != nullptr && blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0) {
        const int nthreads = int(blockDim.x * blockDim.y);
        for (int i = int(threadIdx.y * blockDim.x + threadIdx.x); i < a.reset_n;
             i += nthreads)
            a.reset[i] = 0;
    }
}

__device__ __forceinline__ int resolve(int i, int n, bool wrap)
{
    if (i >= 0 && i < n)
        return i;
    if (!wrap)
        return -1;
    i %= n;
    return i < 0 ? i + n : i;
}

__device__ __forceinline__ long long map_offset(const kernel_args& a, int m)
{
    return (m / a.channels) * a.group_stride + (long long)(m % a.channels) * a.ncols;
}

//! What every kernel derives from its block index once.
struct block_place {
    int m;            // map
    long long base;   // element offset of the map (input and outputs)
    const float* map; // a.in + base
    int r0, c0;       // first cell row and column of the tile
};

__device__ __forceinline__ block_place place_block(const kernel_args& a)
{
    block_place b;
    b.m = a.map0 + blockIdx.z;
    b.base = map_offset(a, b.m);
    b.map = a.in + b.base;
    b.r0 = (a.tile_row0 + blockIdx.y) * a.tile_rows;
    b.c0 = blockIdx.x * tile_cols;
    return b;
}

__device__ __forceinline__ cfar_class_entry class_entry(const kernel_args& a,
                                                        int row_class,
                                                        int col_class)
{
    const int wr = a.gr + a.tr, wc = a.gc + a.tc;
    if (row_class == wr && col_class == wc)
        return a.interior;
    return a.classes[row_class * (2 * wc + 1) + col_class];
}

/*!
 * The tile and its halo, trh x tch, sanitised; cells beyond a clipped edge hold
 * `absent`. Flat over the tile so that every lane works; the (row, column) of each
 * thread's next element advances by a constant step (no division per element), and
 * load_batch loads are issued before any is stored.
 */
__device__ __forceinline__ void load_tile(const kernel_args& a,
                                          const block_place& b,
                                          int trh,
                                          int tch,
                                          float absent,
                                          float* tile)
{
    const int wr = a.gr + a.tr, wc = a.gc + a.tc;
    const int tid = threadIdx.y * tile_cols + threadIdx.x;
    const int n = trh * tch;
    const int di = block_threads / tch, dj = block_threads - di * tch;
    int i = tid / tch, j = tid - (tid / tch) * tch;
    for (int idx = tid; idx < n; idx += load_batch * block_threads) {
        float v[load_batch];
#pragma unroll
        for (int q = 0; q < load_batch; ++q) {
            v[q] = absent;
            if (idx + q * block_threads < n) {
                const int r = resolve(b.r0 - wr + i, a.nrows, a.row_wrap);
                const int c = resolve(b.c0 - wc + j, a.ncols, a.col_wrap);
                if (r >= 0 && c >= 0)
                    v[q] = __ldg(b.map + r * a.row_stride + c);
            }
            i += di;
            j += dj;
            if (j >= tch) {
                j -= tch;
                ++i;
            }
        }
#pragma unroll
        for (int q = 0; q < load_batch; ++q)
            if (idx + q * block_threads < n)
                tile[idx + q * block_threads] = cfar_sanitize(v[q]);
    }
}

/*!
 * Everything after T: the test, the local maximum, the outputs, the compaction and the
 * non-finite count. Every lane of a warp calls it (a warp is one tile row), valid or not.
 */
__device__ __forceinline__ void finish_cell(const kernel_args& a,
                                            const block_place& b,
                                            int r,
                                            int c,
                                            bool valid,
                                            float x,
                                            float t,
                                            float alpha)
{
    const bool finite = valid && cfar_finite(x);
    bool det = finite && x > t;
    if (det && a.local_max)
        det = cfar_is_local_max(
            x,
            r,
            c,
            a.nrows,
            a.ncols,
            a.row_wrap,
            a.col_wrap,
            a.lm_rows,
            [&](int rr, int cc) { return __ldg(b.map + rr * a.row_stride + cc); });
    if (valid) {
        const long long o = b.base + r * a.row_stride + c;
        a.mask[o] = det ? 1 : 0;
        if (a.thr)
            a.thr[o] = t;
    }
    if (det) {
        const unsigned long long slot = atomicAdd(a.det_count, 1ull);
        if (slot < a.det_capacity)
            a.det_list[slot] = { std::uint32_t(b.m + r / a.rows_per_label),
                                 std::uint32_t(r % a.rows_per_label),
                                 std::uint32_t(c),
                                 x,
                                 t,
                                 t / alpha };
    }
    const unsigned bad = __ballot_sync(full_warp, valid && !finite);
    if (bad && (threadIdx.x & 31) == 0) // all lanes share r, hence the label
        atomicAdd(a.nonfinite + b.m + r / a.rows_per_label,
                  (unsigned long long)__popc(bad));
}

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

    const int j = threadIdx.x, c = b.c0 + j;
    const int col_class = cfar_clip_class(c, a.ncols, wc, a.col_wrap);
    for (int i = threadIdx.y; i < a.tile_rows; i += block_rows) {
        const int r = b.r0 + i;
        const bool valid = r < a.nrows && c < a.ncols;
        float x = 0.f, t = 0.f, alpha = 1.f;
        if (valid) {
            x = tile[(i + wr) * tch + j + wc];
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
            const cfar_class_entry e =
                class_entry(a, cfar_clip_class(r, a.nrows, wr, a.row_wrap), col_class);
            t = cfar_sum_threshold<V>(lead, lag, e);
            alpha = e.alpha;
        }
        finish_cell(a, b, r, c, valid, x, t, alpha);
    }
}

// ---- summed-area table --------------------------------------------------------------

//! Row pitch of the table in doubles: odd, so that a warp walking down a column hits
//! distinct banks.
__host__ __device__ __forceinline__ int sat_pitch(int tch) { return (tch + 1) | 1; }

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
                nonfinite = !cfar_finite(f);
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

    const int j = threadIdx.x, c = b.c0 + j;
    const int col_class = cfar_clip_class(c, a.ncols, wc, a.col_wrap);
    for (int i = threadIdx.y; i < a.tile_rows; i += block_rows) {
        const int r = b.r0 + i;
        const bool valid = r < a.nrows && c < a.ncols;
        float x = 0.f, t = 0.f, alpha = 1.f;
        if (valid) {
            x = __ldg(b.map + r * a.row_stride + c);
            const int ci = i + wr + 1, cj = j + wc + 1;
            const halves<double> h =
                sat_halves(sat, pitch, ci, cj, a.gr, a.tr, a.gc, a.tc);
            // Rounding can leave -1e-16 where a half is all zeros; power is >= 0.
            float fl = float(fmax(h.lead, 0.0)), fg = float(fmax(h.lag, 0.0));
            if (any_bad) {
                const halves<int> n =
                    sat_halves(bad, pitch, ci, cj, a.gr, a.tr, a.gc, a.tc);
                fl = n.lead ? INFINITY : fl;
                fg = n.lag ? INFINITY : fg;
            }
            const cfar_class_entry e =
                class_entry(a, cfar_clip_class(r, a.nrows, wr, a.row_wrap), col_class);
            t = cfar_sum_threshold<V>(fl, fg, e);
            alpha = e.alpha;
        }
        finish_cell(a, b, r, c, valid, x, t, alpha);
    }
}

// ---- ordered statistic ----------------------------------------------------------------

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

//! NMAX > 0: registers and a sorting network (N <= NMAX); NMAX == 0: radix select.
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
    // Absent cells rank above everything (+Inf); a clipped window's k' <= N' present
    // cells, so its k'-th smallest is a present cell's.
    load_tile(a, b, trh, tch, INFINITY, tile);
    const int tid = threadIdx.y * blockDim.x + threadIdx.x;
    const int ndelta = a.os_n > NMAX ? a.os_n : NMAX;
    for (int t = tid; t < ndelta; t += block_threads)
        delta[t] = t < a.os_n ? a.os_delta[t] : 0;
    __syncthreads();

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

// ---- row-vector segmented kernel (the PD window) -------------------------------------
//
// The generic kernels above spend ~500 instructions per cell (index math per element,
// predicated window loops up to 8 x 4, one thread per cell, a byte store per cell). For
// a window known at compile time and maps whose rows are whole float4s, this kernel
// does the same segmented sums with each thread owning 4 adjacent columns (one float4):
//  - phase A: each warp loads its rows of the tile, 128 columns each (coalesced
//    512-byte float4 loads, all of a warp's rows in flight at once; the column halo
//    comes from the neighbouring lanes by shuffles, lanes 0 / 31 load the one float4
//    beyond the warp), forms the row sums of its 4 columns in registers and stores the
//    full and side planes (float4 stores), keeping its cell rows' lo / hi sums;
//  - phase B: per cell row, adds the planes' rows (float4 loads) in cfar_halves'
//    order, tests 4 cells, writes the mask as one uint32 (and the thresholds as one
//    float4), and compacts detections with one atomic per warp (rare: Pfa).
// Same floats added in the same order as cfar_row_sums_of / cfar_halves (and the CPU
// twin): thresholds bit-identical to the generic segmented kernel and the CPU twin
// (kernels_test_cfar_2d test_023). H100, CA, DESIGN.md's window, 2026-11-22: PD-A /
// PD-B / PD-C 0.330 / 0.085 / 0.086 ms (generic) -> 0.086 / 0.035 / 0.034 ms.

//! Columns per thread (one float4) and per warp-wide tile.
constexpr int vec_width = 4;
constexpr int vec_tile_cols = 32 * vec_width;
//! Cell rows per block: the 2 wr halo rows of row sums cost (32 + 12) / 32 at the PD
//! window; the two planes (44 x 128 floats each, 45 KB) and 96 registers a thread
//! (4 cell rows' sums kept) let 2 blocks share an SM; capped at 80 registers (the
//! default, vec_default) 3 do.
constexpr int vec_tile_rows = 32;
//! The short tile (`rows16`, A/B only): 2 cell rows per warp, 76 registers, 3 blocks/SM;
//! measured slower on PD-A (0.091 vs 0.086 ms), equal on PD-B / PD-C.
constexpr int vec_tile_rows_short = 16;
//! Blocks per SM the launch bounds ask for: what the registers of each tile height allow
//! next to its shared memory (96 / 76 registers a thread unconstrained).
constexpr int vec_blocks_per_sm_tall = 2, vec_blocks_per_sm_short = 3;
//! Occupancy variants (A/B timing, GPURADAR_CFAR_CUDA_KERNEL): register caps from
//! asking the launch bounds for 3 or 4 blocks per SM (<= 80 / 64 registers), with the
//! shared-memory carveout at its maximum so that 3-4 tiles of 28-45 KB fit an SM.
constexpr int vec_blocks_per_sm_3 = 3, vec_blocks_per_sm_4 = 4;
//! Column reach the register halo covers: one float4 on each side.
constexpr int vec_max_wc = vec_width;

//! Row sums of one lane's 4 columns, and its 4 cells (sanitised: non-finite is +Inf).
struct vec_row {
    float lo[vec_width], hi[vec_width], full[vec_width], side[vec_width];
    float x[vec_width];
};

//! The raw float4 of columns [c, c + 4) of map row rr; zeros where rr or c is -1 (beyond
//! a clipped edge). Row and column already resolved. STREAM (the run's maps fit in L2,
//! fits_in_l2): evict-first loads, the map's last use, so that a pulse-Doppler chain
//! running beside on another stream keeps its lines in L2.
template <bool STREAM>
__device__ __forceinline__ float4
vec_fetch(const float* map, int rr, long long row_stride, int c)
{
    float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
    if (rr >= 0 && c >= 0) {
        const auto* p = reinterpret_cast<const float4*>(map + rr * row_stride + c);
        v = STREAM ? __ldcs(p) : __ldg(p);
    }
    return v;
}

/*!
 * Row sums of a lane's 4 columns from its float4 `v` and, for lanes 0 and 31, the float4
 * beyond the warp (`halo`: left of lane 0, right of lane 31). The neighbours' cells come
 * by shuffles; every lane of the warp calls it. Same additions in the same order as
 * cfar_row_sums_of.
 */
template <int GC, int TC>
__device__ __forceinline__ vec_row vec_row_sums(float4 v, float4 halo)
{
    constexpr int WC = GC + TC;
    const int lane = threadIdx.x & 31;
    const float vin[vec_width] = {
        cfar_sanitize(v.x), cfar_sanitize(v.y), cfar_sanitize(v.z), cfar_sanitize(v.w)
    };
    const float hin[vec_width] = { halo.x, halo.y, halo.z, halo.w };
    // xs[0..3]: the float4 left of this lane's, xs[4..7] its own, xs[8..11] the right.
    float xs[3 * vec_width];
#pragma unroll
    for (int k = 0; k < vec_width; ++k) {
        xs[vec_width + k] = vin[k];
        xs[k] = 0.f;
        xs[2 * vec_width + k] = 0.f;
        if (k >= vec_width - WC) {
            const float l = __shfl_up_sync(full_warp, vin[k], 1);
            xs[k] = lane == 0 ? cfar_sanitize(hin[k]) : l;
        }
        if (k < WC) {
            const float r = __shfl_down_sync(full_warp, vin[k], 1);
            xs[2 * vec_width + k] = lane == 31 ? cfar_sanitize(hin[k]) : r;
        }
    }
    vec_row s;
#pragma unroll
    for (int j = 0; j < vec_width; ++j) {
        // cfar_row_sums_of: x(u) = xs[4 + j - WC + u].
        const float* x = xs + (vec_width + j - WC);
        float lo = 0.f, g = 0.f, hi = 0.f;
#pragma unroll
        for (int u = 0; u < TC; ++u)
            lo += x[u];
#pragma unroll
        for (int u = TC; u <= TC + 2 * GC; ++u)
            g += x[u];
#pragma unroll
        for (int u = TC + 2 * GC + 1; u <= 2 * (TC + GC); ++u)
            hi += x[u];
        s.lo[j] = lo;
        s.hi[j] = hi;
        s.full[j] = (lo + g) + hi;
        s.side[j] = lo + hi;
        s.x[j] = vin[j];
    }
    return s;
}

__device__ __forceinline__ float4 f4(const float (&v)[vec_width])
{
    return make_float4(v[0], v[1], v[2], v[3]);
}

/*!
 * Warp w owns the cell rows w, w + 8, w + 16, w + 24 of the tile (and a share of the
 * 2 wr halo rows): in phase A it loads all of them at once (up to 6 float4 per lane in
 * flight), stores their full and side row sums, and keeps its cell rows' lo / hi sums
 * and cells in registers for phase B, which reads the other rows' sums from shared
 * memory.
 */
template <cfar_variant V, int GR, int TR, int GC, int TC, int ROWS, int MINB, bool STREAM>
__global__ void __launch_bounds__(block_threads, MINB)
    cfar_vec_kernel(const kernel_args a)
{
    constexpr int WR = GR + TR, WC = GC + TC;
    constexpr int trh = ROWS + 2 * WR;
    constexpr int nwarps = block_threads / 32;
    constexpr int cell_rows = ROWS / nwarps;                  // per warp
    constexpr int halo_rows = (2 * WR + nwarps - 1) / nwarps; // per warp, at most
    static_assert(WC <= vec_max_wc, "the register halo covers one float4 per side");
    static_assert(ROWS % nwarps == 0, "whole cell rows per warp");
    __shared__ float4 s_full[trh * 32];
    __shared__ float4 s_side[trh * 32];

    begin_cfar_kernel(a);
    const int lane = threadIdx.x & 31;
    const int warp = (threadIdx.y * blockDim.x + threadIdx.x) >> 5;
    const int m = a.map0 + blockIdx.z;
    const long long base = map_offset(a, m);
    const float* map = a.in + base;
    const int r0 = (a.tile_row0 + blockIdx.y) * ROWS;
    const int c0 = blockIdx.x * vec_tile_cols;
    const int c = c0 + vec_width * lane;
    // Columns resolved once: this lane's float4 and the one beyond the warp.
    const int c_own = resolve(c, a.ncols, a.col_wrap);
    const bool edge_lane = WC > 0 && (lane == 0 || lane == 31);
    const int c_halo = edge_lane
                           ? resolve(lane == 0 ? c0 - vec_width : c0 + vec_tile_cols,
                                     a.ncols,
                                     a.col_wrap)
                           : -1;

    // Phase A: every load first, then the sums.
    float4 cv[cell_rows], chv[cell_rows], hv[halo_rows], hhv[halo_rows];
#pragma unroll
    for (int k = 0; k < cell_rows; ++k) {
        const int rr = resolve(r0 + warp + nwarps * k, a.nrows, a.row_wrap);
        cv[k] = vec_fetch<STREAM>(map, rr, a.row_stride, c_own);
        chv[k] = vec_fetch<STREAM>(map, rr, a.row_stride, c_halo);
    }
#pragma unroll
    for (int h = 0; h < halo_rows; ++h) {
        const int hidx = warp + nwarps * h; // halo row: < WR above the tile, else below
        const int t = hidx < WR ? hidx : hidx + ROWS;
        const int rr = hidx < 2 * WR ? resolve(r0 - WR + t, a.nrows, a.row_wrap) : -1;
        hv[h] = vec_fetch<STREAM>(map, rr, a.row_stride, c_own);
        hhv[h] = vec_fetch<STREAM>(map, rr, a.row_stride, c_halo);
    }
    vec_row own[cell_rows];
#pragma unroll
    for (int k = 0; k < cell_rows; ++k) {
        own[k] = vec_row_sums<GC, TC>(cv[k], chv[k]);
        const int t = WR + warp + nwarps * k;
        s_full[t * 32 + lane] = f4(own[k].full);
        s_side[t * 32 + lane] = f4(own[k].side);
    }
#pragma unroll
    for (int h = 0; h < halo_rows; ++h) {
        const int hidx = warp + nwarps * h;
        if (hidx < 2 * WR) { // uniform over the warp
            const vec_row s = vec_row_sums<GC, TC>(hv[h], hhv[h]);
            const int t = hidx < WR ? hidx : hidx + ROWS;
            s_full[t * 32 + lane] = f4(s.full);
            s_side[t * 32 + lane] = f4(s.side);
        }
    }
    __syncthreads();

    // Phase B: this warp's cell rows, 4 cells per lane.
    const bool col_valid = c < a.ncols;
    int col_class[vec_width];
    bool interior_cols = true;
#pragma unroll
    for (int j = 0; j < vec_width; ++j) {
        // Columns past the map (a part-full last tile) take the interior class: they
        // are never tested, and their clip class would lie outside the table.
        col_class[j] = col_valid ? cfar_clip_class(c + j, a.ncols, WC, a.col_wrap) : WC;
        interior_cols = interior_cols && col_class[j] == WC;
    }
#pragma unroll
    for (int k = 0; k < cell_rows; ++k) {
        const int i = warp + nwarps * k;
        const int r = r0 + i;
        if (r >= a.nrows) // uniform over the warp
            break;
        const float4* pf = s_full + (i + WR) * 32 + lane;
        const float4* ps = s_side + (i + WR) * 32 + lane;
        // cfar_halves: lead = rows -wr .. -gr-1 (full), -gr .. -1 (side), then lo0;
        // lag = hi0, rows 1 .. gr (side), gr+1 .. wr (full).
        float lead[vec_width] = { 0.f, 0.f, 0.f, 0.f };
#pragma unroll
        for (int d = WR; d >= 1; --d) {
            const float4 q = d > GR ? pf[-d * 32] : ps[-d * 32];
            lead[0] += q.x;
            lead[1] += q.y;
            lead[2] += q.z;
            lead[3] += q.w;
        }
        float lag[vec_width];
#pragma unroll
        for (int j = 0; j < vec_width; ++j) {
            lead[j] += own[k].lo[j];
            lag[j] = own[k].hi[j];
        }
#pragma unroll
        for (int d = 1; d <= WR; ++d) {
            const float4 q = d > GR ? pf[d * 32] : ps[d * 32];
            lag[0] += q.x;
            lag[1] += q.y;
            lag[2] += q.z;
            lag[3] += q.w;
        }
        const float(&x)[vec_width] = own[k].x;
        const int row_class = cfar_clip_class(r, a.nrows, WR, a.row_wrap);
        float t[vec_width], alpha[vec_width];
        if (row_class == WR && interior_cols) {
#pragma unroll
            for (int j = 0; j < vec_width; ++j) {
                t[j] = cfar_sum_threshold<V>(lead[j], lag[j], a.interior);
                alpha[j] = a.interior.alpha;
            }
        } else {
#pragma unroll
            for (int j = 0; j < vec_width; ++j) {
                const cfar_class_entry e =
                    a.classes[row_class * (2 * WC + 1) + col_class[j]];
                t[j] = cfar_sum_threshold<V>(lead[j], lag[j], e);
                alpha[j] = e.alpha;
            }
        }
        unsigned det_bits = 0, bad = 0;
#pragma unroll
        for (int j = 0; j < vec_width; ++j) {
            const bool finite = col_valid && cfar_finite(x[j]);
            bad += col_valid && !finite;
            if (finite && x[j] > t[j])
                det_bits |= 1u << j;
        }
        if (col_valid) {
            const long long o = base + r * a.row_stride + c;
            if (a.thr)
                *reinterpret_cast<float4*>(a.thr + o) = f4(t);
        }
        if (__any_sync(full_warp, (det_bits | bad) != 0)) { // rare: Pfa, bad input
            if (det_bits && a.local_max) {
#pragma unroll
                for (int j = 0; j < vec_width; ++j)
                    if ((det_bits >> j) & 1u)
                        if (!cfar_is_local_max(x[j],
                                               r,
                                               c + j,
                                               a.nrows,
                                               a.ncols,
                                               a.row_wrap,
                                               a.col_wrap,
                                               a.lm_rows,
                                               [&](int rr, int cc) {
                                                   return __ldg(map + rr * a.row_stride +
                                                                cc);
                                               }))
                            det_bits &= ~(1u << j);
            }
            // Detections: one atomic per warp and row, slots handed out by a warp scan.
            const unsigned n = __popc(det_bits);
            unsigned incl = n;
#pragma unroll
            for (int o = 1; o < 32; o <<= 1) {
                const unsigned u = __shfl_up_sync(full_warp, incl, o);
                if (lane >= o)
                    incl += u;
            }
            const unsigned total = __shfl_sync(full_warp, incl, 31);
            const std::uint32_t label = std::uint32_t(m + r / a.rows_per_label);
            if (total != 0) {
                unsigned long long first = 0;
                if (lane == 31)
                    first = atomicAdd(a.det_count, (unsigned long long)total);
                first = __shfl_sync(full_warp, first, 31);
                unsigned long long slot = first + (incl - n);
                const std::uint32_t row = std::uint32_t(r % a.rows_per_label);
#pragma unroll
                for (int j = 0; j < vec_width; ++j)
                    if ((det_bits >> j) & 1u) {
                        if (slot < a.det_capacity)
                            a.det_list[slot] = { label, row,  std::uint32_t(c + j),
                                                 x[j],  t[j], t[j] / alpha[j] };
                        ++slot;
                    }
            }
            // Butterfly sum (__reduce_add_sync needs sm_80; the build targets sm_75 too).
            unsigned nbad = bad;
#pragma unroll
            for (int o = 16; o > 0; o >>= 1)
                nbad += __shfl_xor_sync(full_warp, nbad, o);
            if (nbad && lane == 0)
                atomicAdd(a.nonfinite + label, (unsigned long long)nbad);
        }
        if (col_valid) {
            const long long o = base + r * a.row_stride + c;
            *reinterpret_cast<std::uint32_t*>(a.mask + o) =
                (det_bits & 1u) | ((det_bits & 2u) << 7) | ((det_bits & 4u) << 14) |
                ((det_bits & 8u) << 21);
        }
    }
}

// ---- results back to the host --------------------------------------------------------

//! Threads of cfar_publish: one block (the counters and a short list).
constexpr int publish_threads = 256;

/*!
 * After the CFAR kernel (a dependent launch, so it starts as that kernel ends): the
 * counters and the first min(found, head) list entries, written straight into the mapped
 * pinned host buffer that collect() reads. Replaces a device -> host copy of the whole
 * list head: no copy-engine hand-over in the stream, and only the entries found cross
 * PCIe.
 */
__global__ void __launch_bounds__(publish_threads)
    cfar_publish(const unsigned long long* __restrict__ results,
                 unsigned long long* __restrict__ host,
                 int counter_words,
                 const device_detection* __restrict__ list,
                 device_detection* __restrict__ host_list,
                 unsigned long long head)
{
    wait_for_predecessor();
    for (int i = threadIdx.x; i < counter_words; i += blockDim.x)
        host[i] = results[i];
    const unsigned long long n = min(results[0], head);
    constexpr int words = sizeof(device_detection) / sizeof(std::uint32_t);
    const auto* src = reinterpret_cast<const std::uint32_t*>(list);
    auto* dst = reinterpret_cast<std::uint32_t*>(host_list);
    for (unsigned long long i = threadIdx.x; i < n * words; i += blockDim.x)
        dst[i] = src[i];
}

// ---- engine ---------------------------------------------------------------------------

using kernel_fn = void (*)(kernel_args);

template <int WR, int WC>
kernel_fn segmented_kernel(cfar_variant v)
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

//! DESIGN.md's CFAR window (guard/train range 1/5, Doppler 1/1): the one the PD chain
//! runs, compiled exactly so that its sums unroll without predicates.
constexpr int design_gr = 1, design_tr = 5, design_gc = 1, design_tc = 1;

//! Which CUDA kernel runs the segmented sums (diagnostics and A/B timing; the default is
//! the fastest measured, docs/PERFORMANCE.md): environment variable
//! GPURADAR_CFAR_CUDA_KERNEL = "generic" (the per-cell tile kernel, as for every other
//! window), "rows16" (the row-vector kernel with 16-row tiles, 3 blocks/SM), "rows32"
//! (32-row tiles, 2 blocks/SM), "rows32b3" / "rows32b4" / "rows16b4" (register-capped
//! for 3 / 4 / 4 blocks per SM, maximum shared-memory carveout); unset or anything else:
//! the default below.
enum class vec_choice { generic, rows16, rows32, rows32b3, rows32b4, rows16b4 };

//! The default row-vector kernel: 32-row tiles capped at 80 registers (no spills), 3
//! blocks per SM. H100, CA, 2026-11-22 (docs/PERFORMANCE.md): PD-A / PD-B / PD-C
//! 0.087 / 0.032 / 0.032 ms (rows32) -> 0.078 / 0.027 / 0.024 ms; rows32b4 (64 registers,
//! 68 B spilled) 0.076 / 0.027 / 0.026, rows16b4 and rows16 no faster than rows32.
constexpr vec_choice vec_default = vec_choice::rows32b3;

vec_choice vec_choice_from_env()
{
    const char* e = std::getenv("GPURADAR_CFAR_CUDA_KERNEL");
    const std::string s = e ? e : "";
    if (s == "generic")
        return vec_choice::generic;
    if (s == "rows16")
        return vec_choice::rows16;
    if (s == "rows32")
        return vec_choice::rows32;
    if (s == "rows32b3")
        return vec_choice::rows32b3;
    if (s == "rows32b4")
        return vec_choice::rows32b4;
    if (s == "rows16b4")
        return vec_choice::rows16b4;
    return vec_default;
}

//! Tile height of the row-vector kernel for a choice.
int vec_rows_of(vec_choice which)
{
    return which == vec_choice::rows16 || which == vec_choice::rows16b4
               ? vec_tile_rows_short
               : vec_tile_rows;
}

//! Whether a choice asks for the maximum shared-memory carveout (the register-capped
//! variants: their 3-4 tiles per SM need 87-176 KB of it).
bool vec_max_carveout(vec_choice which)
{
    return which == vec_choice::rows32b3 || which == vec_choice::rows32b4 ||
           which == vec_choice::rows16b4;
}

//! stream: evict-first loads (vec_fetch), compiled for vec_default only; the A/B
//! occupancy variants keep plain loads.
template <cfar_variant V>
kernel_fn vec_kernel_of(vec_choice which, bool stream)
{
    static_assert(vec_default == vec_choice::rows32b3, "stream loads for the default");
    constexpr int gr = design_gr, tr = design_tr, gc = design_gc, tc = design_tc;
    constexpr int tall = vec_tile_rows, shrt = vec_tile_rows_short;
    switch (which) {
    case vec_choice::rows16:
        return cfar_vec_kernel<V, gr, tr, gc, tc, shrt, vec_blocks_per_sm_short, false>;
    case vec_choice::rows32b3:
        return stream
                   ? cfar_vec_kernel<V, gr, tr, gc, tc, tall, vec_blocks_per_sm_3, true>
                   : cfar_vec_kernel<V, gr, tr, gc, tc, tall, vec_blocks_per_sm_3, false>;
    case vec_choice::rows32b4:
        return cfar_vec_kernel<V, gr, tr, gc, tc, tall, vec_blocks_per_sm_4, false>;
    case vec_choice::rows16b4:
        return cfar_vec_kernel<V, gr, tr, gc, tc, shrt, vec_blocks_per_sm_4, false>;
    default:
        return cfar_vec_kernel<V, gr, tr, gc, tc, tall, vec_blocks_per_sm_tall, false>;
    }
}

//! The row-vector kernel for this window and variant, or nullptr where none is compiled
//! (other windows and os run the generic kernels).
kernel_fn vec_kernel(cfar_variant v, int gr, int tr, int gc, int tc, bool stream)
{
    const vec_choice which = vec_choice_from_env();
    if (which == vec_choice::generic || gr != design_gr || tr != design_tr ||
        gc != design_gc || tc != design_tc)
        return nullptr;
    switch (v) {
    case cfar_variant::ca:
        return vec_kernel_of<cfar_variant::ca>(which, stream);
    case cfar_variant::go:
        return vec_kernel_of<cfar_variant::go>(which, stream);
    case cfar_variant::so:
        return vec_kernel_of<cfar_variant::so>(which, stream);
    default:
        return nullptr;
    }
}

kernel_fn sat_kernel(cfar_variant v)
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

class cfar_cuda final : public cfar_engine
{
public:
    cfar_cuda(const cfar_plan& plan, stream_ref stream)
        : d_plan(plan),
          d_stream(native(stream)),
          d_classes(plan.classes.size() * sizeof(cfar_class_entry)),
          d_results{ device_memory(results_bytes(plan.max_maps, plan.max_detections)),
                     device_memory(results_bytes(plan.max_maps, plan.max_detections)) },
          d_results_host(d_results[0].size())
    {
        const char* who = plan.stage;
        choose_kernel();
        if (plan.variant == cfar_variant::os) {
            const int tch = tile_cols + 2 * plan.wc();
            std::vector<int> delta;
            for (const auto& [dr, dc] : plan.training_offsets())
                delta.push_back(dr * tch + dc);
            d_os_delta = device_memory(delta.size() * sizeof(int));
            copy_async(d_os_delta.get(),
                       delta.data(),
                       d_os_delta.size(),
                       copy_kind::host_to_device,
                       stream,
                       who);
        }
        copy_async(d_classes.get(),
                   plan.classes.data(),
                   d_classes.size(),
                   copy_kind::host_to_device,
                   stream,
                   who);
        void* mapped = nullptr;
        GPURADAR_CUDA_CHECK(who,
                            cudaHostGetDevicePointer(&mapped, d_results_host.get(), 0));
        d_results_host_device = static_cast<unsigned long long*>(mapped);
        // The first run's counters start at zero; every run zeroes the other area's.
        for (const auto& area : d_results)
            GPURADAR_CUDA_CHECK(
                who,
                cudaMemsetAsync(area.get(), 0, counters_bytes(plan.max_maps), d_stream));
        // The tables above are copied from host vectors that die with this constructor.
        GPURADAR_CUDA_CHECK(who, cudaStreamSynchronize(d_stream));
    }

    void
    run(const cfar_geometry& g, const float* in, std::uint8_t* mask, float* thr) override
    {
        const char* who = d_plan.stage;
        d_last_maps = g.nmaps;
        if (g.nmaps == 0)
            return;
        // Results of this run, one block of memory: [found][non-finite per map][list],
        // in the area this run's kernel counts into; the kernel zeroes the other area's
        // counters for the next run (begin_cfar_kernel), so no memset runs here.
        // Measured and rejected (H100, 2026-11-22, docs/PERFORMANCE.md): zeroing the
        // counters and writing them to mapped host memory from the last block of the
        // kernel (a grid-wide ticket) instead of a memset and the copy below. Every
        // block then waits for a fence and the ticket's atomic before it retires; at 2
        // blocks per SM that cost PD-A +8 us and gained PD-B/PD-C 0-4 us.
        d_area ^= 1u;
        device_memory& results = d_results[d_area];

        kernel_args a{};
        a.in = in;
        a.mask = mask;
        a.thr = thr;
        a.ncols = int(g.ncols);
        a.channels = int(g.channels);
        a.group_stride = (long long)g.group_stride;
        a.row_stride = (long long)g.row_stride;
        a.tile_rows = d_tile_rows;
        a.gr = d_plan.guard_rows;
        a.tr = d_plan.train_rows;
        a.gc = d_plan.guard_cols;
        a.tc = d_plan.train_cols;
        a.row_wrap = d_plan.row_wrap();
        a.col_wrap = d_plan.col_wrap();
        a.local_max = d_plan.local_max;
        a.lm_rows = d_plan.local_max_rows;
        a.classes = d_classes.as<cfar_class_entry>();
        a.interior = d_plan.interior();
        a.os_delta = d_os_delta.as<int>();
        a.os_n = d_plan.n_full;
        a.det_count = results.as<unsigned long long>();
        a.nonfinite = a.det_count + 1;
        a.det_list = list_of(results.as<char>(), g.nmaps);
        a.det_capacity = d_plan.max_detections;

        // Maps of one row that no window or neighbourhood crosses (cfar_1d) and that lie
        // back to back are launched as the rows of one map, so that the tiles are full.
        std::size_t nmaps = g.nmaps;
        const bool one_row = g.nrows == 1 && d_plan.wr() == 0 &&
                             (!d_plan.local_max || d_plan.local_max_rows == 0) &&
                             g.channels == 1 && g.group_stride == g.ncols;
        if (one_row) {
            a.nrows = int(g.nmaps);
            a.row_stride = (long long)g.ncols;
            a.rows_per_label = 1;
            nmaps = 1;
        } else {
            a.nrows = int(g.nrows);
            a.rows_per_label = int(g.nrows);
        }
        // The row-vector kernel where this run's layout allows it: whole float4 rows
        // and maps, 16-byte aligned input and thresholds, 4-byte aligned mask.
        const bool vec = d_vec_kernel[0] != nullptr && g.ncols % vec_width == 0 &&
                         std::size_t(a.row_stride) % vec_width == 0 &&
                         g.group_stride % vec_width == 0 && aligned(in, 16) &&
                         aligned(mask, 4) && (thr == nullptr || aligned(thr, 16));
        const bool stream = g.nmaps * g.nrows * g.ncols * sizeof(float) <= d_l2_bytes;
        const kernel_fn kernel = vec ? d_vec_kernel[stream] : d_kernel;
        const int tile_h = vec ? d_vec_rows : d_tile_rows;
        const int tile_w = vec ? vec_tile_cols : tile_cols;
        const std::size_t smem = vec ? 0 : d_smem_bytes;
        a.tile_rows = tile_h;
        const unsigned col_tiles = unsigned((g.ncols + tile_w - 1) / tile_w);
        const std::size_t row_tiles = (std::size_t(a.nrows) + tile_h - 1) / tile_h;
        for (std::size_t m0 = 0; m0 < nmaps; m0 += max_grid_yz) {
            for (std::size_t y0 = 0; y0 < row_tiles; y0 += max_grid_yz) {
                a.map0 = int(m0);
                a.tile_row0 = int(y0);
                const dim3 grid(
                    col_tiles,
                    unsigned(std::min<std::size_t>(max_grid_yz, row_tiles - y0)),
                    unsigned(std::min<std::size_t>(max_grid_yz, nmaps - m0)));
                const bool first = m0 == 0 && y0 == 0;
                a.reset =
                    first ? d_results[d_area ^ 1u].as<unsigned long long>() : nullptr;
                a.reset_n = int(counter_words(d_plan.max_maps));
                launch_dependent(d_dependent,
                                 kernel,
                                 grid,
                                 dim3(tile_cols, block_rows),
                                 smem,
                                 d_stream,
                                 who,
                                 a);
            }
        }
        // Back to the host: the counters and the head of the list, written by a small
        // dependent kernel into the mapped pinned buffer
        // (GPURADAR_CFAR_CUDA_PUBLISH=copy: one device -> host copy of the counters and
        // the whole head instead, A/B).
        const std::size_t head = std::min(d_list_head, d_plan.max_detections);
        if (d_publish_copy) {
            copy_async(d_results_host.get(),
                       results.get(),
                       results_bytes(g.nmaps, head),
                       copy_kind::device_to_host,
                       stream_ref(d_stream),
                       who);
        } else {
            launch_dependent(
                d_dependent,
                cfar_publish,
                dim3(1),
                dim3(publish_threads),
                0,
                d_stream,
                who,
                results.as<unsigned long long>(),
                d_results_host_device,
                int(counter_words(g.nmaps)),
                list_of(results.as<char>(), g.nmaps),
                list_of(reinterpret_cast<char*>(d_results_host_device), g.nmaps),
                head);
        }
    }

    cfar_report collect() override
    {
        const char* who = d_plan.stage;
        cfar_report r;
        if (d_last_maps == 0)
            return r;
        // One wait for the run and its copy back; a second only for a list longer than
        // the head that copy carried.
        GPURADAR_CUDA_CHECK(who, cudaStreamSynchronize(d_stream));
        const auto* counters = d_results_host.as<unsigned long long>();
        r.found = counters[0];
        r.nonfinite.assign(counters + 1, counters + 1 + d_last_maps);
        const std::size_t n = std::min<std::uint64_t>(r.found, d_plan.max_detections);
        const std::size_t head = std::min(d_list_head, d_plan.max_detections);
        device_detection* list = list_of(d_results_host.as<char>(), d_last_maps);
        if (n > head) {
            copy_async(list + head,
                       list_of(d_results[d_area].as<char>(), d_last_maps) + head,
                       (n - head) * sizeof(device_detection),
                       copy_kind::device_to_host,
                       stream_ref(d_stream),
                       who);
            GPURADAR_CUDA_CHECK(who, cudaStreamSynchronize(d_stream));
        }
        r.detections.reserve(n);
        for (std::size_t i = 0; i < n; ++i)
            r.detections.push_back({ list[i].map,
                                     list[i].row,
                                     list[i].col,
                                     list[i].power,
                                     list[i].threshold,
                                     list[i].noise });
        cfar_sort_detections(r.detections);
        return r;
    }

    cfar_estimator estimator() const override { return d_estimator; }

private:
    //! [found][non-finite per map]
    static std::size_t counter_words(std::size_t maps) { return 1 + maps; }
    static std::size_t counters_bytes(std::size_t maps)
    {
        return counter_words(maps) * sizeof(unsigned long long);
    }
    static std::size_t results_bytes(std::size_t maps, std::size_t detections)
    {
        return counters_bytes(maps) + detections * sizeof(device_detection);
    }
    //! The list follows the counters of this run's maps (8-byte aligned).
    static device_detection* list_of(char* results, std::size_t maps)
    {
        return reinterpret_cast<device_detection*>(results + counters_bytes(maps));
    }

    std::size_t smem_bytes(cfar_estimator estimator, int tile_rows) const
    {
        const std::size_t trh = tile_rows + 2 * d_plan.wr();
        const std::size_t tch = tile_cols + 2 * d_plan.wc();
        if (d_plan.variant == cfar_variant::os)
            return (trh * tch + std::max(d_plan.n_full, os_register_max)) * sizeof(float);
        if (estimator == cfar_estimator::summed_area)
            return (trh + 1) * sat_pitch(int(tch)) * (sizeof(double) + sizeof(int));
        return (trh * tch + 2 * (trh + tile_rows) * tile_cols) * sizeof(float);
    }

    //! Largest tile height (a power of two) whose shared memory fits; 0 if none does.
    int fitting_tile_rows(cfar_estimator estimator, std::size_t optin) const
    {
        for (int rows = max_tile_rows; rows >= 1; rows /= 2)
            if (smem_bytes(estimator, rows) <= optin)
                return rows;
        return 0;
    }

    void choose_kernel()
    {
        const char* who = d_plan.stage;
        int device = 0, optin = 0;
        GPURADAR_CUDA_CHECK(who, cudaGetDevice(&device));
        GPURADAR_CUDA_CHECK(who,
                            cudaDeviceGetAttribute(
                                &optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
        d_estimator = d_plan.resolved;
        d_tile_rows = fitting_tile_rows(d_estimator, std::size_t(optin));
        // A tall window may not fit the segmented tile (two row-sum planes of its halo)
        // yet fit the summed-area one; automatic then takes the one that fits.
        const auto other = d_estimator == cfar_estimator::segmented
                               ? cfar_estimator::summed_area
                               : cfar_estimator::segmented;
        if (d_tile_rows == 0 && d_plan.estimator == cfar_estimator::automatic &&
            d_plan.variant != cfar_variant::os) {
            d_estimator = other;
            d_tile_rows = fitting_tile_rows(d_estimator, std::size_t(optin));
        }
        if (d_tile_rows == 0)
            throw_invalid(who,
                          "the window",
                          "small enough for the CUDA backend's shared "
                          "memory (" +
                              std::to_string(optin) +
                              " bytes per block; use "
                              "backend cpu)",
                          std::to_string(smem_bytes(d_estimator, 1)) + " bytes needed");
        d_smem_bytes = smem_bytes(d_estimator, d_tile_rows);
        if (d_plan.variant == cfar_variant::os) {
            d_kernel = d_plan.n_full <= 32   ? cfar_os_kernel<32>
                       : d_plan.n_full <= 64 ? cfar_os_kernel<os_register_max>
                                             : cfar_os_kernel<0>;
        } else {
            const bool unrolled =
                d_plan.wr() <= unrolled_max_wr && d_plan.wc() <= unrolled_max_wc;
            d_kernel =
                d_estimator == cfar_estimator::summed_area ? sat_kernel(d_plan.variant)
                : unrolled
                    ? segmented_kernel<unrolled_max_wr, unrolled_max_wc>(d_plan.variant)
                    : segmented_kernel<0, 0>(d_plan.variant);
        }
        if (d_estimator == cfar_estimator::segmented &&
            d_plan.variant != cfar_variant::os)
            for (bool stream : { false, true })
                d_vec_kernel[stream] = vec_kernel(d_plan.variant,
                                                  d_plan.guard_rows,
                                                  d_plan.train_rows,
                                                  d_plan.guard_cols,
                                                  d_plan.train_cols,
                                                  stream);
        d_vec_rows = vec_rows_of(vec_choice_from_env());
        if (d_vec_kernel[0] && vec_max_carveout(vec_choice_from_env()))
            GPURADAR_CUDA_CHECK(
                who,
                cudaFuncSetAttribute(d_vec_kernel[0],
                                     cudaFuncAttributePreferredSharedMemoryCarveout,
                                     int(cudaSharedmemCarveoutMaxShared)));
        GPURADAR_CUDA_CHECK(
            who,
            cudaFuncSetAttribute(d_kernel,
                                 cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 int(d_smem_bytes)));
    }

    static bool aligned(const void* p, std::size_t bytes)
    {
        return reinterpret_cast<std::uintptr_t>(p) % bytes == 0;
    }

    const cfar_plan d_plan;
    const cudaStream_t d_stream;
    device_memory d_classes;
    device_memory d_os_delta;
    //! Two areas used by turns (d_area: the last run's), each [0] detections found,
    //! [1 + map] non-finite cells, then the detection list.
    device_memory d_results[2];
    unsigned d_area = 1;          // the first run takes area 0
    pinned_memory d_results_host; // its copy: counters and the list's head after each run
    const bool d_dependent = dependent_launch_supported(d_plan.stage); // sm_90+
    kernel_fn d_kernel = nullptr;
    //! The row-vector kernel (segmented, DESIGN.md's window), or nullptr: [1] with
    //! evict-first loads, for runs whose maps fit in L2 (d_l2_bytes, see fits_in_l2).
    kernel_fn d_vec_kernel[2] = { nullptr, nullptr };
    const std::size_t d_l2_bytes = l2_cache_bytes(d_plan.stage);
    int d_vec_rows = vec_tile_rows; //!< its tile height
    cfar_estimator d_estimator = cfar_estimator::segmented;
    int d_tile_rows = max_tile_rows;
    std::size_t d_smem_bytes = 0;
    std::size_t d_last_maps = 0;
    const std::size_t d_list_head = list_head_from_env(); //!< list entries copied per run
    //! d_results_host as the device writes it (mapped pinned memory).
    unsigned long long* d_results_host_device = nullptr;
    //! GPURADAR_CFAR_CUDA_PUBLISH=copy: the copy engine instead of cfar_publish (A/B).
    const bool d_publish_copy = [] {
        const char* e = std::getenv("GPURADAR_CFAR_CUDA_PUBLISH");
        return e != nullptr && std::strcmp(e, "copy") == 0;
    }();
};

} // namespace

std::unique_ptr<cfar_engine> make_cfar_engine_cuda(const cfar_plan& plan,
                                                   stream_ref stream)
{
    return std::make_unique<cfar_cuda>(plan, stream);
}

} // namespace gpuradar::kernels::detail
