/*
 * CUDA pulse_doppler_processor. Passes over one CPI of N complex samples (N = npulses *
 * channels * nrange), F = pulse-compression FFT length, rows = npulses * channels:
 *  - pulse compression (pulse_compression's CUDA engine). overlap_save (automatic's
 *    choice for fir_crossover_taps_cuda < L <= overlap_save_auto_max_taps): one kernel,
 *    the compressed CPI in a plain buffer (row stride nrange), which the fused Doppler
 *    kernel reads. fir: the same buffer. fft with separate kernels:
 *    pad, forward FFT, spectrum product, inverse FFT; the rows stay in its workspace
 *    (row stride F: no strip pass).
 *  - fused Doppler (fusion.fused_doppler, power-of-two nfft up to 4096): ONE kernel reads
 *    a tile of range bins for every pulse (the corner turn is in its load), applies the
 *    canceller, window and fftshift modulation, runs the Doppler FFT in shared memory
 *    and writes the envelope straight into the range-major map: 8N bytes read, 4 N * nfft
 *    / npulses written, instead of corner turn (16N) + prepare and in-place FFT (32N) +
 *    envelope (12N).
 *  - otherwise corner_turn, doppler_filter and envelope objects, as separate kernels.
 * sc16 / sc8 input (run_samples): pulse compression's first kernel converts the integers
 * as it loads them (pulse_compression::run_samples), so the CPI the device receives is
 * read once, as integers, and no converted copy is ever stored.
 */
#include "common/cuda/complex_math.cuh"
#include "common/cuda/cuda_check.h"
#include "common/cuda/dependent_launch.cuh"
#include "common/cuda/l2_residency.h"
#include "common/cuda/smem_fft.cuh"
#include "common/dft_tables.h"
#include "pulse_doppler/pulse_compression_engine.h"
#include "pulse_doppler/pulse_doppler_processor_backends.h"
#include <cuda_runtime.h>
#include <gpuradar/kernels/pulse_doppler/corner_turn.h>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

