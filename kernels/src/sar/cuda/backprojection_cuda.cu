/*
 * CUDA backprojection.
 *
 * One thread block per 32 x 32-pixel image tile (Chapman et al.: image tiles need no
 * reduction and reuse each staged range bin many times). The block walks the pulses in
 * steps of P: warp 0 computes, one thread per pulse and in double, the tile's reference
 * range and phase for that pulse (backprojection_backends.h) and the window of bins its
 * pixels reach (entry_window) into shared memory; all threads then stage the step's
 * windows as pairs of neighbouring bins (float4), zero outside the swath; then every
 * thread backprojects the step's pulses onto its 8 pixels: 4 in the tile's top half
 * (rows ty, ty + 4, ...; a warp covers one tile row) and their mirror images through the
 * tile centre (pixel_row), whose q share |d|^2 and u2.d up to its sign.
 *
 * Per pixel and pulse, SASS of the sm_90 build (`fast`, series of order 2, flat grid),
 * 17.5 instructions: q: FADD |d|^2 +- u2.d, u2.d (FFMA k sy + u2.(dx, dy0)) once per
 * mirrored pair; b = dR'/dr: 3 FFMA (bp_delta_range, its coefficients in bins); FADD
 * (round(b) held in the low mantissa bits by adding 1.5*2^23); LEA + LDS.128 (the pair's
 * midpoint minus round(b) times its difference, and the difference); 2 FFMA interpolate
 * (no b - round(b): it is in the staged midpoint); phase: FFMA, then __sincosf =
 * FMUL.RZ + MUFU.SIN + MUFU.COS; 4 FFMA accumulate. The staged midpoint costs up to
 * |round(b)| roundings of the difference (1-4 dB of SER in `fast`).
 *
 * `accurate` (arith): where bp_prepare's bend bound allows (fixed_phase), q and b as in
 * `fast` (the series split as e + c0 q + q^2 h(q)) and the phase as its part linear in
 * the pixel offset in 32-bit fixed-point turns (an integer add a pixel) plus the bend,
 * c0 |d|^2 + q^2 h(q), in float: 23.5 instructions, no FP64. Elsewhere (double_range) q
 * and dR' in double (1.5 + N + 1 DFMA, which issue at half rate), b converted once (F2F),
 * the phase one DFMA whose result, offset by 1.5*2^20, holds the fraction of a turn as
 * 32-bit fixed point in its low word. Both then put the fraction's top 23 bits into the
 * mantissa of 1.5 and take one FMUL to radians.
 */
