/*
 * Backprojection internals shared by the CPU twin, the CUDA kernels and fast factorized
 * backprojection (backprojection_factorized_backends.h): the host-side preparation of a
 * run (geometry validation, skipped pulses, series order, window widths) and the
 * per-tile maths, written once for host and device so that both backends compute the
 * same quantities the same way.
 *
 * The maths (per tile of bp_tile x bp_tile pixels and per pulse):
 *   u = C - A (tile centre minus antenna, double), r = |u|,
 *   r_ref = r0 + (nref + 1/2) dr with nref = floor((r - r0)/dr), e = r - r_ref,
 *   for a pixel P = C + d:  q = |d + u|^2 - r^2 = d.(2u) + |d|^2   (exact identity),
 *   dR = R - r = q / (R + r) = s (1 + m(sigma)), s = q/(2r), sigma = q/(4 r^2),
 *   m(sigma) = sum_{n>=1} (-1)^n C_n sigma^n   (C_n Catalan numbers; |sigma| < 1/4),
 *   dR' = R - r_ref = dR + e,   bin = nref + 1/2 + dR'/dr,
 *   phase = 2 pi (frac(kt r_ref) + kt dR'),  kt = 2 f0 / c turns per metre.
 * Only small quantities (|d| < one tile, |dR'|) meet float; r, r_ref and the phase of
 * r_ref stay in double.
 */
#ifndef INCLUDED_GPURADAR_KERNELS_BACKPROJECTION_COMMON_H
#define INCLUDED_GPURADAR_KERNELS_BACKPROJECTION_COMMON_H

#include <gpuradar/kernels/sar/backprojection.h>
#include <cmath>
#include <cstddef>
#include <memory>
#include <vector>

#if defined(__CUDACC__)
#define GPURADAR_BP_HD __host__ __device__ __forceinline__
#else
#define GPURADAR_BP_HD inline
#endif

namespace gpuradar::kernels::detail {

#if !defined(__CUDA_ARCH__)
// The HD functions below call sqrt/fma unqualified: the float overloads on the host too.
using std::floor;
using std::fma;
using std::rint;
using std::sqrt;
#endif

//! Pixels per tile side. 32: a warp spans one tile row (coalesced image access, nearby
//! range bins per warp), and the tile's half-diagonal (which bounds |dR| and so the
//! float error of `fast`) stays ~22 pixel spacings.
constexpr int bp_tile = 32;
//! Offset of the tile centre from its first pixel, in pixels.
constexpr double bp_tile_centre = 0.5 * (bp_tile - 1);
//! Relative truncation allowed for the range series in `fast`: below float rounding.
constexpr double bp_series_tol_fast = 2e-8;
//! Absolute range error allowed for the series in `accurate` (m): 1e-10 m is 4e-8 rad at
//! X band, far below the 1e-5 rad rms a 100 dB SER allows.
constexpr double bp_series_tol_accurate_m = 1e-10;

//! Limits of the geometry the arithmetic carries (backprojection.h, "Bad geometry").
constexpr double bp_max_range_m = 1e15;
constexpr double bp_max_range_bins = 1152921504606846976.0;   // 2^60
constexpr double bp_max_tile_turns = 524288.0;                // 2^19
constexpr double bp_max_reference_turns = 2251799813685248.0; // 2^51

//! Tiles of a grid and the bounds that size every run (built once per grid).
struct bp_layout {
    long long ntx = 0, nty = 0;    //!< tiles across and down
    double hd = 0;                 //!< max |pixel - tile centre| over all tiles (m)
    double hx = 0, hy = 0, hz = 0; //!< max |pixel - tile centre| along x, y, z (m)
    //! Bounding box of all tile centres (m).
    double cx_min = 0, cx_max = 0, cy_min = 0, cy_max = 0, cz_min = 0, cz_max = 0;
    std::vector<double> tile_z; //!< centre height per tile (height map only), ty*ntx+tx
    std::vector<double> dz;     //!< pixel height minus its tile's centre height (ny*nx)
    bool has_height = false;    //!< a height map that is not flat (else z below)
    double z = 0;               //!< the height of a flat grid (z, or a flat DEM's)
};
bp_layout bp_make_layout(const image_grid& g);

//! One usable pulse, prepared on the host (64 bytes, the layout the CUDA kernel reads).
struct bp_pulse {
    double ax, ay, az; //!< antenna phase centre (m)
    double r0;         //!< range of bin 0 (m)
    double dr;         //!< bin spacing (m)
    double inv_dr;     //!< 1/dr
    double kt;         //!< 2 f0 / c, phase turns per metre of range
    int index;         //!< pulse index in the caller's arrays
    int half;          //!< bins either side of r_ref that any pixel of a tile can reach
};

//! What a run needs to know beyond the pulses: the series order and the window width.
struct bp_prepared {
    std::vector<bp_pulse> pulses;
    std::size_t skipped = 0; //!< pulses with a non-finite geometry value
    int series_terms = 0;    //!< terms of m(sigma); 0: the exact q/(R + r) instead
    int max_half = 0;        //!< max of bp_pulse::half
    //! Bound (turns) on the phase of a pixel's range beyond its part linear in the pixel
    //! offset d, kt (dR - u.d/r) = kt (|d|^2/2r + the series' higher terms): 2 kt hd^2 /
    //! r_min over the pulses (infinite when an antenna is at a tile centre).
    double bend_turns = 0;
};

//! The largest bend_turns for which CUDA `accurate` may take the phase beyond its linear
//! part in float (its rounding, ~2.4e-7 of it, stays below 3e-6 rad).
constexpr double bp_float_bend_max_turns = 2.0;

/*!
 * Validates the geometry (throws std::invalid_argument on a finite dr <= 0, before any
 * work), drops pulses with a non-finite value, and picks the series order: the smallest
 * of 2 or 4 terms whose truncation is below the precision's tolerance for the worst
 * tile-pulse pair, else 0 (exact formula, e.g. when an antenna is close to the scene).
 */
bp_prepared bp_prepare(const double* geometry,
                       std::size_t npulses,
                       const bp_layout& layout,
                       backprojection::precision p);

/*!
 * Whether a pulse's finite geometry g = [x, y, z, r0, dr > 0, f0] stays within what the
 * arithmetic carries for this grid (the limits above); a pulse that does not is skipped.
 */
bool bp_carried(const double* g, const bp_layout& l);

/*!
 * What the CPU and CUDA backends share: the grid's layout and the start of every run.
 */
class bp_backend : public backprojection
{
protected:
    bp_backend(const image_grid& g, std::size_t nbins, backprojection::precision p);