namespace gpuradar::kernels::detail {
namespace {

constexpr const char* who = "pulse_doppler_processor";

//! Fused Doppler kernel: threads per block (8 warps keep the tile loads in flight).
constexpr int fd_threads = 256;
//! Complex samples per block tile (range bins x nfft): 32 KiB + padding, under the 48 KiB
//! a block gets without opting in, several blocks per SM.
constexpr unsigned fd_tile_samples = 4096;
//! Most range bins per tile: 32 consecutive bins are one 256-byte run per pulse.
constexpr unsigned fd_max_bins = 32;
//! Samples each thread fetches before storing any (memory-level parallelism: with several
//! blocks of 256 threads per SM, 4 x 8 B per thread in flight covers the memory's
//! latency-bandwidth product).
constexpr int fd_batch = 4;
//! Longest Doppler FFT the fused kernel takes (one range bin fills the tile).
constexpr std::size_t fd_max_nfft = fd_tile_samples;

struct fd_args {
    const float2* x;     // compressed CPI: sample (p, c, r) at p*pstride + c*cstride + r
    std::size_t pstride; // samples between pulses
    std::size_t cstride; // samples between channels of one pulse
    const float2* weights; // m: window x fftshift modulation
    const float2* twiddle; // nfft: exp(-2 pi i t / nfft)
    float* out;            // ((r * channels + c) * nfft + k)
    unsigned nrange, channels, npulses, m, order, nfft, log2n, bins;
    unsigned env_linear, env_db;
};

//! Power, magnitude or dB of one Doppler sample (the envelope of the map).
__device__ __forceinline__ float
fd_envelope(float2 y, unsigned env_db, unsigned env_linear)
{
    const float pw = fmaf(y.x, y.x, y.y * y.y);
    if (env_db)
        return 10.0f * log10f(pw);
    return env_linear ? sqrtf(pw) : pw;
}

/*
 * One block = `bins` consecutive range bins of one channel. Shared memory holds one
 * transform per bin, row stride nfft + 1 (the load writes down a column of bins: the
 * pad spreads them over the banks). Decimation in time on bit-reversed input, two radix-2
 * stages per barrier (a radix-2^2 butterfly on 4 samples in registers), one plain stage
 * first when log2(nfft) is odd.
 */
__global__ void __launch_bounds__(fd_threads) fused_doppler(fd_args a)
{
    extern __shared__ float2 sm[];
    const unsigned n_fft = a.nfft;
    const unsigned S = n_fft + 1;
    const unsigned bins = a.bins;
    const unsigned c = blockIdx.y;
    const unsigned r0 = blockIdx.x * bins;
    const unsigned total = bins * n_fft;

    // Load: consecutive threads take consecutive range bins of one pulse (coalesced);
    // fd_batch samples per thread are fetched before any is stored, so several loads
    // are in flight per thread.
    const float2* xc = a.x + std::size_t(c) * a.cstride;
    for (unsigned base = threadIdx.x; base < total; base += fd_threads * fd_batch) {
        float2 v[fd_batch], b[fd_batch], d[fd_batch];
#pragma unroll
        for (int u = 0; u < fd_batch; ++u) {
            const unsigned i = base + u * fd_threads;
            const unsigned j = i % bins, n = i / bins, r = r0 + j;
            v[u] = b[u] = d[u] = make_float2(0.0f, 0.0f);
            if (i < total && n < a.m && r < a.nrange) {
                const float2* p = xc + std::size_t(n) * a.pstride + r;
                v[u] = p[0];
                if (a.order >= 1)
                    b[u] = p[a.pstride];
                if (a.order == 2)
                    d[u] = p[2 * a.pstride];
            }
        }
#pragma unroll
        for (int u = 0; u < fd_batch; ++u) {
            const unsigned i = base + u * fd_threads;
            if (i >= total)
                break;
            const unsigned j = i % bins, n = i / bins;
            float2 x = v[u];
            if (a.order == 1)
                x = csub(b[u], x);
            else if (a.order == 2)
                x = make_float2(fmaf(-2.0f, b[u].x, x.x + d[u].x),
                                fmaf(-2.0f, b[u].y, x.y + d[u].y));
            if (n < a.m)
                x = cmul(x, __ldg(a.weights + n));
            const unsigned pos = smem_fft_brev(n, a.log2n);
            sm[j * S + pos] = x;
        }
    }
    __syncthreads();

    smem_fft_dit<fd_threads>(sm, S, bins, n_fft, a.log2n, a.twiddle);

    // Envelope, range-major: consecutive threads write consecutive Doppler bins.
    for (unsigned i = threadIdx.x; i < total; i += fd_threads) {
        const unsigned j = i >> a.log2n;
        const unsigned k = i & (n_fft - 1);
        const unsigned r = r0 + j;
        if (r >= a.nrange)
            continue;
        a.out[(std::size_t(r) * a.channels + c) * n_fft + k] =
            fd_envelope(sm[j * S + k], a.env_db, a.env_linear);
    }
}

//! Register-first fused Doppler kernel: samples per thread, one 16-point DFT in registers
//! (the first four radix-2 stages of the decimation-in-time FFT, no shared memory).
constexpr unsigned fd_radix = 16;
constexpr unsigned fd_log2_radix = 4;
//! Resident blocks per SM the register-first kernel is compiled for: 4 caps it at 64
//! registers (80 uncapped: 3 blocks); faster on PD-A with the cap despite a few spilled
//! words (`gpuradar_bench pd_chain/default`).
constexpr int fd_r16_min_blocks = 4;
//! Shortest nfft the register-first kernel takes: a full tile (bins * nfft = 4096) gives
//! every thread one (range bin, 16-sample subsequence) pair from nfft = 128 up.
constexpr std::size_t fd_r16_min_nfft = fd_tile_samples / fd_max_bins;
//! Threads of the wide register-first kernel: 8192-sample tiles, twice the range bins
//! of a 4096-sample tile (nfft 1024: 8 bins, 64-byte runs per pulse instead of 32).
//! Faster on PD-C's Doppler part, equal on PD-B (`gpuradar_bench pd_chain/PD`).
constexpr int fd_wide_threads = 512;
//! Shortest nfft the wide kernel takes (a full tile of at most fd_max_bins bins).
constexpr std::size_t fd_wide_min_nfft = fd_radix * fd_wide_threads / fd_max_bins;
//! Shared-memory padding of the register-first kernel: one slot per 16 samples, so that
//! the 16 subsequences a warp writes side by side land on different banks.
__device__ __forceinline__ unsigned fd_pad(unsigned i) { return i + (i >> 4); }

/*
 * Register-first variant of fused_doppler for full tiles (bins * nfft = fd_radix *
 * THREADS: 4096 samples with fd_threads, 8192 with fd_wide_threads). Thread (j, q), j =
 * range bin of the tile (consecutive lanes: consecutive bins, so each load is a coalesced
 * run per pulse), q < Q = nfft / 16, loads the 16 pulses n = q + Q u (u < 16; all 16
 * loads, and the canceller's neighbours, in flight before any use), applies canceller and
 * weights, and runs their 16-point DFT in registers. In the decimation-in-time FFT on
 * bit-reversed input these 16 samples fill the 16 positions 16 brev(q) .. 16 brev(q) +
 * 15, and the first four stages leave exactly their 16-point DFT there (natural order),
 * so the thread stores it and the block runs the remaining log2(nfft) - 4 stages in one
 * or two radix-R shared-memory passes, the last of which writes the envelope straight
 * into the map. Row j starts at j * RS, RS = fd_pad(nfft) + 1, position i at fd_pad(i).
 */
/*
 * One decimation-in-time pass of radix R over `total` samples in rows of n = 2^log2n
 * (row j at sm + j * RS, position i at fd_pad(i)): sub-transforms of length L = 2^log2L
 * whose R blocks of length s = L / R hold the s-point DFTs of the R decimated
 * subsequences (mixed-radix digit-reversed input, as smem_fft_pass<R, true>); a thread
 * takes one n1 < s, multiplies by W_L^(r n1) and runs the R-point DFT in registers.
 * `twiddle` holds all n values exp(-2 pi i t / n).
 */

//! Where fd_pass_dit leaves its result: back in shared memory, or (last pass) as the
//! envelope straight into the range-major map.
struct fd_to_map {
    float* out;
    unsigned nrange, channels, r0, c, env_linear, env_db;
};

template <int R, int THREADS, bool TO_MAP>
__device__ __forceinline__ void fd_pass_dit(float2* sm,
                                            unsigned RS,
                                            unsigned total,
                                            unsigned log2n,
                                            unsigned log2L,
                                            const float2* __restrict__ twiddle,
                                            fd_to_map map = {})
{
    constexpr int log2R = smem_fft_log2_radix(R);
    const unsigned log2s = log2L - log2R;
    const unsigned s = 1u << log2s;
    for (unsigned b = threadIdx.x; b < total / R; b += THREADS) {
        const unsigned sub = b >> log2s, n1 = b & (s - 1);
        const unsigned logical = (sub << log2L) + n1;
        float2* row = sm + (logical >> log2n) * RS;
        const unsigned i0 = logical & ((1u << log2n) - 1);
        float2 v[R];
#pragma unroll
        for (int r = 0; r < R; ++r)
            v[r] = row[fd_pad(i0 + r * s)];
        if (n1 != 0) {
            // W_L^(r n1) = table[r * n1 * n / L], r * n1 * n / L < n: straight from the
            // full table (no power products held in registers).
            const unsigned step = n1 << (log2n - log2L);
#pragma unroll
            for (int r = 1; r < R; ++r)
                v[r] = cmul(v[r], __ldg(twiddle + r * step));
        }
        smem_fft_reg_dft<R>(v);
        if constexpr (TO_MAP) {
            // Last pass (L = n): v[j] is Doppler bin i0 + j s of row logical >> log2n, in
            // natural order; consecutive threads hold consecutive bins, so each store
            // of the warp is a run of min(s, 32) floats.
            const unsigned rr = map.r0 + (logical >> log2n);
            if (rr < map.nrange) {
                float* dst = map.out +
                             (std::size_t(rr) * map.channels + map.c) * (1u << log2n) +
                             i0;
#pragma unroll
                for (int j = 0; j < R; ++j)
                    dst[j * s] = fd_envelope(v[j], map.env_db, map.env_linear);
            }
        } else {
#pragma unroll
            for (int j = 0; j < R; ++j)
                row[fd_pad(i0 + j * s)] = v[j];
        }
    }
    if constexpr (!TO_MAP)
        __syncthreads();
}

//! fd_pass_dit with the radix 2^log2R chosen at run time (block-uniform).
template <int THREADS, bool TO_MAP>
__device__ __forceinline__ void fd_pass_dit_rt(unsigned log2R,
                                               float2* sm,
                                               unsigned RS,
                                               unsigned total,
                                               unsigned log2n,
                                               unsigned log2L,
                                               const float2* __restrict__ twiddle,
                                               fd_to_map map = {})
{
    switch (log2R) {
    case 1:
        fd_pass_dit<2, THREADS, TO_MAP>(sm, RS, total, log2n, log2L, twiddle, map);
        break;
    case 2:
        fd_pass_dit<4, THREADS, TO_MAP>(sm, RS, total, log2n, log2L, twiddle, map);
        break;
    case 3:
        fd_pass_dit<8, THREADS, TO_MAP>(sm, RS, total, log2n, log2L, twiddle, map);
        break;
    default:
        fd_pass_dit<16, THREADS, TO_MAP>(sm, RS, total, log2n, log2L, twiddle, map);
        break;
    }
}

template <int ORDER, int THREADS, bool STREAM>
__global__ void __launch_bounds__(THREADS, fd_r16_min_blocks* fd_threads / THREADS)
    fused_doppler_r16(fd_args a)
{
    extern __shared__ float2 sm[];
    const unsigned n_fft = a.nfft;
    const unsigned RS = fd_pad(n_fft) + 1;
    const unsigned bins = a.bins;
    const unsigned log2bins = __ffs(bins) - 1;
    const unsigned c = blockIdx.y;
    const unsigned r0 = blockIdx.x * bins;
    const unsigned Q = n_fft / fd_radix;
    const unsigned j = threadIdx.x & (bins - 1);
    const unsigned q = threadIdx.x >> log2bins;
    const unsigned r = r0 + j;
    const bool live = r < a.nrange;

    wait_for_predecessor(); // x is pulse compression's output
    allow_dependents();
    const float2* xp = a.x + std::size_t(c) * a.cstride + std::size_t(q) * a.pstride + r;
    const std::size_t step = std::size_t(Q) * a.pstride;
    float2 v[fd_radix], b[ORDER >= 1 ? fd_radix : 1], d[ORDER == 2 ? fd_radix : 1];
#pragma unroll
    for (int u = 0; u < int(fd_radix); ++u) {
        const unsigned n = q + Q * u;
        v[u] = make_float2(0.0f, 0.0f);
        if constexpr (ORDER >= 1)
            b[u] = v[u];
        if constexpr (ORDER == 2)
            d[u] = v[u];
        if (live && n < a.m) {
            const float2* p = xp + u * step;
            // STREAM (fits_in_l2): evict-first loads, the compressed CPI's last use;
            // the L2 keeps the lines still to be read and the map CFAR reads next.
            v[u] = STREAM ? __ldcs(p) : p[0];
            if constexpr (ORDER >= 1)
                b[u] = STREAM ? __ldcs(p + a.pstride) : p[a.pstride];
            if constexpr (ORDER == 2)
                d[u] = STREAM ? __ldcs(p + 2 * a.pstride) : p[2 * a.pstride];
        }
    }
#pragma unroll
    for (int u = 0; u < int(fd_radix); ++u) {
        const unsigned n = q + Q * u;
        float2 x = v[u];
        if constexpr (ORDER == 1)
            x = csub(b[u], x);
        if constexpr (ORDER == 2)
            x = make_float2(fmaf(-2.0f, b[u].x, x.x + d[u].x),
                            fmaf(-2.0f, b[u].y, x.y + d[u].y));
        if (n < a.m)
            x = cmul(x, __ldg(a.weights + n));
        v[u] = x;
    }
    smem_fft_reg_dft<fd_radix>(v);
    {
        float2* row = sm + j * RS;
        // Block of the subsequence q = d0 + R0 d1 in the digit-reversed order of the
        // radices (R0, 16, 16) or (R0 = Q, 16): d0 * Q / R0 + d1.
        const unsigned log2q = a.log2n - fd_log2_radix;
        const unsigned log2r0 = log2q > fd_log2_radix ? log2q - fd_log2_radix : log2q;
        const unsigned d0 = q & ((1u << log2r0) - 1), d1 = q >> log2r0;
        const unsigned base = fd_radix * ((d0 << (log2q - log2r0)) + d1);
#pragma unroll
        for (int k = 0; k < int(fd_radix); ++k)
            row[fd_pad(base + k)] = v[k];
    }
    __syncthreads();

    // Remaining passes: radix 16 on sub-transforms of 256 when nfft > 256, then radix
    // R0 = nfft / 16 (/ 16) on the whole row, which writes the envelope straight into
    // the map (no shared-memory round trip, no barrier).
    const unsigned log2n = a.log2n;
    const unsigned total = bins * n_fft;
    const fd_to_map map{ a.out, a.nrange, a.channels, r0, c, a.env_linear, a.env_db };
    if (log2n > 2 * fd_log2_radix) {
        fd_pass_dit<fd_radix, THREADS, false>(
            sm, RS, total, log2n, 2 * fd_log2_radix, a.twiddle);
        fd_pass_dit_rt<THREADS, true>(
            log2n - 2 * fd_log2_radix, sm, RS, total, log2n, log2n, a.twiddle, map);
    } else {
        fd_pass_dit_rt<THREADS, true>(
            log2n - fd_log2_radix, sm, RS, total, log2n, log2n, a.twiddle, map);
    }
}

bool fused_doppler_fits(std::size_t nfft)
{
    return nfft >= 2 && nfft <= fd_max_nfft && (nfft & (nfft - 1)) == 0;
}

class pulse_doppler_processor_cuda final : public pulse_doppler_processor
{
public:
    pulse_doppler_processor_cuda(const params& p, stream_ref s, const fusion& f)
        : pulse_doppler_processor(p),
          d_stream(native(s)),
          d_pc(make_pulse_compression_cuda(p.nrange,
                                           p.npulses * p.channels,
                                           p.waveform,
                                           p.range_window,
                                           p.normalize,
                                           p.pc_method,
                                           s,
                                           0,
                                           p.input)),
          d_compressed(input_size() * sizeof(cfloat))
    {
        if (!f.fused_doppler)
            d_fused_why = "fused_doppler = false";
        else if (!fused_doppler_fits(p.nfft))
            d_fused_why =
                "nfft not a power of two in [2, " + std::to_string(fd_max_nfft) + "]";
        else if (p.nrange > 0xffffffffu / 2 || p.channels > 65535)
            d_fused_why = "nrange or channels too large for the fused grid";
        if (d_fused_why.empty()) {
            d_fused = true;
            upload_tables();
        } else {
            d_ct = corner_turn::make(backend::cuda, p.npulses, p.nrange, p.channels, s);
            d_df = doppler_filter::make(backend::cuda,
                                        p.npulses,
                                        p.nrange * p.channels,
                                        p.nfft,
                                        p.mti,
                                        p.doppler_window,
                                        p.fftshift,
                                        s);
            d_env = envelope::make(backend::cuda, p.env_mode, p.db, s);
            d_turned = device_memory(input_size() * sizeof(cfloat));
            d_doppler = device_memory(output_size() * sizeof(cfloat));
        }
    }