#include "common/cuda/cuda_check.h"
#include "common/param_check.h"
#include "sar/backprojection_backends.h"
#include <cuda_runtime.h>
#include <type_traits>
#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace gpuradar::kernels::detail {
namespace {

constexpr const char* who = "gpuradar::backprojection";

//! Pixels per thread (pixel_row; 128 threads per tile): 8 gives each thread 8
//! independent chains (ILP) and amortises the per-pulse constants over 8 pixels (4, with
//! 256 threads a tile, was slower in both modes).
constexpr int px_per_thread = 8;
/*!
 * The arithmetic of a launch. `single`: `fast`, all in float. `fixed_phase`: `accurate`
 * on a flat grid whose series converges and whose bend_turns is small: the range and
 * bin as in `fast`, the phase as its part linear in the pixel offset, kt u.d / r, exact
 * in 32-bit fixed-point turns (integer adds), plus the rest, under bend_turns, in float.
 * `double_range`: `accurate` otherwise, q, dR' and the phase in double.
 */
enum class arith { single, fixed_phase, double_range };

//! Resident blocks per SM the register budget must allow (65536 / (128 x blocks)
//! registers per thread): 7 in `single` (72 registers, 28 warps per SM; 6 was slower, 8
//! spills), 5 with a height map (one more value per pixel; 6 spills); 7 in
//! `fixed_phase`; 5 in `double_range` (96: its pixels hold doubles; 6 was slower on
//! BP-S), 4 with a height map.
constexpr int min_blocks(arith a, bool height)
{
    switch (a) {
    case arith::single:
        return height ? 5 : 7;
    case arith::fixed_phase:
        return 7;
    default:
        return height ? 4 : 5;
    }
}
//! Most pulses staged per block step: 32 amortises the three barriers per step, and
//! warp 0 makes a step's constants, one lane per pulse.
constexpr int max_pulses_per_step = 32;
//! 1.5 * 2^23: adding it rounds a float to an integer kept in the low mantissa bits.
constexpr float round_magic = 12582912.0f;
constexpr unsigned round_magic_bits = 0x4B400000u;
//! 1.5f: its mantissa plus a signed 23-bit fraction gives 1.5 + that fraction.
constexpr unsigned one_and_half_bits = 0x3FC00000u;
//! 1.5 * 2^20: a double in [2^20, 2^21) has a mantissa LSB of 2^-32, so its low word is
//! the fraction of a phase in turns as 32-bit fixed point.
constexpr double turns_magic = 1572864.0;
//! Pulses per host-to-device block in run_host_pulses: ~16 MiB per copy.
constexpr std::size_t stream_block_bytes = 16u << 20;
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
template <int N>
struct alignas(16) fast_consts {
    float u2x, u2y;
    float kdr, ph;                 // rad per bin; phase of r_ref (rad)
    bp_range_terms<float, N> bins; // dR' in bins
    unsigned cbase; // byte address of entry (round(b) = 0) minus 16 * magic bits
    float u2z;
    float sy; // u2y times the offset between a thread's pixel rows (grid_params)
    stage_fields s;
};
template <int N>
struct alignas(16) fixed_consts {
    float u2x, u2y;
    float sy;                      // as in fast_consts
    float kb;                      // 2 f0 dr / c (turns per bin)
    bp_range_terms<float, N> bins; // dR' in bins
    unsigned cbase;
    unsigned k;      // phase of r_ref + kt e (turns), 32-bit fixed point
    unsigned wx, wy; // kt u.x/r dx/2 and kt u.y/r dy/2 (turns a half pixel), the same
    stage_fields s;
};
template <int N>
struct alignas(16) accurate_consts {
    double u2x, u2y;
    double sy; // u2y times the offset between a thread's pixel rows (grid_params)
    double u2z;
    bp_range_terms<double, N> bins; // dR' in bins
    double kb;                      // 2 f0 dr / c (turns per bin)
    double b_turn;                  // phase of r_ref (turns) + turns_magic
    unsigned cbase;
    stage_fields s;
};

template <arith A, int N>
using consts_t = std::conditional_t<
    A == arith::single,
    fast_consts<N>,
    std::conditional_t<A == arith::fixed_phase, fixed_consts<N>, accurate_consts<N>>>;
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

/*
 * The pre-pass of every launch: block b counts the non-finite samples of the pulse of
 * record b, adds the count to the run's device counter and flags the launch in `found`
 * (then the staging zeroes them; a clean launch stages without the test). It reads each
 * used pulse once: small next to the backprojection, which reads each staged bin for
 * every tile.
 */
__global__ void __launch_bounds__(256)
    count_nonfinite(const float2* __restrict__ pulses,
                    int nbins,
                    const bp_pulse* __restrict__ records,
                    int index_base,
                    unsigned long long* counter,
                    unsigned* found)
{
    __shared__ int total;
    if (threadIdx.x == 0)
        total = 0;
    __syncthreads();
    const float2* src =
        pulses + std::size_t(records[blockIdx.x].index - index_base) * std::size_t(nbins);
    int n = 0;
    for (int k = threadIdx.x; k < nbins; k += blockDim.x) {
        const float2 v = __ldg(src + k);
        n += !(isfinite(v.x) && isfinite(v.y));
    }
    if (n != 0) // rare: no reduction needed
        atomicAdd(&total, n);
    __syncthreads();
    if (threadIdx.x == 0 && total != 0) {
        atomicAdd(counter, static_cast<unsigned long long>(total));
        *found = 1u; // the kernel of this launch zeroes while it stages
    }
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
template <int N, template <int> class Consts>
__device__ __forceinline__ void make_float_range(Consts<N>& c,
                                                 const bp_tile_ref& t,
                                                 const bp_pulse& p,
                                                 const grid_params& gp)
{
    c.u2x = float(2 * t.ux);
    c.u2y = float(2 * t.uy);
    c.sy = float(2 * t.uy * gp.row_dy);
    c.bins = bp_make_range_terms<float, N>(t, p.inv_dr);
}

template <int N>
__device__ void make_consts(fast_consts<N>& c,
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

template <int N>
__device__ void make_consts(fixed_consts<N>& c,
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

template <int N>
__device__ void make_consts(accurate_consts<N>& c,
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
    c.bins = bp_make_range_terms<double, N>(t, p.inv_dr);
    c.kb = p.kt * p.dr;
    c.b_turn = t.pht + turns_magic;
    c.cbase = make_stage_fields(c.s, t, p, gp, slot_addr, pulse);
}

//! The step's widest window and, for i / wstep as a multiply-high (exact while total *
//! wstep^2 < 2^32, np <= 32), its magic: made once by warp 0, read by all.
struct step_window {
    int wstep;
    unsigned magic;
};

/*!
 * Stages the entries of a step's np pulses, spread over all nthreads threads as one flat
 * range of np x wstep (wstep: the step's widest window; entries past a pulse's own
 * window are skipped). Sanitize: non-finite samples count as zero (launches whose
 * pre-pass found one).
 */
template <bool Sanitize, typename Consts>
__device__ void stage_entries(const Consts* sc,
                              int np,
                              step_window sw,
                              int width,
                              int nbins,
                              int nthreads,
                              float4* entries)
{
    const int wstep = sw.wstep;
    const int total = np * wstep;
    const bool by_magic = wstep < 512;
    const unsigned magic = sw.magic;
    for (int i = threadIdx.x; i < total; i += nthreads) {
        const int p = by_magic ? int(__umulhi(unsigned(i), magic)) : i / wstep;
        const int j = i - p * wstep;
        const stage_fields& c = sc[p].s;
        if (j >= c.count)
            continue;
        const int n = c.nlo + j;
        float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        if (n >= 0 && n <= nbins - 2) {
            float2 a = __ldg(c.pulse + n), b = __ldg(c.pulse + n + 1);
            if (Sanitize) {
                a = finite_or_zero(a);
                b = finite_or_zero(b);
            }
            v = staged_entry(a, b, float(c.first + j));
        }
        entries[p * width + j] = v;
    }
}

/*!
 * Pixel k of a thread (tile coordinates): k < PX/2 in the tile's top half at (tx, ty +
 * rows k), pixel k + PX/2 its mirror image through the tile centre, (31 - tx, 31 - ty -
 * rows k). The mirror's offset from the centre is the negative, so the pair shares |d|^2
 * (on a flat grid) and u2.d changes sign: one u2.d and two adds give both q.
 */
template <int PX>
__device__ __forceinline__ int pixel_col(int k, int tx)
{
    return k < PX / 2 ? tx : bp_tile - 1 - tx;
}
template <int PX>
__device__ __forceinline__ int pixel_row(int k, int ty)
{
    constexpr int rows = bp_tile / PX; // thread rows of the top half
    return k < PX / 2 ? ty + rows * k : bp_tile - 1 - ty - rows * (k - PX / 2);
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

/*
 * A => the arithmetic (arith); N => series terms (0: exact formula); H => height map;
 * PX => pixels per thread.
 */
template <arith A, int N, bool H, int PX>
__global__ void __launch_bounds__(bp_tile* bp_tile / PX, min_blocks(A, H))
    backproject(const float2* __restrict__ pulses,
                int nbins,
                const bp_pulse* __restrict__ records,
                int nrec,
                int index_base,
                int step,  // pulses per block step (P)
                int width, // staged entries per pulse (W)
                grid_params gp,
                const unsigned* __restrict__ nonfinite_found, // set by the pre-pass
                float2* __restrict__ image)
{
    static_assert(A != arith::fixed_phase || (N > 0 && !H), "fixed_phase: flat, series");
    constexpr bool in_double = A == arith::double_range; // doubles in the pixel loop
    using consts = consts_t<A, N>;
    constexpr int nthreads = bp_tile * bp_tile / PX;
    extern __shared__ float4 smem[];
    consts* sc = reinterpret_cast<consts*>(smem);
    float4* entries = smem + step * (consts_bytes(A) / sizeof(float4));
    const unsigned entries_addr = unsigned(__cvta_generic_to_shared(entries));

    const bool sanitize = *nonfinite_found != 0u; // the same for every thread
    const int tx = threadIdx.x % bp_tile, ty = threadIdx.x / bp_tile;
    const int tile_x = blockIdx.x, tile_y = blockIdx.y;
    const double cx = gp.x0 + (double(tile_x) * bp_tile + bp_tile_centre) * gp.dx;
    const double cy = gp.y0 + (double(tile_y) * bp_tile + bp_tile_centre) * gp.dy;
    const double cz = H ? gp.tile_z[tile_y * gp.ntx + tile_x] : gp.z;

    // Pixel offsets from the tile centre, float in `fast`, double in `accurate`; of dy
    // only the first row's (row k adds k sy to u2.d): registers are short. Pixel k +
    // PX/2 mirrors pixel k (pixel_row): a flat grid keeps one |d|^2 for both.
    using real = std::conditional_t<in_double, double, float>;
    constexpr int half = PX / 2;
    constexpr int nd2 = H ? PX : half;
    const double ddx = (double(tx) - bp_tile_centre) * gp.dx;
    const real dx = real(ddx);
    const real dy0 = real((double(ty) - bp_tile_centre) * gp.dy);
    real d2[nd2], dz[H ? PX : 1];
    float accr[PX], acci[PX];
#pragma unroll
    for (int k = 0; k < PX; ++k) {
        const int lx = pixel_col<PX>(k, tx), ly = pixel_row<PX>(k, ty);
        const int ix = tile_x * bp_tile + lx, iy = tile_y * bp_tile + ly;
        const double ddy = (double(ly) - bp_tile_centre) * gp.dy;
        const double ddxk = (double(lx) - bp_tile_centre) * gp.dx;
        double ddz = 0;
        if (H && ix < gp.nx && iy < gp.ny) {
            const std::size_t i = std::size_t(iy) * gp.nx + ix;
            ddz = in_double ? gp.dz_d[i] : double(gp.dz_f[i]);
        }
        if (H)
            dz[k] = real(ddz);
        if (k < nd2)
            d2[k] = real(ddxk * ddxk + ddy * ddy + ddz * ddz);
        accr[k] = 0.0f;
        acci[k] = 0.0f;
    }

    __shared__ step_window step_width; // the widest window of the step's pulses
    for (int pb = 0; pb < nrec; pb += step) {
        const int np = min(step, nrec - pb);
        __syncthreads(); // the previous step's constants and entries are no longer read
        if (threadIdx.x < 32) { // np <= 32: warp 0 makes the constants
            int w = 0;
            if (int(threadIdx.x) < np) {
                const bp_pulse p = records[pb + threadIdx.x];
                // Volume slice z: the same tile, z * dz higher.
                const bp_tile_ref t =
                    bp_reference(p, cx, cy, fma(double(volume_slice()), gp.slice_dz, cz));
                // Made in registers and stored once: stores into shared memory keep
                // their source order, which lengthens the chain that the other warps
                // wait for at the next barrier.
                consts c;
                make_consts(c,
                            t,
                            p,
                            gp,
                            entries_addr + 16u * unsigned(threadIdx.x * width),
                            pulses +
                                std::size_t(p.index - index_base) * std::size_t(nbins));
                sc[threadIdx.x] = c;
                w = c.s.count;
            }
            for (int o = 16; o > 0; o >>= 1)
                w = max(w, __shfl_xor_sync(0xFFFFFFFFu, w, o));
            if (threadIdx.x == 0)
                step_width = { w, 0xFFFFFFFFu / unsigned(max(w, 1)) + 1u };
        }
        __syncthreads();
        if (sanitize)
            stage_entries<true>(sc, np, step_width, width, nbins, nthreads, entries);
        else
            stage_entries<false>(sc, np, step_width, width, nbins, nthreads, entries);
        // The next step's records: into L1 while this step computes (warp 0 reads them).
        if (int(threadIdx.x) < min(step, nrec - pb - step))
            asm volatile(
                "prefetch.global.L1 [%0];" ::"l"(records + pb + step + threadIdx.x));
        __syncthreads();
        for (int p = 0; p < np; ++p) {
            const consts& cc = sc[p];
            const unsigned cbase = cc.cbase;
            const real l0 = fma(dx, cc.u2x, dy0 * cc.u2y); // u2 . (dx, dy0)
            unsigned lin0 = 0; // fixed_phase: kt u.d / r of pixel 0, fixed-point turns
            if constexpr (A == arith::fixed_phase)
                lin0 = unsigned(2 * tx - (bp_tile - 1)) * cc.wx +
                       unsigned(2 * ty - (bp_tile - 1)) * cc.wy;
#pragma unroll
            for (int k = 0; k < PX; ++k) {
                // u2.d of pixel k (of its mirror: the negative)
                const int kk = k % half;
                const real l = kk == 0 ? l0 : fma(real(kk), cc.sy, l0);
                real q = k < half ? d2[k % nd2] + l : d2[k % nd2] - l;
                if constexpr (H)
                    q = fma(dz[k], cc.u2z, q);
                float b, sn, cs;
                if constexpr (A == arith::single) {
                    b = bp_delta_range(q, cc.bins); // dR'/dr
                    __sincosf(fmaf(b, cc.kdr, cc.ph), &sn, &cs);
                } else if constexpr (A == arith::fixed_phase) {
                    // dR'/dr = e + c0 q + q^2 h(q); the bend, c0 |d|^2 + q^2 h(q), is
                    // what the phase adds to its linear part, c0 u2.d.
                    float h = cc.bins.c[N];
#pragma unroll
                    for (int n = N - 1; n >= 1; --n)
                        h = fmaf(q, h, cc.bins.c[n]);
                    const float qq = q * q;
                    b = fmaf(qq, h, fmaf(q, cc.bins.c[0], cc.bins.e));
                    const float bend = fmaf(qq, h, d2[k % nd2] * cc.bins.c[0]);
                    // Pixel row ty + rows kk is 2 rows kk half pixels below pixel 0.
                    const unsigned lin = lin0 + unsigned(2 * (bp_tile / PX) * kk) * cc.wy;
                    const unsigned ph = k < half ? cc.k + lin : cc.k - lin;
                    sincos_offset_turns(
                        fmaf(bend, cc.kb, one_and_half_plus(int(ph))), sn, cs);
                } else {
                    const double bd = bp_delta_range(q, cc.bins);
                    b = float(bd);
                    // The low word: the fraction of a turn as 32-bit fixed point.
                    const int frac = __double2loint(fma(bd, cc.kb, cc.b_turn));
                    sincos_offset_turns(one_and_half_plus(frac), sn, cs);
                }
                // round(b) in the low mantissa bits of fb (no FMA may absorb the add: its
                // rounding is the point).
                const float fb = __fadd_rn(b, round_magic);
                const float4 en = lds128((__float_as_uint(fb) << 4) + cbase);
                const float vr = fmaf(b, en.z, en.x), vi = fmaf(b, en.w, en.y);
                accr[k] = fmaf(vr, cs, fmaf(-vi, sn, accr[k]));
                acci[k] = fmaf(vr, sn, fmaf(vi, cs, acci[k]));
            }
        }
    }
#pragma unroll
    for (int k = 0; k < PX; ++k) {
        const int ix = tile_x * bp_tile + pixel_col<PX>(k, tx);
        const int iy = tile_y * bp_tile + pixel_row<PX>(k, ty);
        if (ix < gp.nx && iy < gp.ny) {
            // Slice z is one image further on.
            float2* o = image + std::size_t(volume_slice()) * gp.slice_pixels +
                        std::size_t(iy) * gp.nx + ix;
            float2 v = *o;
            v.x += accr[k];
            v.y += acci[k];
            *o = v;
        }
    }
}

//! Tile rows a launch can take (gridDim.y).
constexpr long long max_tile_rows = 65535;

class backprojection_cuda final : public bp_backend
{
public:
    backprojection_cuda(const image_grid& g, std::size_t nbins, precision p, stream_ref s)
        : bp_backend(g, nbins, p), d_stream(native(s))
    {
        d_counter = device_memory(sizeof(unsigned long long));
        d_found = device_memory(sizeof(unsigned));
        fill_bytes_async(d_counter.get(), 0, d_counter.size(), s, who);
        d_counter_host = pinned_memory(sizeof(unsigned long long));
        int dev = 0;
        GPURADAR_CUDA_CHECK(who, cudaGetDevice(&dev));
        GPURADAR_CUDA_CHECK(
            who,
            cudaDeviceGetAttribute(
                &d_smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
        GPURADAR_CUDA_CHECK(
            who,
            cudaDeviceGetAttribute(
                &d_smem_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev));
        GPURADAR_CUDA_CHECK(
            who,
            cudaDeviceGetAttribute(
                &d_smem_reserved, cudaDevAttrReservedSharedMemoryPerBlock, dev));
        if (d_layout.has_height) {
            d_tile_z = device_memory(d_layout.tile_z.size() * sizeof(double));
            copy_async(d_tile_z.get(),
                       d_layout.tile_z.data(),
                       d_tile_z.size(),
                       copy_kind::host_to_device,
                       s,
                       who);
            if (p == precision::accurate) {
                d_dz = device_memory(d_layout.dz.size() * sizeof(double));
                copy_async(d_dz.get(),
                           d_layout.dz.data(),
                           d_dz.size(),
                           copy_kind::host_to_device,
                           s,
                           who);
            } else {
                std::vector<float> dzf(d_layout.dz.begin(), d_layout.dz.end());
                d_dz = device_memory(dzf.size() * sizeof(float));
                copy_async(d_dz.get(),
                           dzf.data(),
                           d_dz.size(),
                           copy_kind::host_to_device,
                           s,
                           who);
            }
            // The host vectors above are pageable: finish before they go away.
            GPURADAR_CUDA_CHECK(who, cudaStreamSynchronize(d_stream));
        }
    }

    void run(const cfloat* pulses,
             const double* geometry,
             std::size_t npulses,
             cfloat* image) override
    {
        bp_prepared prep;
        if (!begin_run(pulses, geometry, npulses, image, prep))
            return;
        upload_records(prep.pulses);
        launch(pulses, 0, int(prep.pulses.size()), 0, prep, image);
    }

    std::size_t nonfinite_samples() const override
    {
        GPURADAR_CUDA_CHECK(who,
                            cudaMemcpyAsync(d_counter_host.get(),
                                            d_counter.get(),
                                            sizeof(unsigned long long),
                                            cudaMemcpyDeviceToHost,
                                            d_stream));
        GPURADAR_CUDA_CHECK(who, cudaStreamSynchronize(d_stream));
        return std::size_t(*d_counter_host.as<unsigned long long>());
    }

    void nonfinite_samples_async(std::uint64_t* count) const override
    {
        static_assert(sizeof(std::uint64_t) == sizeof(unsigned long long),
                      "the device counter is copied as it is");
        GPURADAR_CUDA_CHECK(who,
                            cudaMemcpyAsync(count,
                                            d_counter.get(),
                                            sizeof(std::uint64_t),
                                            cudaMemcpyDeviceToHost,
                                            d_stream));
    }

    void run_host_pulses(const cfloat* host_pulses,
                         const double* geometry,
                         std::size_t npulses,
                         cfloat* image) override
    {
        bp_prepared prep;
        if (!begin_run(host_pulses, geometry, npulses, image, prep))
            return;
        upload_records(prep.pulses);
        const std::size_t pulse_bytes = d_nbins * sizeof(cfloat);
        const std::size_t block =
            std::max<std::size_t>(1, stream_block_bytes / pulse_bytes);
        if (!d_copy_stream) {
            d_copy_stream.emplace();
            for (int i = 0; i < 2; ++i) {
                d_stage[i] = device_memory(block * pulse_bytes);
                d_copied[i].emplace();
                d_consumed[i].emplace();
                d_staged[i].emplace();
            }
            d_block = block;
        }
        cudaPointerAttributes attr{};
        const bool pinned = cudaPointerGetAttributes(&attr, host_pulses) == cudaSuccess &&
                            attr.type == cudaMemoryTypeHost;
        cudaGetLastError(); // pageable memory may leave an error from the query
        if (!pinned && d_pinned_stage[0].size() == 0)
            for (auto& b : d_pinned_stage)
                b = pinned_memory(d_block * pulse_bytes);
        const cudaStream_t cs = native(d_copy_stream->ref());
        std::size_t rec = 0;
        int slot = 0;
        for (std::size_t first = 0; first < npulses; first += d_block, slot ^= 1) {
            const std::size_t n = std::min(d_block, npulses - first);
            // Kernels of this slot's previous block must be done with its device buffer.
            d_consumed[slot]->make_stream_wait(d_copy_stream->ref());
            const void* src = host_pulses + first * d_nbins;
            if (!pinned) {
                // The previous copy out of this pinned buffer must be done before
                // refilling.
                d_staged[slot]->synchronize();
                std::memcpy(d_pinned_stage[slot].get(), src, n * pulse_bytes);
                src = d_pinned_stage[slot].get();
            }
            GPURADAR_CUDA_CHECK(who,
                                cudaMemcpyAsync(d_stage[slot].get(),
                                                src,
                                                n * pulse_bytes,
                                                cudaMemcpyHostToDevice,
                                                cs));
            d_staged[slot]->record(d_copy_stream->ref());
            d_copied[slot]->record(d_copy_stream->ref());
            // The records are sorted by pulse index: those of this block are contiguous.
            std::size_t end = rec;
            while (end < prep.pulses.size() &&
                   std::size_t(prep.pulses[end].index) < first + n)
                ++end;
            d_copied[slot]->make_stream_wait(stream_ref(d_stream));
            if (end > rec)
                launch(d_stage[slot].as<cfloat>(),
                       rec,
                       int(end - rec),
                       int(first),
                       prep,
                       image);
            d_consumed[slot]->record(stream_ref(d_stream));
            rec = end;
        }
        // The caller's (pinned) buffer is read asynchronously: return once it is copied.
        GPURADAR_CUDA_CHECK(who, cudaStreamSynchronize(cs));
    }

private:
    void upload_records(const std::vector<bp_pulse>& recs)
    {
        const std::size_t bytes = recs.size() * sizeof(bp_pulse);
        if (d_records_host.size() < bytes) {
            // Grow (rare): the old buffers may still be read by queued work.
            GPURADAR_CUDA_CHECK(who, cudaStreamSynchronize(d_stream));
            d_records_host = pinned_memory(bytes);
            d_records = device_memory(bytes);
        } else if (d_records_pending) {
            // The previous copy out of the pinned buffer must be done before refilling.
            d_records_copied.synchronize();
        }
        std::memcpy(d_records_host.get(), recs.data(), bytes);
        GPURADAR_CUDA_CHECK(who,
                            cudaMemcpyAsync(d_records.get(),
                                            d_records_host.get(),
                                            bytes,
                                            cudaMemcpyHostToDevice,
                                            d_stream));
        d_records_copied.record(stream_ref(d_stream));
        d_records_pending = true;
    }

    //! One launch of the backprojection kernel.
    struct launch_args {
        const cfloat* pulses;
        const bp_pulse* recs;
        int nrec, index_base, step, width;
        std::size_t smem;
        cfloat* image;
    };

    template <arith A, int N, bool H>
    void launch_one(const launch_args& a)
    {
        constexpr int px = px_per_thread;
        constexpr bool dz_double = A == arith::double_range;
        auto kernel = backproject<A, N, H, px>;
        if (a.smem > 48 * 1024)
            GPURADAR_CUDA_CHECK(
                who,
                cudaFuncSetAttribute(
                    kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(a.smem)));
        grid_params gp;
        gp.x0 = d_grid.x0;
        gp.y0 = d_grid.y0;
        gp.dx = d_grid.dx;
        gp.dy = d_grid.dy;
        gp.z = d_layout.z;
        gp.slice_dz = d_grid.dz;
        gp.hx = d_layout.hx;
        gp.hy = d_layout.hy;
        gp.hz = d_layout.hz;
        gp.hd = d_layout.hd;
        gp.row_dy = (bp_tile / px) * d_grid.dy;
        gp.slice_pixels = std::size_t(d_grid.nx) * std::size_t(d_grid.ny);
        gp.nx = int(d_grid.nx);
        gp.ny = int(d_grid.ny);
        gp.ntx = int(d_layout.ntx);
        gp.tile_z = d_tile_z.as<double>();
        gp.dz_f = dz_double ? nullptr : d_dz.as<float>();
        gp.dz_d = dz_double ? d_dz.as<double>() : nullptr;
        const dim3 grid(
            unsigned(d_layout.ntx), unsigned(d_layout.nty), unsigned(d_grid.nz));
        kernel<<<grid, bp_tile * bp_tile / px, a.smem, d_stream>>>(
            reinterpret_cast<const float2*>(a.pulses),
            int(d_nbins),
            a.recs,
            a.nrec,
            a.index_base,
            a.step,
            a.width,
            gp,
            d_found.as<unsigned>(),
            reinterpret_cast<float2*>(a.image));
        GPURADAR_CUDA_CHECK_LAUNCH(who, "backproject");
    }

    template <arith A, bool H>
    void launch_terms(int terms, const launch_args& a)
    {
        switch (terms) {
        case 2:
            return launch_one<A, 2, H>(a);
        case 4:
            return launch_one<A, 4, H>(a);
        default: // the exact formula; never fixed_phase (arith_of)
            if constexpr (A != arith::fixed_phase)
                return launch_one<A, 0, H>(a);
        }
    }

    //! The arithmetic of a run (arith): fixed_phase where its conditions hold.
    arith arith_of(const bp_prepared& prep) const
    {
        if (d_precision != precision::accurate)
            return arith::single;
        const bool fixed = prep.series_terms > 0 && !d_layout.has_height &&
                           prep.bend_turns <= bp_float_bend_max_turns;
        return fixed ? arith::fixed_phase : arith::double_range;
    }

    /*!
     * Backprojects records [first_rec, first_rec + nrec) of the uploaded records, whose
     * pulses start at pulse index_base of `pulses`: the non-finite pre-pass, then the
     * kernel.
     */
    void launch(const cfloat* pulses,
                std::size_t first_rec,
                int nrec,
                int index_base,
                const bp_prepared& prep,
                cfloat* image)
    {
        const arith ar = arith_of(prep);
        const long long width = 2LL * prep.max_half + 1;
        const long long per_pulse =
            (long long)consts_bytes(ar) + width * (long long)sizeof(float4);
        if (per_pulse > d_smem_optin)
            throw cuda_error(
                std::string(who) + ": a 32x32-pixel tile reaches " +
                std::to_string(width) +
                " range bins per pulse (pixel spacing far "
                "larger than the bin spacing), more than fit in shared memory; "
                "use the CPU backend or a finer pixel grid");
        // As many pulses a step as let min_blocks blocks share an SM.
        const long long target =
            d_smem_sm / min_blocks(ar, d_layout.has_height) - d_smem_reserved;
        const int step = int(std::clamp<long long>(
            target / per_pulse,
            1,
            std::min<long long>(max_pulses_per_step, d_smem_optin / per_pulse)));
        launch_args a;
        a.pulses = pulses;
        a.recs = d_records.as<bp_pulse>() + first_rec;
        a.nrec = nrec;
        a.index_base = index_base;
        a.step = step;
        a.width = int(width);
        a.smem = std::size_t(step) * std::size_t(per_pulse);
        a.image = image;
        fill_bytes_async(d_found.get(), 0, d_found.size(), stream_ref(d_stream), who);
        count_nonfinite<<<unsigned(nrec), 256, 0, d_stream>>>(
            reinterpret_cast<const float2*>(pulses),
            int(d_nbins),
            a.recs,
            index_base,
            d_counter.as<unsigned long long>(),
            d_found.as<unsigned>());
        GPURADAR_CUDA_CHECK_LAUNCH(who, "count_nonfinite");
        // The launch_terms instance for (arithmetic, has height); fixed_phase is flat.
        using launcher = void (backprojection_cuda::*)(int, const launch_args&);
        static constexpr launcher launchers[3][2] = {
            { &backprojection_cuda::launch_terms<arith::single, false>,
              &backprojection_cuda::launch_terms<arith::single, true> },
            { &backprojection_cuda::launch_terms<arith::fixed_phase, false>, nullptr },
            { &backprojection_cuda::launch_terms<arith::double_range, false>,
              &backprojection_cuda::launch_terms<arith::double_range, true> }
        };
        (this->*launchers[int(ar)][d_layout.has_height])(prep.series_terms, a);
    }

    const cudaStream_t d_stream;
    int d_smem_optin = 48 * 1024;
    int d_smem_sm = 0, d_smem_reserved = 0; // per SM; reserved per block
    device_memory d_tile_z, d_dz;
    // Non-finite samples counted on the device since construction; its host copy.
    device_memory d_counter;
    mutable pinned_memory d_counter_host;
    device_memory d_found; //!< set by a launch's pre-pass when its pulses have one
    pinned_memory d_records_host;
    device_memory d_records;
    cuda_event d_records_copied;
    bool d_records_pending = false;
    // run_host_pulses: a copy stream and two device/pinned buffers used in turn.
    std::optional<cuda_stream> d_copy_stream;
    std::size_t d_block = 0;
    device_memory d_stage[2];
    pinned_memory d_pinned_stage[2];
    std::optional<cuda_event> d_copied[2], d_consumed[2], d_staged[2];
};

} // namespace

std::unique_ptr<backprojection> make_backprojection_cuda(const image_grid& g,
                                                         std::size_t nbins,
                                                         backprojection::precision p,
                                                         stream_ref s)
{
    // Before anything is made: tile rows are a grid dimension.
    if ((g.ny + bp_tile - 1) / bp_tile > max_tile_rows)
        throw_invalid(
            "backprojection", "ny", "at most 65535 x 32 = 2097120 rows on CUDA", g.ny);
    return std::make_unique<backprojection_cuda>(g, nbins, p, s);
}

} // namespace gpuradar::kernels::detail
