/*
 * CUDA CFAR internals shared by the host engine (cfar_cuda.cu) and its kernel families,
 * one file each (cfar_segmented.cu, cfar_summed_area.cu, cfar_ordered_statistic.cu,
 * cfar_row_vector.cu): the tile geometry, the kernel arguments, the device steps every
 * kernel shares, and each family's kernel selector.
 */
#ifndef INCLUDED_GPURADAR_KERNELS_CFAR_CUDA_KERNELS_CUH
#define INCLUDED_GPURADAR_KERNELS_CFAR_CUDA_KERNELS_CUH

#include "common/cuda/dependent_launch.cuh"
#include "detection/cfar_plan.h"
#include <cuda_runtime.h>
#include <gpuradar/kernels/detection/cfar_2d.h>
#include <cstdint>

namespace gpuradar::kernels::detail::cfar_cuda_kernels {

//! One warp across the columns (Doppler): each tile row is a coalesced 128-byte load.
constexpr int tile_cols = 32;
//! 8 warps per block: enough to hide load latency, few enough that several blocks fit.
constexpr int block_rows = 8;
constexpr int block_threads = tile_cols * block_rows;
//! Windows of up to this many training cells sort in registers (os).
constexpr int os_register_max = 64;
//! Tile loads in flight per thread before they are stored (memory-level parallelism).
constexpr int load_batch = 4;
constexpr unsigned full_warp = 0xffffffffu;

struct device_detection {
    std::uint32_t map, row, col;
    float power, threshold, noise;
    float neighbours[4]; //!< cfar_neighbour_powers
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

//! A load batch of load_tile into the tile, sanitised: v[q] is element idx + q
//! block_threads (those at or past n are not stored).
__device__ __forceinline__ void
store_batch(const float (&v)[load_batch], int idx, int n, float* tile)
{
#pragma unroll
    for (int q = 0; q < load_batch; ++q)
        if (idx + q * block_threads < n)
            tile[idx + q * block_threads] = cfar_sanitize(v[q]);
}

/*!
 * The tile and its halo, trh x tch, sanitised; cells beyond a clipped edge hold
 * `absent`. Flat over the tile so that every lane works; the (row, column) of each
 * thread's next element advances by a constant step (no division per element), and
 * load_batch loads are issued before any is stored.
 *
 * Two ways to place a cell: when the tile's rows, halo included, lie inside the map and
 * its columns within one map width of it (nearly every tile: maps are taller than a
 * tile, and a window's columns wrap at most once), a row pointer that advances with the
 * element and a column folded by one compare; elsewhere `resolve` on both indices. The
 * row pointer path takes about a third of the instructions (the 64-bit address and the
 * remainder's branches go).
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
    const int top = b.r0 - wr, left = b.c0 - wc;
    int i = tid / tch, j = tid - (tid / tch) * tch;
    if (top >= 0 && top + trh <= a.nrows && left >= -a.ncols &&
        left + tch <= 2 * a.ncols) {
        const float* row = b.map + (top + i) * a.row_stride;
        const long long row_step = di * a.row_stride;
        for (int idx = tid; idx < n; idx += load_batch * block_threads) {
            float v[load_batch];
#pragma unroll
            for (int q = 0; q < load_batch; ++q) {
                int c = left + j;
                const bool outside = c < 0 || c >= a.ncols;
                c = c < 0 ? c + a.ncols : c >= a.ncols ? c - a.ncols : c;
                v[q] = idx + q * block_threads < n && (!outside || a.col_wrap)
                           ? __ldg(row + c)
                           : absent;
                row += row_step;
                j += dj;
                if (j >= tch) {
                    j -= tch;
                    row += a.row_stride;
                }
            }
            store_batch(v, idx, n, tile);
        }
        return;
    }
    for (int idx = tid; idx < n; idx += load_batch * block_threads) {
        float v[load_batch];
#pragma unroll
        for (int q = 0; q < load_batch; ++q) {
            v[q] = absent;
            if (idx + q * block_threads < n) {
                const int r = resolve(top + i, a.nrows, a.row_wrap);
                const int c = resolve(left + j, a.ncols, a.col_wrap);
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
        store_batch(v, idx, n, tile);
    }
}

//! A detection's neighbours (cfar_neighbour_powers) read from the map in global memory.
__device__ __forceinline__ void fetch_neighbours(
    const kernel_args& a, const float* map, int r, int c, device_detection& d)
{
    cfar_neighbour_powers(
        r,
        c,
        a.nrows,
        a.ncols,
        a.row_wrap,
        a.col_wrap,
        a.lm_rows,
        [&](int rr, int cc) { return __ldg(map + rr * a.row_stride + cc); },
        d.neighbours);
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
        if (slot < a.det_capacity) {
            device_detection d{ std::uint32_t(b.m + r / a.rows_per_label),
                                std::uint32_t(r % a.rows_per_label),
                                std::uint32_t(c),
                                x,
                                t,
                                t / alpha };
            fetch_neighbours(a, b.map, r, c, d);
            a.det_list[slot] = d;
        }
    }
    const unsigned bad = __ballot_sync(full_warp, valid && !finite);
    if (bad && (threadIdx.x & 31) == 0) // all lanes share r, hence the label
        atomicAdd(a.nonfinite + b.m + r / a.rows_per_label,
                  (unsigned long long)__popc(bad));
}


//! The cell under test and its threshold, as a tile kernel's estimator gives them.
struct cell_test {
    float x, t;
};

/*!
 * The cell loop of the tile kernels: this thread's column of the tile, one cell row
 * after another; `test(i, j, r, c, e)` gives the cell (tile row i, column j; map row r,
 * column c; clip class entry e) and its threshold, finish_cell does the rest. Cells
 * outside the map still take part in finish_cell's warp-wide steps.
 */
template <typename Test>
__device__ __forceinline__ void
test_tile_cells(const kernel_args& a, const block_place& b, Test&& test)
{
    const int wr = a.gr + a.tr, wc = a.gc + a.tc;
    const int j = threadIdx.x, c = b.c0 + j;
    const int col_class = cfar_clip_class(c, a.ncols, wc, a.col_wrap);
    for (int i = threadIdx.y; i < a.tile_rows; i += block_rows) {
        const int r = b.r0 + i;
        const bool valid = r < a.nrows && c < a.ncols;
        cell_test ct{ 0.f, 0.f };
        float alpha = 1.f;
        if (valid) {
            const cfar_class_entry e =
                class_entry(a, cfar_clip_class(r, a.nrows, wr, a.row_wrap), col_class);
            ct = test(i, j, r, c, e);
            alpha = e.alpha;
        }
        finish_cell(a, b, r, c, valid, ct.x, ct.t, alpha);
    }
}

//! Columns per thread (one float4) and per warp-wide tile.
constexpr int vec_width = 4;
constexpr int vec_tile_cols = 32 * vec_width;
//! Cell rows per block: the 2 wr halo rows of row sums cost (32 + 12) / 32 at the PD
//! window, against (16 + 12) / 16 for a 16-row tile.
constexpr int vec_tile_rows = 32;

//! Row pitch of the table in doubles: odd, so that a warp walking down a column hits
//! distinct banks.
__host__ __device__ __forceinline__ int sat_pitch(int tch) { return (tch + 1) | 1; }

using kernel_fn = void (*)(kernel_args);

//! DESIGN.md's CFAR window (guard/train range 1/5, Doppler 1/1): the one the PD chain
//! runs, compiled exactly so that its loops unroll into constant offsets.
constexpr int design_gr = 1, design_tr = 5, design_gc = 1, design_tc = 1;
constexpr bool is_design_window(int gr, int tr, int gc, int tc)
{
    return gr == design_gr && tr == design_tr && gc == design_gc && tc == design_tc;
}

//! The segmented kernel of variant v (ca, go, so) for a window of reach (wr, wc).
kernel_fn segmented_kernel(cfar_variant v, int wr, int wc);
//! The summed-area kernel of variant v (ca, go, so).
kernel_fn summed_area_kernel(cfar_variant v);
//! The os kernel for windows of n training cells, for runs with or without a threshold
//! map (without one, only detections select their order statistic); design_window:
//! is_design_window of the plan's window.
kernel_fn ordered_statistic_kernel(int n, bool threshold_map, bool design_window);
//! The row-vector kernel of variant v for this window, or nullptr where none is compiled
//! (windows other than DESIGN.md's, os). stream: evict-first loads (fits_in_l2).
kernel_fn row_vector_kernel(cfar_variant v, int gr, int tr, int gc, int tc, bool stream);

//! What the publish step (cfar_publish.cu) copies into the mapped host buffer.
struct publish_args {
    const unsigned long long* results; //!< the run's [found][non-finite per map]
    unsigned long long* host;          //!< mapped: the same counters
    int counter_words;
    const device_detection* list; //!< the run's detection list
    device_detection* host_list;  //!< mapped: its head
    unsigned long long head;      //!< most entries copied with the counters
    unsigned long long capacity;  //!< entries the list holds (max_detections)
};

//! Where the clustering publish step merges and what it writes (mapped host memory).
struct cluster_args {
    int nrows, ncols; //!< one map's extent
    bool row_wrap, col_wrap;
    unsigned long long* clusters; //!< the number of clusters, or cluster_fallback
    device_detection* peaks;      //!< each cluster's strongest cell
    unsigned* cells;              //!< each cluster's cell count
};

//! The list was longer than cfar_device_cluster_limit: it went back whole (publish_args'
//! head, the rest for collect() to copy) to be clustered on the host.
constexpr unsigned long long cluster_fallback = ~0ull;

//! The counters and the list's head back to the host, after the run's CFAR kernel.
void launch_publish(bool dependent,
                    cudaStream_t stream,
                    const char* who,
                    const publish_args& a);
//! The counters, and the run's detections merged into clusters, back to the host.
void launch_publish_clusters(bool dependent,
                             cudaStream_t stream,
                             const char* who,
                             const publish_args& a,
                             const cluster_args& c);

} // namespace gpuradar::kernels::detail::cfar_cuda_kernels

#endif