    void run(const cfloat* in, float* out) override { run_any(in, false, out); }

    void run_samples(const void* in, float* out) override { run_any(in, true, out); }

    void set_waveform(const std::vector<cfloat>& waveform) override
    {
        d_pc->set_waveform(waveform);
        d_params.waveform = waveform;
    }

    std::string implementation() const override
    {
        return "pc: " + d_pc->implementation() + "; doppler: " +
               (d_fused ? std::string("fused kernel (corner turn, window, FFT, envelope)")
                        : "corner_turn, doppler_filter, envelope (" + d_fused_why + ")");
    }

private:
    //! in: complex float, or (samples) params().input's format, which pulse
    //! compression's first kernel converts as it loads.
    void run_any(const void* in, bool samples, float* out)
    {
        cfloat* a = d_compressed.as<cfloat>();
        const auto* in_f = static_cast<const cfloat*>(in);
        if (!d_fused) {
            if (samples)
                d_pc->run_samples(in, a);
            else
                d_pc->run(in_f, a);
            d_ct->run(a, d_turned.as<cfloat>());
            d_df->run(d_turned.as<cfloat>(), d_doppler.as<cfloat>());
            d_env->run(d_doppler.as<cfloat>(), out, output_size());
            return;
        }
        const pc_rows_view v =
            samples ? d_pc->run_samples_view(in, a) : d_pc->run_view(in_f, a);
        const auto& p = d_params;
        fd_args args;
        args.x = reinterpret_cast<const float2*>(v.data);
        args.cstride = v.row_stride;
        args.pstride = v.row_stride * p.channels;
        args.weights = d_weights.as<float2>();
        args.twiddle = d_twiddle.as<float2>();
        args.out = out;
        args.nrange = static_cast<unsigned>(p.nrange);
        args.channels = static_cast<unsigned>(p.channels);
        args.npulses = static_cast<unsigned>(p.npulses);
        args.m = static_cast<unsigned>(p.npulses - doppler_filter::mti_order(p.mti));
        args.order = static_cast<unsigned>(doppler_filter::mti_order(p.mti));
        args.nfft = static_cast<unsigned>(p.nfft);
        args.log2n = d_log2n;
        args.bins = d_bins;
        args.env_linear = p.env_mode == envelope::mode::linear ? 1u : 0u;
        args.env_db = p.db ? 1u : 0u;
        const dim3 grid(static_cast<unsigned>((p.nrange + d_bins - 1) / d_bins),
                        static_cast<unsigned>(p.channels));
        if (d_r16) {
            // Full tiles: the register-first kernel (row stride fd_pad(nfft) + 1).
            launch_dependent(d_dependent,
                             d_r16,
                             grid,
                             dim3(d_r16_threads),
                             d_r16_smem,
                             d_stream,
                             who,
                             args);
            return;
        }
        const std::size_t smem = std::size_t(d_bins) * (p.nfft + 1) * sizeof(float2);
        fused_doppler<<<grid, fd_threads, smem, d_stream>>>(args);
        GPURADAR_CUDA_CHECK_LAUNCH(who, "fused_doppler");
    }