    /*!
     * The start of a run: null pointers refused (bp_check_pointers), the geometry
     * prepared into `prep` (bp_prepare, which may throw before anything is touched),
     * skipped pulses counted. Returns false when no pulse is left to backproject.
     */
    bool begin_run(const void* pulses,
                   const double* geometry,
                   std::size_t npulses,
                   const void* image,
                   bp_prepared& prep);

    const bp_layout d_layout;
};

//! Throws std::invalid_argument when a pointer needed for npulses > 0 is null.
void bp_check_pointers(const void* pulses,
                       const double* geometry,
                       std::size_t npulses,
                       const void* image);

//! Reference range of one tile for one pulse, in double (see the file comment).
struct bp_tile_ref {
    double ux, uy, uz; //!< tile centre - antenna (m)
    double r;          //!< |u| (m)
    double inv_r;      //!< 1 / r (1/m): the series and the CUDA entry window share it
    double e;          //!< r - r_ref (m), |e| <= dr/2
    double pht;        //!< phase of r_ref in turns, in [-1/2, 1/2]
    long long nref;    //!< r_ref = r0 + (nref + 1/2) dr
};

GPURADAR_BP_HD bp_tile_ref bp_reference(const bp_pulse& p,
                                        double cx,
                                        double cy,
                                        double cz)
{
    bp_tile_ref t;
    t.ux = cx - p.ax;
    t.uy = cy - p.ay;
    t.uz = cz - p.az;
    t.r = sqrt(t.ux * t.ux + t.uy * t.uy + t.uz * t.uz);
    t.inv_r = 1 / t.r;
    const double b = floor((t.r - p.r0) * p.inv_dr);
    t.nref = static_cast<long long>(b);
    const double r_ref = p.r0 + (b + 0.5) * p.dr;
    t.e = t.r - r_ref;
    const double turns = p.kt * r_ref;
    t.pht = turns - rint(turns);
    return t;
}

//! (-1)^n C_n, the coefficients of m(sigma).
GPURADAR_BP_HD constexpr double bp_catalan_signed(int n)
{
    constexpr double c[] = { 1.0, -1.0, 2.0, -5.0, 14.0, -42.0, 132.0, -429.0, 1430.0 };
    return c[n];
}

/*!
 * The range of a pixel relative to its tile's r_ref, dR' = dR + e, as a function of q,
 * in the type T of the pixel loop and in units of 1/scale metres (scale 1: metres;
 * 1/dr: range bins). N > 0: dR = q g(q) with g = (1 + m(sigma)) / (2r) expanded in q,
 * c[n] = scale (-1)^n C_n / (2r (4r^2)^n), so that a pixel costs N + 1 FMAs in Horner
 * form (sigma = q / (4r^2) folded into the coefficients, which are formed once per tile
 * and pulse). A coefficient too small for T drops a term far below T's rounding of dR'.
 */
template <typename T, int N>
struct bp_range_terms {
    T c[N + 1]; //!< series coefficients, c[0] = scale / (2r)
    T e;        //!< scale (r - r_ref)
};
//! N == 0: the exact scale (q / (sqrt(r^2 + q) + r)) + e.
template <typename T>
struct bp_range_terms<T, 0> {
    T e;      //!< scale (r - r_ref)
    T r, rr2; //!< r and r^2 in metres
    T scale;  //!< 1 / (unit of the result in metres)
};

template <typename T, int N>
GPURADAR_BP_HD bp_range_terms<T, N> bp_make_range_terms(const bp_tile_ref& t,
                                                        double scale)
{
    bp_range_terms<T, N> s;
    s.e = T(scale * t.e);
    if constexpr (N == 0) {
        s.r = T(t.r);
        s.rr2 = T(t.r * t.r);
        s.scale = T(scale);
    } else {
        const double inv2r = 0.5 * t.inv_r, inv4r2 = inv2r * inv2r;
        double f = scale * inv2r;
        for (int n = 0; n <= N; ++n, f *= inv4r2)
            s.c[n] = T(bp_catalan_signed(n) * f);
    }
    return s;
}

//! dR' of a pixel with this q (see bp_range_terms).
template <typename T, int N>
GPURADAR_BP_HD T bp_delta_range(T q, const bp_range_terms<T, N>& s)
{
    if constexpr (N == 0) {
        return fma(q / (sqrt(s.rr2 + q) + s.r), s.scale, s.e);
    } else {
        T g = s.c[N];
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
        for (int n = N - 1; n >= 0; --n)
            g = fma(q, g, s.c[n]);
        return fma(q, g, s.e);
    }
}

} // namespace gpuradar::kernels::detail

#endif
