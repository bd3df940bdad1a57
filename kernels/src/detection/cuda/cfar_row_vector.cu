/*
 * CUDA CFAR, row-vector segmented kernel (ca, go, so on the workloads' window of
 * CONVENTIONS.md over maps of whole float4 rows: the pulse-Doppler chain's case).
 *
 * The generic tile kernels (cfar_segmented.cu) spend hundreds of instructions per cell
 * (index math per element, predicated window loops up to 8 x 4, one thread per cell, a
 * byte store per cell). For a window known at compile time and maps whose rows are whole
 * float4s, this kernel does the same segmented sums with each thread owning 4 adjacent
 * columns (one float4):
 *  - phase A: each warp loads its rows of the tile, 128 columns each (coalesced
 *    512-byte float4 loads, all of a warp's rows in flight at once; the column halo
 *    comes from the neighbouring lanes by shuffles, lanes 0 / 31 load the one float4
 *    beyond the warp), forms the row sums of its 4 columns in registers and stores the
 *    full and side planes (float4 stores), keeping its cell rows' lo / hi sums;
 *  - phase B: per cell row, adds the planes' rows (float4 loads) in cfar_halves'
 *    order, tests 4 cells, writes the mask as one uint32 (and the thresholds as one
 *    float4), and compacts detections with one atomic per warp (rare: Pfa).
 * Same floats added in the same order as cfar_row_sums_of / cfar_halves (and the CPU
 * twin): thresholds bit-identical to the generic segmented kernel and the CPU twin
 * (kernels_test_cfar_2d test_023). Several times faster than the generic kernel on the
 * PD workloads: `gpuradar_bench pd_chain/default`.
 */
#include "detection/cfar_math.h"
#include "detection/cuda/cfar_cuda_kernels.cuh"