    template <int THREADS, bool STREAM>
    static void (*r16_kernel(unsigned order))(fd_args)
    {
        switch (order) {
        case 0:
            return fused_doppler_r16<0, THREADS, STREAM>;
        case 1:
            return fused_doppler_r16<1, THREADS, STREAM>;
        default:
            return fused_doppler_r16<2, THREADS, STREAM>;
        }
    }

    template <int THREADS>
    static void (*r16_kernel(unsigned order, bool stream))(fd_args)
    {
        return stream ? r16_kernel<THREADS, true>(order)
                      : r16_kernel<THREADS, false>(order);
    }

    //! Register-first kernel for nfft >= fd_r16_min_nfft: the wide 8192-sample tile
    //! from fd_wide_min_nfft up where the device lets a block opt in to its shared
    //! memory (~70 KB: sm_80+, sm_75 stops at 64 KB), else the 4096-sample tile.
    void pick_r16()
    {
        const auto& p = d_params;
        const unsigned order = static_cast<unsigned>(doppler_filter::mti_order(p.mti));
        int dev = 0, optin = 0;
        GPURADAR_CUDA_CHECK(who, cudaGetDevice(&dev));
        GPURADAR_CUDA_CHECK(
            who,
            cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
        const auto smem_for = [&](unsigned threads) {
            return std::size_t(fd_radix * threads / p.nfft) *
                   (p.nfft + p.nfft / fd_radix + 1) * sizeof(float2);
        };
        const bool wide =
            p.nfft >= fd_wide_min_nfft && smem_for(fd_wide_threads) <= std::size_t(optin);
        d_r16_threads = wide ? fd_wide_threads : fd_threads;
        const bool stream = fits_in_l2(input_size() * sizeof(cfloat), who);
        d_r16 = wide ? r16_kernel<fd_wide_threads>(order, stream)
                     : r16_kernel<fd_threads>(order, stream);
        d_bins = static_cast<unsigned>(fd_radix * d_r16_threads / p.nfft);
        d_r16_smem = smem_for(d_r16_threads);
        // Above the 48 KB a block gets without opting in (the wide tile).
        GPURADAR_CUDA_CHECK(
            who,
            cudaFuncSetAttribute(reinterpret_cast<const void*>(d_r16),
                                 cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 static_cast<int>(d_r16_smem)));
    }

    void upload_tables()
    {
        const auto& p = d_params;
        const std::size_t nfft = p.nfft;
        d_log2n = 0;
        while ((std::size_t(1) << d_log2n) < nfft)
            ++d_log2n;
        d_bins = static_cast<unsigned>(std::min<std::size_t>(
            fd_max_bins, std::max<std::size_t>(1, fd_tile_samples / nfft)));
        if (nfft >= fd_r16_min_nfft)
            pick_r16();
        const auto w = doppler_weights(p.doppler_window,
                                       p.npulses - doppler_filter::mti_order(p.mti),
                                       nfft,
                                       p.fftshift);
        // All nfft twiddles: the register-first kernel's passes index up to nfft - 1 (the
        // plain kernel reads the first half).
        const auto tw = dft_twiddles(nfft);
        d_weights = device_memory(w.size() * sizeof(cfloat));
        d_twiddle = device_memory(tw.size() * sizeof(cfloat));
        copy_async(d_weights.get(),
                   w.data(),
                   d_weights.size(),
                   copy_kind::host_to_device,
                   stream_ref(d_stream),
                   who);
        copy_async(d_twiddle.get(),
                   tw.data(),
                   d_twiddle.size(),
                   copy_kind::host_to_device,
                   stream_ref(d_stream),
                   who);
        // The host tables die with this scope.
        GPURADAR_CUDA_CHECK(who, cudaStreamSynchronize(d_stream));
    }

    cudaStream_t d_stream;
    const bool d_dependent =
        dependent_launch_supported(who); // fused_doppler_r16 (sm_90+)
    std::unique_ptr<pulse_compression_cuda_engine> d_pc;
    device_memory d_compressed; // pulse-major compressed CPI (when pc writes it)
    // fused Doppler
    bool d_fused = false;
    device_memory d_weights, d_twiddle;
    unsigned d_log2n = 0, d_bins = 1;
    void (*d_r16)(fd_args) = nullptr; // register-first kernel, when nfft takes it
    unsigned d_r16_threads = 0;
    std::size_t d_r16_smem = 0;
    std::string d_fused_why;
    // separate path
    std::unique_ptr<corner_turn> d_ct;
    std::unique_ptr<doppler_filter> d_df;
    std::unique_ptr<envelope> d_env;
    device_memory d_turned, d_doppler;
};

} // namespace

std::unique_ptr<pulse_doppler_processor>
make_pulse_doppler_processor_cuda(const pulse_doppler_processor_params& p,
                                  stream_ref stream,
                                  const pulse_doppler_processor_fusion& f)
{
    return std::make_unique<pulse_doppler_processor_cuda>(p, stream, f);
}

} // namespace gpuradar::kernels::detail
