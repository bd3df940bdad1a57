/*
 * CUDA backprojection, device maths (internal to backprojection_cuda.cu): the
 * arithmetic of a launch (arith), the per-tile-and-pulse constants in shared memory and
 * how warp 0 makes them (make_consts), the window of range bins a tile reaches
 * (entry_window), the staged entry of a pair of bins (staged_entry), where a thread's
 * pixels lie (pixel_col, pixel_row) and the fixed-point phase helpers. The kernels that
 * use them are in backprojection_cuda_kernels.cuh, which says per pixel and pulse what
 * each arith costs.
 */
#ifndef INCLUDED_GPURADAR_KERNELS_BACKPROJECTION_CUDA_MATHS_CUH
#define INCLUDED_GPURADAR_KERNELS_BACKPROJECTION_CUDA_MATHS_CUH

#include "sar/backprojection_backends.h"
#include <cuda_runtime.h>
#include <type_traits>
#include <cstddef>

namespace gpuradar::kernels::detail::bp_cuda {

/*!
 * The arithmetic of a launch. `single`: `fast`, all in float. `fixed_phase`: `accurate`
 * on a flat grid whose series converges and whose bend_turns is small: the range and
 * bin as in `fast`, the phase as its part linear in the pixel offset, kt u.d / r, exact
 * in 32-bit fixed-point turns (integer adds), plus the rest, under bend_turns, in float.
 * `double_range`: `accurate` otherwise, q, dR' and the phase in double.
 */
enum class arith { single, fixed_phase, double_range };

//! 1.5 * 2^23: adding it rounds a float to an integer kept in the low mantissa bits.
constexpr float round_magic = 12582912.0f;
constexpr unsigned round_magic_bits = 0x4B400000u;
//! 1.5f: its mantissa plus a signed 23-bit fraction gives 1.5 + that fraction.
constexpr unsigned one_and_half_bits = 0x3FC00000u;
//! 1.5 * 2^20: a double in [2^20, 2^21) has a mantissa LSB of 2^-32, so its low word is
//! the fraction of a phase in turns as 32-bit fixed point.
constexpr double turns_magic = 1572864.0;
constexpr double two_pi = 2 * pi;

struct grid_params {
    double x0, y0, dx, dy, z;
    double slice_dz;          // height step from one volume slice to the next
    double hx, hy, hz, hd;    // max |pixel - tile centre| along x, y, z and overall
    double row_dy;            // dy times the tile rows between a thread's pixels
    std::size_t slice_pixels; // nx * ny: image offset from one slice to the next
    int nx, ny, ntx;
    const double* tile_z; // tile centre heights (height map) or null
    const float* dz_f;    // pixel height - tile centre height (fast)
    const double* dz_d;   // the same in double (accurate)
};

//! What the staging of a pulse's window reads (every arith).
struct stage_fields {
    const float2* pulse; //!< this pulse's bins
    int nlo;             //!< entry j holds bins nlo + j, nlo + j + 1 ...
    int first;           //!< ... for the pixels with round(b) = first + j
    int count;           //!< entries staged (entry_window)
};

// Per tile and pulse, in shared memory (written by one thread, read by all). What the
// pixel loop reads comes first, in 16-byte groups (LDS.128).
template <int SeriesTerms>
struct alignas(16) fast_consts {
    float u2x, u2y;
    float kdr, ph;                           // rad per bin; phase of r_ref (rad)
    bp_range_terms<float, SeriesTerms> bins; // dR' in bins
    unsigned cbase; // byte address of entry (round(b) = 0) minus 16 * magic bits
    float u2z;
    float sy; // u2y times the offset between a thread's pixel rows (grid_params)
    stage_fields s;
};
template <int SeriesTerms>
struct alignas(16) fixed_consts {
    float u2x, u2y;
    float sy;                                // as in fast_consts
    float kb;                                // 2 f0 dr / c (turns per bin)
    bp_range_terms<float, SeriesTerms> bins; // dR' in bins
    unsigned cbase;
    unsigned k;      // phase of r_ref + kt e (turns), 32-bit fixed point
    unsigned wx, wy; // kt u.x/r dx/2 and kt u.y/r dy/2 (turns a half pixel), the same
    stage_fields s;
};
template <int SeriesTerms>
struct alignas(16) accurate_consts {
    double u2x, u2y;
    double sy; // u2y times the offset between a thread's pixel rows (grid_params)
    double u2z;
    bp_range_terms<double, SeriesTerms> bins; // dR' in bins
    double kb;                                // 2 f0 dr / c (turns per bin)
    double b_turn;                            // phase of r_ref (turns) + turns_magic
    unsigned cbase;
    stage_fields s;
};

template <arith Arith, int SeriesTerms>
using consts_t = std::conditional_t<Arith == arith::single,
                                    fast_consts<SeriesTerms>,
                                    std::conditional_t<Arith == arith::fixed_phase,
                                                       fixed_consts<SeriesTerms>,
                                                       accurate_consts<SeriesTerms>>>;
//! Shared memory a pulse's constants take: sized for the longest series.
constexpr std::size_t consts_bytes(arith a)
{
    return a == arith::single        ? sizeof(fast_consts<4>)
           : a == arith::fixed_phase ? sizeof(fixed_consts<4>)
                                     : sizeof(accurate_consts<4>);
}

__device__ __forceinline__ float4 lds128(unsigned addr)
{
    float4 v;
    asm("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];"
        : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
        : "r"(addr));
    return v;
}

__device__ __forceinline__ float2 finite_or_zero(float2 v)
{
    return (isfinite(v.x) && isfinite(v.y)) ? v : make_float2(0.0f, 0.0f);
}

/*!
 * The staged entry of bins (a, b) for a pixel whose rounded bin offset is n: their
 * midpoint minus n times their difference, and the difference, so that the value at
 * offset b (|b - n| <= 1/2) is one FMA, entry.xy + b entry.zw, without b - n. The price
 * is one more rounding, of n times the difference (|n| up to the window's half width),
 * the same in both modes.
 */
__device__ __forceinline__ float4 staged_entry(float2 a, float2 b, float n)
{
    const float mr = 0.5f * (a.x + b.x), mi = 0.5f * (a.y + b.y);
    const float dr = b.x - a.x, di = b.y - a.y;
    return make_float4(fmaf(-n, dr, mr), fmaf(-n, di, mi), dr, di);
}

//! The volume slice of this block (gridDim.z), read where it is used: volatile, so that
//! it is not hoisted into a register held through the pixel loop, where they are short.
__device__ __forceinline__ unsigned volume_slice()
{
    unsigned z;
    asm volatile("mov.u32 %0, %%ctaid.z;" : "=r"(z));
    return z;
}

/*!
 * The entries a tile needs from one pulse: round(b) of every pixel lies in [first, first
 * + count). With u the unit vector from the antenna to the tile centre and d a pixel's
 * offset, R - r lies between u.d and u.d + |d|^2 / (2 (r - |d|)), and |u.d| <= |ux| hx +
 * |uy| hy + |uz| hz: one bin more either side for the rounding of b, and never beyond
 * the window every tile is allotted (+-half, from |R - r| <= |d|).
 */
__device__ void entry_window(const bp_tile_ref& t,
                             const bp_pulse& p,
                             const grid_params& gp,
                             int& first,
                             int& count)
{
    int lo = -p.half, hi = p.half;
    if (t.r > 2 * gp.hd) {
        // hd^2 / r bounds the bend for r >= 2 hd.
        const double inv_r = t.inv_r;
        const double s =
            (fabs(t.ux) * gp.hx + fabs(t.uy) * gp.hy + fabs(t.uz) * gp.hz) * inv_r;
        const double bend = gp.hd * gp.hd * inv_r;
        lo = max(lo, int(floor((t.e - s) * p.inv_dr)) - 1);
        hi = min(hi, int(ceil((t.e + s + bend) * p.inv_dr)) + 1);
    }
    first = lo;
    count = hi - lo + 1;
}

/*!
 * The staging fields of a tile and pulse (the window entry_window gives); returns the
 * pixel loop's cbase for entries from slot_addr on.
 */
__device__ unsigned make_stage_fields(stage_fields& s,
                                      const bp_tile_ref& t,
                                      const bp_pulse& p,
                                      const grid_params& gp,
                                      unsigned slot_addr,
                                      const float2* pulse)
{
    entry_window(t, p, gp, s.first, s.count);
    s.pulse = pulse;
    // Far-away windows are clamped, still entirely outside [0, nbins).
    constexpr long long lim = 1LL << 30;
    const long long nlo = t.nref + s.first;
    s.nlo = int(nlo < -lim ? -lim : (nlo > lim ? lim : nlo));
    // Entry j (byte slot_addr + 16 j) holds the pair of round(b) = first + j, where
    // round(b) = bits(fb) - magic bits. Wraps mod 2^32 by design.
    return slot_addr - 16u * unsigned(s.first) - 16u * round_magic_bits;
}

//! The float range fields fast_consts and fixed_consts share: u2, sy and the series.
template <int SeriesTerms, template <int> class Consts>
__device__ __forceinline__ void make_float_range(Consts<SeriesTerms>& c,
                                                 const bp_tile_ref& t,
                                                 const bp_pulse& p,
                                                 const grid_params& gp)
{
    c.u2x = float(2 * t.ux);
    c.u2y = float(2 * t.uy);
    c.sy = float(2 * t.uy * gp.row_dy);
    c.bins = bp_make_range_terms<float, SeriesTerms>(t, p.inv_dr);
}

template <int SeriesTerms>
__device__ void make_consts(fast_consts<SeriesTerms>& c,
                            const bp_tile_ref& t,
                            const bp_pulse& p,
                            const grid_params& gp,
                            unsigned slot_addr,
                            const float2* pulse)
{
    make_float_range(c, t, p, gp);
    c.u2z = float(2 * t.uz);
    c.kdr = float(two_pi * p.kt * p.dr);
    c.ph = float(two_pi * t.pht);
    c.cbase = make_stage_fields(c.s, t, p, gp, slot_addr, pulse);
}

//! Turns (|v| < 2^19) as 32-bit fixed point of the fraction: the low word of v + 1.5
//! 2^20.
__device__ __forceinline__ unsigned fixed_turns(double v)
{
    return unsigned(__double2loint(v + turns_magic));
}

template <int SeriesTerms>
__device__ void make_consts(fixed_consts<SeriesTerms>& c,
                            const bp_tile_ref& t,
                            const bp_pulse& p,
                            const grid_params& gp,
                            unsigned slot_addr,
                            const float2* pulse)
{
    make_float_range(c, t, p, gp);
    c.kb = float(p.kt * p.dr);
    c.k = fixed_turns(t.pht + p.kt * t.e);
    const double kr = p.kt * t.inv_r;
    c.wx = fixed_turns(kr * t.ux * 0.5 * gp.dx);
    c.wy = fixed_turns(kr * t.uy * 0.5 * gp.dy);
    c.cbase = make_stage_fields(c.s, t, p, gp, slot_addr, pulse);
}

template <int SeriesTerms>
__device__ void make_consts(accurate_consts<SeriesTerms>& c,
                            const bp_tile_ref& t,
                            const bp_pulse& p,
                            const grid_params& gp,
                            unsigned slot_addr,
                            const float2* pulse)
{
    c.u2x = 2 * t.ux;
    c.u2y = 2 * t.uy;
    c.u2z = 2 * t.uz;
    c.sy = c.u2y * gp.row_dy;
    c.bins = bp_make_range_terms<double, SeriesTerms>(t, p.inv_dr);
    c.kb = p.kt * p.dr;
    c.b_turn = t.pht + turns_magic;
    c.cbase = make_stage_fields(c.s, t, p, gp, slot_addr, pulse);
}

/*!
 * Pixel k of a thread (tile coordinates): k < PixelsPerThread/2 in the tile's top half at
 * (tx, ty + rows k), pixel k + PixelsPerThread/2 its mirror image through the tile
 * centre, (31 - tx, 31 - ty - rows k). The mirror's offset from the centre is the
 * negative, so the pair shares |d|^2 (on a flat grid) and u2.d changes sign: one u2.d and
 * two adds give both q.
 */
template <int PixelsPerThread>
__device__ __forceinline__ int pixel_col(int k, int tx)
{
    return k < PixelsPerThread / 2 ? tx : bp_tile - 1 - tx;
}
template <int PixelsPerThread>
__device__ __forceinline__ int pixel_row(int k, int ty)
{
    constexpr int rows = bp_tile / PixelsPerThread; // thread rows of the top half
    return k < PixelsPerThread / 2 ? ty + rows * k
                                   : bp_tile - 1 - ty - rows * (k - PixelsPerThread / 2);
}

//! 1.5 plus a fraction of a turn given as 32-bit fixed point: its top 23 bits into the
//! mantissa of 1.5 (exact), the phase plus 1.5 turns.
__device__ __forceinline__ float one_and_half_plus(int frac)
{
    return __int_as_float(int(one_and_half_bits) + (frac >> 9));
}

//! sin and cos of a phase given in turns plus 1.5 (one_and_half_plus): the half turn
//! negates both, and they are negated back (the negations fold into the FMAs' signs).
__device__ __forceinline__ void sincos_offset_turns(float turns, float& sn, float& cs)
{
    __sincosf(turns * float(two_pi), &sn, &cs);
    sn = -sn;
    cs = -cs;
}

} // namespace gpuradar::kernels::detail::bp_cuda

#endif