namespace gpuradar::kernels::detail::cfar_cuda_kernels {
namespace {

//! Blocks per SM the launch bounds ask for: caps the registers (4 cell rows' sums kept
//! per thread) so that 3 tiles share an SM without spilling (the plain-load form asks for
//! the shared-memory carveout that holds their planes, cfar_cuda.cu). The variants
//! measured beside it (16-row tiles, 2 or 4 blocks per SM) were slower or equal:
//! `gpuradar_bench pd_chain/default`.
constexpr int vec_blocks_per_sm = 3;
//! Column reach the register halo covers: one float4 on each side.
constexpr int vec_max_wc = vec_width;

//! Row sums of one lane's 4 columns, and its 4 cells (sanitised: non-finite is +Inf).
struct vec_row {
    float lo[vec_width], hi[vec_width], full[vec_width], side[vec_width];
    float x[vec_width];
};

//! The raw float4 of columns [c, c + 4) of map row rr; zeros where rr or c is -1 (beyond
//! a clipped edge). Row and column already resolved. EvictFirst (the run's maps fit in
//! L2, fits_in_l2): evict-first loads, the map's last use, so that a pulse-Doppler chain
//! running beside on another stream keeps its lines in L2.
template <bool EvictFirst>
__device__ __forceinline__ float4
vec_fetch(const float* map, int rr, long long row_stride, int c)
{
    float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
    if (rr >= 0 && c >= 0) {
        const auto* p = reinterpret_cast<const float4*>(map + rr * row_stride + c);
        v = EvictFirst ? __ldcs(p) : __ldg(p);
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
 * How the kernel's 8 warps share the rows of a tile of vec_tile_rows cell rows and WR
 * window rows above and below (tile row t: 0 is WR rows above the first cell row): warp
 * w owns the cell rows w, w + 8, w + 16, w + 24 (tile rows WR + those) and the halo rows
 * w, w + 8, ... of the 2 WR (halo index hidx: < WR above the tile, else below).
 */
template <int WR>
struct vec_warp_rows {
    static constexpr int nwarps = block_threads / 32;
    static constexpr int cell_rows = vec_tile_rows / nwarps;         // per warp
    static constexpr int halo_rows = (2 * WR + nwarps - 1) / nwarps; // per warp, at most
    static constexpr int tile_rows = vec_tile_rows + 2 * WR;         // with the halo
    static_assert(vec_tile_rows % nwarps == 0, "whole cell rows per warp");
};

/*!
 * Phase A, loads: this warp's cell rows (cv, chv) and halo rows (hv, hhv), this lane's
 * float4 and the one beyond the warp (c_halo, lanes 0 and 31), all in flight at once (up
 * to 6 float4 per lane) before any is summed. map_row(t): the map row of tile row t.
 */
template <int WR, bool EvictFirst, typename MapRow>
__device__ __forceinline__ void vec_load_rows(const kernel_args& a,
                                              const float* map,
                                              int c_own,
                                              int c_halo,
                                              int warp,
                                              MapRow map_row,
                                              float4 (&cv)[vec_warp_rows<WR>::cell_rows],
                                              float4 (&chv)[vec_warp_rows<WR>::cell_rows],
                                              float4 (&hv)[vec_warp_rows<WR>::halo_rows],
                                              float4 (&hhv)[vec_warp_rows<WR>::halo_rows])
{
    using rows = vec_warp_rows<WR>;
    constexpr int ROWS = vec_tile_rows, nwarps = rows::nwarps;
#pragma unroll
    for (int k = 0; k < rows::cell_rows; ++k) {
        const int rr = map_row(WR + warp + nwarps * k);
        cv[k] = vec_fetch<EvictFirst>(map, rr, a.row_stride, c_own);
        chv[k] = vec_fetch<EvictFirst>(map, rr, a.row_stride, c_halo);
    }
#pragma unroll
    for (int h = 0; h < rows::halo_rows; ++h) {
        const int hidx = warp + nwarps * h; // halo row: < WR above the tile, else below
        const int t = hidx < WR ? hidx : hidx + ROWS;
        const int rr = hidx < 2 * WR ? map_row(t) : -1;
        hv[h] = vec_fetch<EvictFirst>(map, rr, a.row_stride, c_own);
        hhv[h] = vec_fetch<EvictFirst>(map, rr, a.row_stride, c_halo);
    }
}

/*!
 * Phase A, sums: the row sums of every row vec_load_rows loaded; their full and side
 * planes into shared memory (float4 stores), and this warp's cell rows' lo / hi sums and
 * cells kept in `own` for phase B.
 */
template <int WR, int GC, int TC>
__device__ __forceinline__ void
vec_store_row_sums(const float4 (&cv)[vec_warp_rows<WR>::cell_rows],
                   const float4 (&chv)[vec_warp_rows<WR>::cell_rows],
                   const float4 (&hv)[vec_warp_rows<WR>::halo_rows],
                   const float4 (&hhv)[vec_warp_rows<WR>::halo_rows],
                   int warp,
                   int lane,
                   float4* s_full,
                   float4* s_side,
                   vec_row (&own)[vec_warp_rows<WR>::cell_rows])
{
    using rows = vec_warp_rows<WR>;
    constexpr int ROWS = vec_tile_rows, nwarps = rows::nwarps;
#pragma unroll
    for (int k = 0; k < rows::cell_rows; ++k) {
        own[k] = vec_row_sums<GC, TC>(cv[k], chv[k]);
        const int t = WR + warp + nwarps * k;
        s_full[t * 32 + lane] = f4(own[k].full);
        s_side[t * 32 + lane] = f4(own[k].side);
    }
#pragma unroll
    for (int h = 0; h < rows::halo_rows; ++h) {
        const int hidx = warp + nwarps * h;
        if (hidx < 2 * WR) { // uniform over the warp
            const vec_row s = vec_row_sums<GC, TC>(hv[h], hhv[h]);
            const int t = hidx < WR ? hidx : hidx + ROWS;
            s_full[t * 32 + lane] = f4(s.full);
            s_side[t * 32 + lane] = f4(s.side);
        }
    }
}

/*!
 * Phase B, the window sums of a lane's 4 cells of one row, in cfar_halves' order: lead =
 * rows -wr .. -gr-1 (full), -gr .. -1 (side), then lo0; lag = hi0, rows 1 .. gr (side),
 * gr+1 .. wr (full). pf, ps: the full and side planes at the lane's float4 of that row;
 * lead arrives zeroed (the caller's initialiser: moved in here, it changed the order
 * in which the compiler lays out the adds).
 */
template <int GR, int TR>
__device__ __forceinline__ void vec_window_sums(const float4* pf,
                                                const float4* ps,
                                                const vec_row& own,
                                                float (&lead)[vec_width],
                                                float (&lag)[vec_width])
{
    constexpr int WR = GR + TR;
#pragma unroll
    for (int d = WR; d >= 1; --d) {
        const float4 q = d > GR ? pf[-d * 32] : ps[-d * 32];
        lead[0] += q.x;
        lead[1] += q.y;
        lead[2] += q.z;
        lead[3] += q.w;
    }
#pragma unroll
    for (int j = 0; j < vec_width; ++j) {
        lead[j] += own.lo[j];
        lag[j] = own.hi[j];
    }
#pragma unroll
    for (int d = 1; d <= WR; ++d) {
        const float4 q = d > GR ? pf[d * 32] : ps[d * 32];
        lag[0] += q.x;
        lag[1] += q.y;
        lag[2] += q.z;
        lag[3] += q.w;
    }
}

/*!
 * Phase B, the thresholds of a lane's 4 cells of one row and their alpha: the interior
 * entry where the row and all 4 columns are interior (no table read), else each cell's
 * clip-class entry.
 */
template <cfar_variant V, int WR, int WC>
__device__ __forceinline__ void vec_thresholds(const kernel_args& a,
                                               const float (&lead)[vec_width],
                                               const float (&lag)[vec_width],
                                               int row_class,
                                               const int (&col_class)[vec_width],
                                               bool interior_cols,
                                               float (&t)[vec_width],
                                               float (&alpha)[vec_width])
{
    if (row_class == WR && interior_cols) {
#pragma unroll
        for (int j = 0; j < vec_width; ++j) {
            t[j] = cfar_sum_threshold<V>(lead[j], lag[j], a.interior);
            alpha[j] = a.interior.alpha;
        }
    } else {
#pragma unroll
        for (int j = 0; j < vec_width; ++j) {
            const cfar_class_entry e = a.classes[row_class * (2 * WC + 1) + col_class[j]];
            t[j] = cfar_sum_threshold<V>(lead[j], lag[j], e);
            alpha[j] = e.alpha;
        }
    }
}

/*!
 * Phase B, the rare part of a cell row (a lane of the warp has a detection or a
 * non-finite cell: Pfa, bad input): the local-maximum filter, the detections compacted
 * with one atomic per warp and row, and the non-finite cells counted per label. Returns
 * det_bits less the cells the filter dropped.
 */
__device__ __forceinline__ unsigned vec_publish_row(const kernel_args& a,
                                                    const float* map,
                                                    int m,
                                                    int lane,
                                                    int r,
                                                    int c,
                                                    const float (&x)[vec_width],
                                                    const float (&t)[vec_width],
                                                    const float (&alpha)[vec_width],
                                                    unsigned det_bits,
                                                    unsigned bad)
{
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
                                           return __ldg(map + rr * a.row_stride + cc);
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
                if (slot < a.det_capacity) {
                    device_detection d{ label, row,  std::uint32_t(c + j),
                                        x[j],  t[j], t[j] / alpha[j] };
                    fetch_neighbours(a, map, r, c + j, d);
                    a.det_list[slot] = d;
                }
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
    return det_bits;
}

//! The mask bytes of a lane's 4 cells, one per bit of det_bits, as one uint32 (little
//! endian: cell j in byte j).
__device__ __forceinline__ std::uint32_t mask_word(unsigned det_bits)
{
    return (det_bits & 1u) | ((det_bits & 2u) << 7) | ((det_bits & 4u) << 14) |
           ((det_bits & 8u) << 21);
}

/*!
 * Variant V over the window of GR guard and TR training rows and GC guard and TC
 * training columns either side; EvictFirst: vec_fetch's loads. Warp w owns the cell rows
 * w, w + 8, w + 16, w + 24 of the tile and a share of the 2 WR halo rows
 * (vec_warp_rows). Phase A loads all of them at once (vec_load_rows), stores their full
 * and side row sums and keeps its cell rows' lo / hi sums and cells in registers
 * (vec_store_row_sums). Phase B, per cell row, reads the other rows' sums from shared
 * memory (vec_window_sums), makes the thresholds (vec_thresholds), tests the 4 cells,
 * publishes the rare detections and non-finite counts (vec_publish_row), and writes
 * the thresholds as one float4 and the mask as one uint32 (mask_word).
 */
template <cfar_variant V, int GR, int TR, int GC, int TC, bool EvictFirst>
__global__ void __launch_bounds__(block_threads, vec_blocks_per_sm)
    cfar_vec_kernel(const kernel_args a)
{
    constexpr int ROWS = vec_tile_rows;
    constexpr int WR = GR + TR, WC = GC + TC;
    using rows = vec_warp_rows<WR>;
    constexpr int nwarps = rows::nwarps, cell_rows = rows::cell_rows;
    static_assert(WC <= vec_max_wc, "the register halo covers one float4 per side");
    __shared__ float4 s_full[rows::tile_rows * 32];
    __shared__ float4 s_side[rows::tile_rows * 32];

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

    // Phase A: every load first, then the sums. Map row of tile row t (0: WR rows above
    // the first cell row): a tile with every row inside the map resolves none.
    const bool rows_inside = r0 - WR >= 0 && r0 + ROWS + WR <= a.nrows;
    auto map_row = [&](int t) {
        return rows_inside ? r0 - WR + t : resolve(r0 - WR + t, a.nrows, a.row_wrap);
    };
    float4 cv[cell_rows], chv[cell_rows], hv[rows::halo_rows], hhv[rows::halo_rows];
    vec_load_rows<WR, EvictFirst>(a, map, c_own, c_halo, warp, map_row, cv, chv, hv, hhv);
    vec_row own[cell_rows];
    vec_store_row_sums<WR, GC, TC>(cv, chv, hv, hhv, warp, lane, s_full, s_side, own);
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
        float lead[vec_width] = { 0.f, 0.f, 0.f, 0.f }, lag[vec_width];
        vec_window_sums<GR, TR>(s_full + (i + WR) * 32 + lane,
                                s_side + (i + WR) * 32 + lane,
                                own[k],
                                lead,
                                lag);
        const float(&x)[vec_width] = own[k].x;
        const int row_class = cfar_clip_class(r, a.nrows, WR, a.row_wrap);
        float t[vec_width], alpha[vec_width];
        vec_thresholds<V, WR, WC>(
            a, lead, lag, row_class, col_class, interior_cols, t, alpha);
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
        if (__any_sync(full_warp, (det_bits | bad) != 0)) // rare: Pfa, bad input
            det_bits = vec_publish_row(a, map, m, lane, r, c, x, t, alpha, det_bits, bad);
        if (col_valid) {
            const long long o = base + r * a.row_stride + c;
            *reinterpret_cast<std::uint32_t*>(a.mask + o) = mask_word(det_bits);
        }
    }
}

//! The row-vector kernel of variant V for CONVENTIONS.md's window; stream: evict-first.
template <cfar_variant V>
kernel_fn vec_kernel_of(bool stream)
{
    constexpr int gr = design_gr, tr = design_tr, gc = design_gc, tc = design_tc;
    return stream ? cfar_vec_kernel<V, gr, tr, gc, tc, true>
                  : cfar_vec_kernel<V, gr, tr, gc, tc, false>;
}

} // namespace

kernel_fn row_vector_kernel(cfar_variant v, int gr, int tr, int gc, int tc, bool stream)
{
    if (!is_design_window(gr, tr, gc, tc))
        return nullptr;
    switch (v) {
    case cfar_variant::ca:
        return vec_kernel_of<cfar_variant::ca>(stream);
    case cfar_variant::go:
        return vec_kernel_of<cfar_variant::go>(stream);
    case cfar_variant::so:
        return vec_kernel_of<cfar_variant::so>(stream);
    default:
        return nullptr;
    }
}

} // namespace gpuradar::kernels::detail::cfar_cuda_kernels
