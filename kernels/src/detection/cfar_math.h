/*
 * CFAR arithmetic shared by the CPU twin and the CUDA kernels (internal). Both backends
 * call these same functions, so the separable sums add the same floats in the same order
 * and the segmented CUDA estimator reproduces the CPU thresholds bit for bit.
 */
#ifndef INCLUDED_GPURADAR_KERNELS_CFAR_MATH_H
#define INCLUDED_GPURADAR_KERNELS_CFAR_MATH_H

#include <gpuradar/kernels/detection/cfar_common.h>
#include <cmath>
#include <cstdint>

#ifdef __CUDACC__
#define GPURADAR_HD __host__ __device__ __forceinline__
#else
#define GPURADAR_HD inline
#endif

namespace gpuradar::kernels::detail {

//! How T is formed for one clip class of cells (one entry of the plan's table).
struct cfar_class_entry {
    //! ca: alpha / N on the sum of all cells; go, so: alpha / lead on the lead sum, or
    //! -1 when the lead half is empty (then only the other half counts); os: alpha.
    float scale_lead;
    float scale_lag; //!< as scale_lead for the lag half (ca, os: equal to scale_lead)
    float alpha;     //!< T / alpha is the interference level Z reported with detections
    std::int32_t k;  //!< os rank (1-based) of this class's window; 0 otherwise
};

GPURADAR_HD bool cfar_finite(float v)
{
#ifdef __CUDA_ARCH__
    return isfinite(v);
#else
    return std::isfinite(v);
#endif
}

//! A training cell as the sums see it: non-finite input stands for +Inf interference,
//! a finite value above cfar_max_training_power counts as that level (cfar_2d.h).
GPURADAR_HD float cfar_sanitize(float v)
{
    return cfar_finite(v) ? (v < cfar_max_training_power ? v : cfar_max_training_power)
                          : INFINITY;
}

/*!
 * Clip class of position `pos` in a dimension of `n` cells and half-width `w`:
 * w + (cells lost below) - (cells lost above), in [0, 2w]; w for interior cells and for
 * every cell of a wrapped dimension. The window fits the map, so at most one side loses.
 */
GPURADAR_HD int cfar_clip_class(int pos, int n, int w, bool wrap)
{
    if (wrap)
        return w;
    const int below = w - pos;
    const int above = pos + w - (n - 1);
    return w + (below > 0 ? below : 0) - (above > 0 ? above : 0);
}

//! Sums over one row of a window: all 2 Wc + 1 cells, the training cells beside the
//! guard band (both sides, and each side alone).
struct cfar_row_sums {
    float full; //!< (lo + guard) + hi
    float side; //!< lo + hi
    float lo;   //!< the tc cells before the guard band
    float hi;   //!< the tc cells after it
};

//! x(u), u = 0 .. 2 (gc + tc): the row's cells from the window's first column on.
template <typename X>
GPURADAR_HD cfar_row_sums cfar_row_sums_of(const X& x, int gc, int tc)
{
    float lo = 0.f, g = 0.f, hi = 0.f;
    int u = 0;
    for (; u < tc; ++u)
        lo += x(u);
    for (; u <= tc + 2 * gc; ++u)
        g += x(u);
    for (; u <= 2 * (tc + gc); ++u)
        hi += x(u);
    return { (lo + g) + hi, lo + hi, lo, hi };
}

/*!
 * The lead and lag training sums of a CUT from the row sums of its window's rows:
 * full(dr), side(dr) for row offset dr in [-wr, wr] (dr != 0), lo0 and hi0 of the CUT's
 * own row. Lead: rows above the guard band, the guard band's side cells above the CUT,
 * the cells left of the guard on the CUT's row; lag mirrors it.
 */
template <typename Full, typename Side>
GPURADAR_HD void cfar_halves(const Full& full,
                             const Side& side,
                             float lo0,
                             float hi0,
                             int gr,
                             int tr,
                             float& lead,
                             float& lag)
{
    const int wr = gr + tr;
    float a = 0.f;
    for (int dr = -wr; dr < -gr; ++dr)
        a += full(dr);
    for (int dr = -gr; dr < 0; ++dr)
        a += side(dr);
    a += lo0;
    float b = hi0;
    for (int dr = 1; dr <= gr; ++dr)
        b += side(dr);
    for (int dr = gr + 1; dr <= wr; ++dr)
        b += full(dr);
    lead = a;
    lag = b;
}

//! T for ca, go and so from the half sums (os: T = alpha * k-th smallest, elsewhere).
template <cfar_variant V>
GPURADAR_HD float cfar_sum_threshold(float lead, float lag, const cfar_class_entry& e)
{
    if (V == cfar_variant::ca)
        return (lead + lag) * e.scale_lead;
    if (e.scale_lead < 0.f)
        return lag * e.scale_lag;
    if (e.scale_lag < 0.f)
        return lead * e.scale_lead;
    const float zl = lead * e.scale_lead;
    const float zg = lag * e.scale_lag;
    if (V == cfar_variant::go)
        return zl > zg ? zl : zg;
    return zl < zg ? zl : zg;
}

//! Index i of an axis of n cells, stepped outside: wrapped, or -1 beyond a clipped edge.
GPURADAR_HD int cfar_edge_index(int i, int n, bool wrap)
{
    if (i >= 0 && i < n)
        return i;
    return wrap ? (i + n) % n : -1;
}

/*!
 * Local-maximum test of a detection x at (r, c): no finite neighbour in the
 * (2 lm_rows + 1) x 3 neighbourhood is larger, or equal and earlier in memory.
 * Neighbours beyond a clipped edge do not exist; a wrapped edge wraps. fetch(r, c)
 * reads the raw map.
 */
template <typename Fetch>
GPURADAR_HD bool cfar_is_local_max(float x,
                                   int r,
                                   int c,
                                   int nrows,
                                   int ncols,
                                   bool row_wrap,
                                   bool col_wrap,
                                   int lm_rows,
                                   const Fetch& fetch)
{
    for (int dr = -lm_rows; dr <= lm_rows; ++dr) {
        const int rr = cfar_edge_index(r + dr, nrows, row_wrap);
        if (rr < 0)
            continue;
        for (int dc = -1; dc <= 1; ++dc) {
            const int cc = cfar_edge_index(c + dc, ncols, col_wrap);
            if (cc < 0)
                continue;
            if (rr == r && cc == c)
                continue;
            const float n = fetch(rr, cc);
            if (!cfar_finite(n))
                continue;
            if (n > x || (n == x && (rr < r || (rr == r && cc < c))))
                return false;
        }
    }
    return true;
}

/*!
 * The map's values beside a detection at (r, c), for sub-bin interpolation of its peak:
 * out = { (r-1, c), (r+1, c), (r, c-1), (r, c+1) }, read with fetch(r, c) like the
 * local-maximum test (a wrapped edge wraps). A neighbour that does not exist (beyond a
 * clipped edge; rows when lm_rows = 0, i.e. the rows are independent lines) is NaN.
 * Four reads per detection: detections are sparse, so this is noise beside the window.
 */
template <typename Fetch>
GPURADAR_HD void cfar_neighbour_powers(int r,
                                       int c,
                                       int nrows,
                                       int ncols,
                                       bool row_wrap,
                                       bool col_wrap,
                                       int lm_rows,
                                       const Fetch& fetch,
                                       float out[4])
{
    const auto at = [&](int rr, int cc) -> float {
        rr = cfar_edge_index(rr, nrows, row_wrap && lm_rows > 0);
        cc = cfar_edge_index(cc, ncols, col_wrap);
        return rr < 0 || cc < 0 ? NAN : fetch(rr, cc);
    };
    out[0] = lm_rows > 0 ? at(r - 1, c) : NAN;
    out[1] = lm_rows > 0 ? at(r + 1, c) : NAN;
    out[2] = at(r, c - 1);
    out[3] = at(r, c + 1);
}

//! The engine's neighbours (cfar_neighbour_powers order: rows, then columns) into a
//! detection whose rows are range and columns Doppler (cfar_1d swaps them back).
inline void set_neighbours(cfar_detection& d, const float nb[4])
{
    d.range_prev = nb[0];
    d.range_next = nb[1];
    d.doppler_prev = nb[2];
    d.doppler_next = nb[3];
}

} // namespace gpuradar::kernels::detail

#endif
