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
 * and dR' in double (1.5 + SeriesTerms + 1 DFMA, which issue at half rate), b converted
 * once (F2F), the phase one DFMA whose result, offset by 1.5*2^20, holds the fraction of
 * a turn as 32-bit fixed point in its low word. Both then put the fraction's top 23 bits
 * into the mantissa of 1.5 and take one FMUL to radians.
 *
 * The maths these kernels share with warp 0's constants is in
 * backprojection_cuda_maths.cuh; the host side (launch shape, shared-memory sizing, the
 * pulse upload) in backprojection_cuda.cu, the one file that includes this one.
 */
#ifndef INCLUDED_GPURADAR_KERNELS_BACKPROJECTION_CUDA_KERNELS_CUH
#define INCLUDED_GPURADAR_KERNELS_BACKPROJECTION_CUDA_KERNELS_CUH

#include "sar/cuda/backprojection_cuda_maths.cuh"
#include <cuda_runtime.h>
#include <type_traits>
#include <cstddef>

namespace gpuradar::kernels::detail::bp_cuda {

//! Pixels per thread (pixel_row; 128 threads per tile): 8 gives each thread 8
//! independent chains (ILP) and amortises the per-pulse constants over 8 pixels (4, with
//! 256 threads a tile, was slower in both modes).
constexpr int px_per_thread = 8;

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
 * The backprojection of records [0, nrec) onto one tile (blockIdx.x, blockIdx.y) of
 * volume slice blockIdx.z, added into `image`. Arith: the arithmetic (arith);
 * SeriesTerms: terms of the series of dR' (0: the exact formula); HeightMap: pixels at
 * the heights of gp.tile_z and gp.dz_*; PixelsPerThread: pixels per thread (pixel_row).
 */
template <arith Arith, int SeriesTerms, bool HeightMap, int PixelsPerThread>
__global__ void __launch_bounds__(bp_tile* bp_tile / PixelsPerThread,
                                  min_blocks(Arith, HeightMap))
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
    static_assert(Arith != arith::fixed_phase || (SeriesTerms > 0 && !HeightMap),
                  "fixed_phase: flat, series");
    constexpr bool in_double = Arith == arith::double_range; // doubles in the pixel loop
    using consts = consts_t<Arith, SeriesTerms>;
    constexpr int nthreads = bp_tile * bp_tile / PixelsPerThread;
    extern __shared__ float4 smem[];
    consts* sc = reinterpret_cast<consts*>(smem);
    float4* entries = smem + step * (consts_bytes(Arith) / sizeof(float4));
    const unsigned entries_addr = unsigned(__cvta_generic_to_shared(entries));

    const bool sanitize = *nonfinite_found != 0u; // the same for every thread
    const int tx = threadIdx.x % bp_tile, ty = threadIdx.x / bp_tile;
    const int tile_x = blockIdx.x, tile_y = blockIdx.y;
    const double cx = gp.x0 + (double(tile_x) * bp_tile + bp_tile_centre) * gp.dx;
    const double cy = gp.y0 + (double(tile_y) * bp_tile + bp_tile_centre) * gp.dy;
    const double cz = HeightMap ? gp.tile_z[tile_y * gp.ntx + tile_x] : gp.z;

    // Pixel offsets from the tile centre, float in `fast`, double in `accurate`; of dy
    // only the first row's (row k adds k sy to u2.d): registers are short. Pixel k +
    // PixelsPerThread/2 mirrors pixel k (pixel_row): a flat grid keeps one |d|^2 for
    // both.
    using real = std::conditional_t<in_double, double, float>;
    constexpr int half = PixelsPerThread / 2;
    constexpr int nd2 = HeightMap ? PixelsPerThread : half;
    const double ddx = (double(tx) - bp_tile_centre) * gp.dx;
    const real dx = real(ddx);
    const real dy0 = real((double(ty) - bp_tile_centre) * gp.dy);
    real d2[nd2], dz[HeightMap ? PixelsPerThread : 1];
    float accr[PixelsPerThread], acci[PixelsPerThread];
#pragma unroll
    for (int k = 0; k < PixelsPerThread; ++k) {
        const int lx = pixel_col<PixelsPerThread>(k, tx),
                  ly = pixel_row<PixelsPerThread>(k, ty);
        const int ix = tile_x * bp_tile + lx, iy = tile_y * bp_tile + ly;
        const double ddy = (double(ly) - bp_tile_centre) * gp.dy;
        const double ddxk = (double(lx) - bp_tile_centre) * gp.dx;
        double ddz = 0;
        if (HeightMap && ix < gp.nx && iy < gp.ny) {
            const std::size_t i = std::size_t(iy) * gp.nx + ix;
            ddz = in_double ? gp.dz_d[i] : double(gp.dz_f[i]);
        }
        if (HeightMap)
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
            if constexpr (Arith == arith::fixed_phase)
                lin0 = unsigned(2 * tx - (bp_tile - 1)) * cc.wx +
                       unsigned(2 * ty - (bp_tile - 1)) * cc.wy;
#pragma unroll
            for (int k = 0; k < PixelsPerThread; ++k) {
                // u2.d of pixel k (of its mirror: the negative)
                const int kk = k % half;
                const real l = kk == 0 ? l0 : fma(real(kk), cc.sy, l0);
                real q = k < half ? d2[k % nd2] + l : d2[k % nd2] - l;
                if constexpr (HeightMap)
                    q = fma(dz[k], cc.u2z, q);
                float b, sn, cs;
                if constexpr (Arith == arith::single) {
                    b = bp_delta_range(q, cc.bins); // dR'/dr
                    __sincosf(fmaf(b, cc.kdr, cc.ph), &sn, &cs);
                } else if constexpr (Arith == arith::fixed_phase) {
                    // dR'/dr = e + c0 q + q^2 h(q); the bend, c0 |d|^2 + q^2 h(q), is
                    // what the phase adds to its linear part, c0 u2.d.
                    float h = cc.bins.c[SeriesTerms];
#pragma unroll
                    for (int n = SeriesTerms - 1; n >= 1; --n)
                        h = fmaf(q, h, cc.bins.c[n]);
                    const float qq = q * q;
                    b = fmaf(qq, h, fmaf(q, cc.bins.c[0], cc.bins.e));
                    const float bend = fmaf(qq, h, d2[k % nd2] * cc.bins.c[0]);
                    // Pixel row ty + rows kk is 2 rows kk half pixels below pixel 0.
                    const unsigned lin =
                        lin0 + unsigned(2 * (bp_tile / PixelsPerThread) * kk) * cc.wy;
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
    for (int k = 0; k < PixelsPerThread; ++k) {
        const int ix = tile_x * bp_tile + pixel_col<PixelsPerThread>(k, tx);
        const int iy = tile_y * bp_tile + pixel_row<PixelsPerThread>(k, ty);
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

} // namespace gpuradar::kernels::detail::bp_cuda

#endif
