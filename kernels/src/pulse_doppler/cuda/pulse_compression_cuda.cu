/*
 * CUDA pulse compression.
 * fft: copy_rows (pad), cuFFT forward in place, multiply_spectrum, cuFFT inverse,
 *      copy_rows (strip): five passes; pulse_doppler_processor skips the strip and reads
 * the workspace. fir: one kernel, a block per 1024 outputs of a row, taps and the input
 * tile in shared memory, each thread 8 consecutive outputs from a sliding register
 * window. overlap_save: one kernel, a block of F/16 threads per (row, segment of M = F -
 * (L-1) outputs): load F samples (zeros past the gate), DIF FFT in shared memory in three
 *      passes (radix RS, 16, 16: natural in, digit-reversed out), product with the
 *      spectrum stored in that order, conjugated, the transposed passes (digit-reversed
 *      in, natural out) = conj of the unnormalised inverse, store the first M
 *      conjugated: read x once (plus the L-1 overlap), write y once.
 * sc16 / sc8 input (run_samples): the kernel that reads x (pad copy, FIR tile,
 * overlap_save segment) is instantiated on the integer element type and converts in its
 * load (sample_convert.cuh), so a CPI of integers is read once and never stored as float.
 */
#include "common/cuda/complex_math.cuh"
#include "common/cuda/cuda_check.h"
#include "common/cuda/cufft_plan.h"
#include "common/cuda/dependent_launch.cuh"
#include "common/cuda/l2_residency.h"
#include "common/cuda/sample_convert.cuh"
#include "common/cuda/smem_fft.cuh"
#include "common/dft_tables.h"
#include "pulse_doppler/pulse_compression_backends.h"
#include <cuda_runtime.h>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

namespace gpuradar::kernels::detail {
namespace {

constexpr const char* who = "pulse_compression";

//! Row kernels: 256 threads stride along a row, blockIdx.y (grid-stride) walks the rows.
constexpr int row_threads = 256;
//! Cap on blocks along a row: a row of 16k samples takes 64 blocks of 256 threads.
constexpr int row_max_blocks_x = 64;
//! CUDA's limit on gridDim.y; more rows are covered by the grid-stride loop.
constexpr std::size_t max_grid_y = 65535;

//! FIR: threads per block and consecutive outputs per thread. 8 outputs reuse each input
//! loaded from shared memory 8 times from registers; 128 x 8 = 1024 outputs per block
//! keeps the partial last block of a 9000-sample row small (9 blocks, 1.6% idle).
constexpr int fir_threads = 128;
constexpr int fir_outputs_per_thread = 8;
constexpr int fir_outputs_per_block = fir_threads * fir_outputs_per_thread;
static_assert(pulse_compression::fir_crossover_taps_cuda <=
                  pulse_compression::fir_max_taps,
              "the automatic FIR choice must be a length the FIR kernel takes");

dim3 row_grid(std::size_t cols, std::size_t rows)
{
    const std::size_t bx =
        std::min<std::size_t>((cols + row_threads - 1) / row_threads, row_max_blocks_x);
    return dim3(static_cast<unsigned>(std::max<std::size_t>(bx, 1)),
                static_cast<unsigned>(std::min(rows, max_grid_y)));
}

//! out row r = the first `keep` samples of in row r, zeros up to out_len: pads the rows
//! into the FFT workspace (keep = in_len = nrange, out_len = nfft; In the input's
//! element, converted here) and strips them out of it (in_len = nfft, keep = out_len =
//! nrange).
template <typename In>
__global__ void copy_rows(const In* __restrict__ in,
                          float2* __restrict__ out,
                          unsigned in_len,
                          unsigned out_len,
                          unsigned keep,
                          std::size_t rows)
{
    for (std::size_t r = blockIdx.y; r < rows; r += gridDim.y) {
        const In* x = in + r * in_len;
        float2* y = out + r * out_len;
        for (unsigned n = blockIdx.x * blockDim.x + threadIdx.x; n < out_len;
             n += gridDim.x * blockDim.x)
            y[n] = n < keep ? sample_to_float2(x[n]) : make_float2(0.0f, 0.0f);
    }
}

__global__ void multiply_spectrum(float2* __restrict__ work,
                                  const float2* __restrict__ spectrum,
                                  unsigned nfft,
                                  std::size_t rows)
{
    for (std::size_t r = blockIdx.y; r < rows; r += gridDim.y) {
        float2* w = work + r * nfft;
        for (unsigned n = blockIdx.x * blockDim.x + threadIdx.x; n < nfft;
             n += gridDim.x * blockDim.x)
            w[n] = cmul(w[n], __ldg(spectrum + n));
    }
}

// Shared-memory index of tile sample i: one pad slot every J samples, so that the 32
// threads of a warp reading samples t*J + m (t = lane) hit distinct banks.
__device__ __forceinline__ unsigned skew(unsigned i)
{
    return i + i / fir_outputs_per_thread;
}

/*
 * y[d] = sum_k x[d+k] c[k] (x = 0 past nrange). taps_padded is a multiple of J with zero
 * taps past L. Shared memory: taps (taps_padded) then the skewed input tile of
 * fir_outputs_per_block + taps_padded samples; the outputs are staged back through the
 * tile so the global stores are coalesced.
 */
template <typename In>
__global__ void __launch_bounds__(fir_threads) fir_rows(const In* __restrict__ in,
                                                        float2* __restrict__ out,
                                                        const float2* __restrict__ taps,
                                                        unsigned taps_padded,
                                                        unsigned nrange,
                                                        std::size_t rows)
{
    constexpr int J = fir_outputs_per_thread;
    extern __shared__ float2 smem[];
    float2* c = smem;
    float2* xs = smem + taps_padded;
    const unsigned tile = fir_outputs_per_block + taps_padded;

    for (unsigned k = threadIdx.x; k < taps_padded; k += fir_threads)
        c[k] = taps[k];

    const unsigned d0 = blockIdx.x * fir_outputs_per_block;
    for (std::size_t r = blockIdx.y; r < rows; r += gridDim.y) {
        const In* x = in + r * nrange;
        __syncthreads(); // the previous row's outputs have left the tile
        for (unsigned i = threadIdx.x; i < tile; i += fir_threads) {
            const unsigned g = d0 + i;
            xs[skew(i)] = g < nrange ? sample_to_float2(x[g]) : make_float2(0.0f, 0.0f);
        }
        __syncthreads();

        const unsigned base = threadIdx.x * J;
        float2 acc[J];
        float2 win[J];
#pragma unroll
        for (int j = 0; j < J; ++j) {
            acc[j] = make_float2(0.0f, 0.0f);
            win[j] = xs[skew(base + j)];
        }
        for (unsigned kb = 0; kb < taps_padded; kb += J) {
            float2 nxt[J];
#pragma unroll
            for (int j = 0; j < J; ++j)
                nxt[j] = xs[skew(base + kb + J + j)];
#pragma unroll
            for (int kk = 0; kk < J; ++kk) {
                const float2 ck = c[kb + kk];
#pragma unroll
                for (int j = 0; j < J; ++j)
                    cmac(acc[j], (j + kk < J) ? win[j + kk] : nxt[j + kk - J], ck);
            }
#pragma unroll
            for (int j = 0; j < J; ++j)
                win[j] = nxt[j];
        }

        __syncthreads(); // everyone is done reading the input tile
#pragma unroll
        for (int j = 0; j < J; ++j)
            xs[skew(base + j)] = acc[j];
        __syncthreads();
        float2* y = out + r * nrange;
        for (unsigned i = threadIdx.x; i < fir_outputs_per_block; i += fir_threads) {
            const unsigned g = d0 + i;
            if (g < nrange)
                y[g] = xs[skew(i)];
        }
    }
}

//! overlap_save: most threads per block: a 4096-point segment is one radix-16
//! butterfly per thread per pass (blocks have F / 16 threads).
constexpr int os_max_threads = 256;
//! overlap_save: resident blocks per SM the register budget is sized for. 100 registers
//! per thread allowed 2 blocks of 256 threads at F = 4096 (16 warps per SM); the cap of
//! 65536 / (3 * 256) = 85 -> 80 registers lets 3 stay resident (shared memory, 34.8 KB a
//! block, allows 6) without spilling (ptxas report: 0 bytes spill).
constexpr int os_min_blocks_per_sm = 3;
//! overlap_save: radix of the shared-memory passes after the first (16 samples in
//! registers per thread: each pass reads and writes shared memory once for 4 stages).
constexpr int os_radix = 16;
//! overlap_save: most blocks launched; more (row, segment) pairs are covered by the
//! grid-stride loop.
constexpr std::size_t os_max_blocks = 0x7fffffff;

template <typename In>
struct os_args {
    const In* x;            // rows x nrange, the input's element (converted on load)
    float2* y;              // rows x nrange
    const float2* spectrum; // F: H[k] of digit position 16 b + r at r * (F / 16) + b
    // The passes' twiddles in pairs by butterfly (dft_pass_twiddles): the radix-RS
    // passes' (F / RS butterflies), the radix-16 passes' on transforms of F / RS points.
    const float4* twiddle_rs;
    const float4* twiddle_16;
    std::size_t blocks; // rows * segs
    unsigned nrange, F, log2F, M, segs;
};

/*
 * One (row, segment) per block iteration: F = RS * 16 * 16 points, three DIF passes
 * (radix RS, 16, 16: bins end up digit-reversed), the product with the spectrum stored
 * in that order and conjugated, three transposed passes (16, 16, RS: natural order out)
 * = the conjugate of the unnormalised inverse transform. Fused so that shared memory
 * sees 4 round trips and 5 barriers per segment instead of 8 and 9:
 *  - pass RS reads its R samples straight from x (stride F / RS, coalesced across the
 *    warp; zeros past the gate) and writes shared memory once;
 *  - the last DIF pass (stride 1: each thread owns 16 consecutive positions), the
 *    spectrum product and the first DIT pass (the same 16 positions) run in registers;
 *  - the last DIT pass (radix RS) writes its outputs straight to y.
 * The twiddles come from tables of each pass's own (dft_pass_twiddles), a butterfly's R
 * of them in R / 2 float4 loads that are coalesced across the warp, rather than from
 * one F-point table with the powers formed by products (5 % fewer instructions; the
 * per-butterfly layout, one thread's 128 bytes contiguous, saturated L1 instead).
 */
template <int RS, bool STREAM, typename In>
__global__ void __launch_bounds__(os_max_threads, os_min_blocks_per_sm)
    overlap_save_rows(os_args<In> a)
{
    extern __shared__ float2 sm[];
    constexpr unsigned log2RS = smem_fft_log2_radix(RS);
    const unsigned F = a.F;
    const unsigned T = blockDim.x;
    const unsigned sA = F / RS;  // stride of the radix-RS passes
    const unsigned F16 = F / 16; // threads of the radix-16 passes (= T)
    const smem_fft_pass_twiddles tw_rs{ a.twiddle_rs, 0, sA };
    const smem_fft_pass_twiddles tw_16{ a.twiddle_16, log2RS, F / RS / 16 };
    wait_for_predecessor(); // x may be the previous kernel's output
    allow_dependents();
    for (std::size_t b = blockIdx.x; b < a.blocks; b += gridDim.x) {
        const std::size_t row = b / a.segs;
        const unsigned d0 = static_cast<unsigned>(b - row * a.segs) * a.M;
        const In* x = a.x + row * a.nrange + d0;
        const unsigned n_in = a.nrange - d0; // samples of x from d0 (> 0)
        // DIF pass radix RS (L = F, stride sA), from global memory. A thread runs
        // sA / T = 16 / RS butterflies (T = F / 16); all 16 of its loads are issued
        // before any butterfly, and before the barrier (F = 1024: one DRAM round trip
        // per segment instead of four).
        constexpr int iters = int(os_radix) / RS;
        float2 v[iters][RS];
#pragma unroll
        for (int it = 0; it < iters; ++it)
#pragma unroll
            for (int j = 0; j < RS; ++j) {
                const unsigned i = threadIdx.x + it * T + j * sA;
                // STREAM (fits_in_l2): evict-first loads, so that the rows this
                // kernel writes stay in L2 for the Doppler kernel.
                v[it][j] = i < n_in ? sample_to_float2(STREAM ? __ldcs(x + i) : x[i])
                                    : make_float2(0.0f, 0.0f);
            }
        __syncthreads(); // the previous segment's reads of shared memory are done
#pragma unroll
        for (int it = 0; it < iters; ++it)
            smem_fft_first_dif_pass<RS>(v[it], sm, threadIdx.x + it * T, sA, tw_rs);
        __syncthreads();
        // DIF pass radix 16 on sub-transforms of length F / RS (stride 16).
        smem_fft_pass<os_radix, false>(sm, F, a.log2F - log2RS, tw_16, a.log2F);
        // Last DIF pass (length 16, stride 1), spectrum product, first DIT pass.
        for (unsigned t = threadIdx.x; t < F16; t += T) {
            const unsigned base = t * 16;
            float2 v[16];
#pragma unroll
            for (int j = 0; j < 16; ++j)
                v[j] = sm[smem_fft_pad(base + j)];
            smem_fft_reg_dft<16>(v);
#pragma unroll
            for (int r = 0; r < 16; ++r) {
                const float2 p = cmul(v[r], __ldg(a.spectrum + r * F16 + t));
                v[r] = make_float2(p.x, -p.y);
            }
            smem_fft_reg_dft<16>(v);
#pragma unroll
            for (int j = 0; j < 16; ++j)
                sm[smem_fft_pad(base + j)] = v[j];
        }
        __syncthreads();
        smem_fft_pass<os_radix, true>(sm, F, a.log2F - log2RS, tw_16, a.log2F);
        // Last DIT pass radix RS (L = F, stride sA), to global memory.
        float2* y = a.y + row * a.nrange + d0;
        const unsigned n_out = min(a.M, n_in);
        for (unsigned n1 = threadIdx.x; n1 < sA; n1 += T) {
            float2 v[RS];
            smem_fft_last_dit_pass<RS>(v, sm, n1, sA, tw_rs);
#pragma unroll
            for (int j = 0; j < RS; ++j) {
                const unsigned i = n1 + j * sA;
                if (i < n_out)
                    y[i] = make_float2(v[j].x, -v[j].y);
            }
        }
    }
}

//! The first pass's radix for F = 2^log2F, 9 <= log2F <= 12 (then two radix-16 passes).
unsigned os_first_radix(unsigned log2F) { return 1u << (log2F - 8); }

//! The overlap_save_rows instance for F = 2^log2F.
template <bool STREAM, typename In>
void (*os_kernel(unsigned log2F))(os_args<In>)
{
    switch (os_first_radix(log2F)) {
    case 2:
        return overlap_save_rows<2, STREAM, In>;
    case 4:
        return overlap_save_rows<4, STREAM, In>;
    case 8:
        return overlap_save_rows<8, STREAM, In>;
    default:
        return overlap_save_rows<16, STREAM, In>;
    }
}

//! Shared-memory position of bin k after the DIF passes (radices RS, 16, 16).
std::size_t os_digit_position(std::size_t k, std::size_t F, unsigned rs)
{
    std::size_t pos = 0, m = F;
    for (unsigned R : { rs, unsigned(os_radix), unsigned(os_radix) }) {
        m /= R;
        pos += (k % R) * m;
        k /= R;
    }
    return pos;
}

std::size_t fir_shared_bytes(std::size_t taps_padded)
{
    const std::size_t tile = fir_outputs_per_block + taps_padded;
    return (taps_padded + tile + tile / fir_outputs_per_thread + 1) * sizeof(float2);
}

class pulse_compression_cuda final : public pulse_compression_cuda_engine
{
public:
    pulse_compression_cuda(std::size_t nrange,
                           std::size_t rows,
                           const std::vector<cfloat>& waveform,
                           const window_spec& window,
                           bool normalize,
                           method m,
                           stream_ref s,
                           std::size_t fft_length,
                           sample_format input)
        : pulse_compression_cuda_engine(
              backend::cuda, nrange, rows, window, normalize, m, fft_length, input),
          d_stream(native(s)),
          d_dependent(dependent_launch_supported(who))
    {
        install(make_reference(waveform));
    }

    std::string implementation() const override
    {
        if (d_resolved == method::fir)
            return "fir";
        if (d_resolved == method::overlap_save)
            return "overlap_save: F = " + std::to_string(d_os_fft) +
                   ", M = " + std::to_string(d_os_fft - d_waveform_length + 1);
        return "fft: separate kernels";
    }

    void set_waveform(const std::vector<cfloat>& waveform) override
    {
        install(make_reference(waveform));
    }

    void run(const cfloat* in, cfloat* out) override
    {
        run_rows(reinterpret_cast<const float2*>(in), out, true);
    }

    pc_rows_view run_view(const cfloat* in, cfloat* out) override
    {
        return run_rows(reinterpret_cast<const float2*>(in), out, false);
    }

    void run_samples(const void* in, cfloat* out) override { run_samples(in, out, true); }

    pc_rows_view run_samples_view(const void* in, cfloat* out) override
    {
        return run_samples(in, out, false);
    }

private:
    //! The input format's element type picks the instance of the first kernel.
    pc_rows_view run_samples(const void* in, cfloat* out, bool strip)
    {
        const std::size_t align = sample_bytes(d_input);
        if (reinterpret_cast<std::uintptr_t>(in) % align != 0)
            throw std::invalid_argument(std::string("gpuradar::") + who +
                                        ": run_samples input must be aligned to " +
                                        std::to_string(align) + " bytes (one " +
                                        kernels::to_string(d_input) + " sample)");
        switch (d_input) {
        case sample_format::sc16:
            return run_rows(static_cast<const short2*>(in), out, strip);
        case sample_format::sc8:
            return run_rows(static_cast<const char2*>(in), out, strip);
        case sample_format::fc32:
        default:
            return run_rows(static_cast<const float2*>(in), out, strip);
        }
    }

    template <typename In>
    pc_rows_view run_rows(const In* x, cfloat* out, bool strip)
    {
        auto* y = reinterpret_cast<float2*>(out);
        if (d_resolved == method::fir)
            run_fir(x, y);
        else if (d_resolved == method::overlap_save)
            run_overlap_save(x, y);
        else
            return run_fft(x, y, strip);
        return { out, d_nrange };
    }

    template <typename In>
    void run_fir(const In* x, float2* y)
    {
        const dim3 grid(static_cast<unsigned>((d_nrange + fir_outputs_per_block - 1) /
                                              fir_outputs_per_block),
                        static_cast<unsigned>(std::min(d_rows, max_grid_y)));
        fir_rows<In><<<grid, fir_threads, fir_shared_bytes(d_taps_padded), d_stream>>>(
            x,
            y,
            d_taps.as<float2>(),
            static_cast<unsigned>(d_taps_padded),
            static_cast<unsigned>(d_nrange),
            d_rows);
        GPURADAR_CUDA_CHECK_LAUNCH(who, "fir_rows");
    }

    template <typename In>
    void run_overlap_save(const In* x, float2* y)
    {
        os_args<In> a;
        a.x = x;
        a.y = y;
        a.spectrum = d_os_spectrum.as<float2>();
        a.twiddle_rs = d_os_twiddle_rs.as<float4>();
        a.twiddle_16 = d_os_twiddle_16.as<float4>();
        a.nrange = static_cast<unsigned>(d_nrange);
        a.F = static_cast<unsigned>(d_os_fft);
        a.log2F = d_os_log2;
        a.M = static_cast<unsigned>(d_os_fft - d_waveform_length + 1);
        a.segs = (a.nrange + a.M - 1) / a.M;
        a.blocks = d_rows * a.segs;
        const auto grid =
            static_cast<unsigned>(std::min<std::size_t>(a.blocks, os_max_blocks));
        const unsigned threads = a.F / os_radix;
        const std::size_t smem = (d_os_fft + d_os_fft / 16) * sizeof(float2);
        const auto kernel = d_os_stream_loads ? os_kernel<true, In>(a.log2F)
                                              : os_kernel<false, In>(a.log2F);
        launch_dependent(
            d_dependent, kernel, dim3(grid), dim3(threads), smem, d_stream, who, a);
    }

    //! Without `strip` the rows stay in the workspace (row stride nfft).
    template <typename In>
    pc_rows_view run_fft(const In* x, float2* y, bool strip)
    {
        const auto nrange = static_cast<unsigned>(d_nrange);
        const auto nfft = static_cast<unsigned>(d_nfft);
        float2* work = d_work.as<float2>();
        copy_rows<In><<<row_grid(d_nfft, d_rows), row_threads, 0, d_stream>>>(
            x, work, nrange, nfft, nrange, d_rows);
        GPURADAR_CUDA_CHECK_LAUNCH(who, "copy_rows (pad)");
        auto* w = reinterpret_cast<cufftComplex*>(work);
        GPURADAR_CUFFT_CHECK(who, cufftExecC2C(d_plan->get(), w, w, CUFFT_FORWARD));
        multiply_spectrum<<<row_grid(d_nfft, d_rows), row_threads, 0, d_stream>>>(
            work, d_spectrum.as<float2>(), nfft, d_rows);
        GPURADAR_CUDA_CHECK_LAUNCH(who, "multiply_spectrum");
        GPURADAR_CUFFT_CHECK(who, cufftExecC2C(d_plan->get(), w, w, CUFFT_INVERSE));
        if (!strip)
            return { reinterpret_cast<const cfloat*>(work), d_nfft };
        copy_rows<float2><<<row_grid(d_nrange, d_rows), row_threads, 0, d_stream>>>(
            work, y, nfft, nrange, nrange, d_rows);
        GPURADAR_CUDA_CHECK_LAUNCH(who, "copy_rows (strip)");
        return { reinterpret_cast<const cfloat*>(y), d_nrange };
    }

    /*
     * Builds everything for `ref` before replacing anything (a throw keeps the old
     * waveform); each step's uploads are ordered after the work already queued on the
     * stream and waited for before the host tables die.
     */
    void install(const reference& ref)
    {
        if (ref.resolved == method::fft)
            install_fft(ref);
        else if (ref.resolved == method::overlap_save)
            install_overlap_save(ref);
        else
            install_fir(ref);
        adopt(ref);
    }

    //! Host table -> new device memory, waited for (the table dies with the caller).
    device_memory upload(const std::vector<cfloat>& table)
    {
        device_memory d(table.size() * sizeof(float2));
        copy_async(d.get(),
                   table.data(),
                   d.size(),
                   copy_kind::host_to_device,
                   stream_ref(d_stream),
                   who);
        GPURADAR_CUDA_CHECK(who, cudaStreamSynchronize(d_stream));
        return d;
    }

    //! The spectrum, and the workspace and plans when the FFT length changes.
    void install_fft(const reference& ref)
    {
        const std::size_t nfft = ref.fft_length;
        device_memory spectrum = upload(make_spectrum(ref));
        if (d_nfft != nfft) {
            device_memory work(d_rows * nfft * sizeof(float2));
            auto plan = std::make_unique<cufft_plan_1d>(
                int(nfft), int(d_rows), 1, int(nfft), d_stream, who);
            d_work = std::move(work);
            d_plan = std::move(plan);
            d_nfft = nfft;
        }
        d_spectrum = std::move(spectrum);
    }

    //! The segment spectrum in the kernel's digit-reversed order, and the twiddles.
    void install_overlap_save(const reference& ref)
    {
        const std::size_t F = overlap_save_fft_length(ref.taps.size(), d_nrange);
        unsigned log2F = 0;
        while ((std::size_t(1) << log2F) < F)
            ++log2F;
        reference seg = ref;
        seg.fft_length = F;
        const auto h = make_spectrum(seg);
        // The kernel multiplies the digit-reversed output of its DIF passes.
        static_assert(pulse_compression::overlap_save_min_fft >= 512 &&
                          pulse_compression::overlap_save_max_fft <= 4096,
                      "the kernel's passes are radix RS, 16, 16 with RS in 2..16");
        std::vector<cfloat> hbr(F);
        const unsigned rs = os_first_radix(log2F);
        // Digit position p = 16 b + r (the kernel's thread b holds r < 16 in registers)
        // is stored at r * (F / 16) + b: coalesced loads across the warp.
        for (std::size_t k = 0; k < F; ++k) {
            const std::size_t p = os_digit_position(k, F, rs);
            hbr[(p % os_radix) * (F / os_radix) + p / os_radix] = h[k];
        }
        device_memory spectrum = upload(hbr);
        d_os_twiddle_rs = upload(dft_pass_twiddles(F, rs));
        d_os_twiddle_16 = upload(dft_pass_twiddles(F / rs, os_radix));
        d_os_spectrum = std::move(spectrum);
        d_os_fft = F;
        d_os_log2 = log2F;
    }

    //! The taps, zero-padded to whole register windows of the FIR kernel.
    void install_fir(const reference& ref)
    {
        const std::size_t padded = (ref.taps.size() + fir_outputs_per_thread - 1) /
                                   fir_outputs_per_thread * fir_outputs_per_thread;
        std::vector<cfloat> taps(padded, cfloat(0.0f, 0.0f));
        std::copy(ref.taps.begin(), ref.taps.end(), taps.begin());
        d_taps = upload(taps);
        d_taps_padded = padded;
    }

    cudaStream_t d_stream;
    const bool d_dependent; // launch overlap_save_rows as a dependent launch (sm_90+)
    //! overlap_save_rows' STREAM: the compressed CPI stays in L2 for the next kernel.
    const bool d_os_stream_loads = fits_in_l2(d_rows * d_nrange * sizeof(cfloat), who);
    // fft
    std::size_t d_nfft = 0;
    std::unique_ptr<cufft_plan_1d> d_plan; // every row
    device_memory d_work;                  // rows x nfft
    device_memory d_spectrum;              // nfft
    // overlap_save
    device_memory d_os_spectrum;   // F, digit-reversed order
    device_memory d_os_twiddle_rs; // F: the radix-RS passes' (dft_pass_twiddles)
    device_memory d_os_twiddle_16; // F / RS: the radix-16 passes'
    std::size_t d_os_fft = 0;
    unsigned d_os_log2 = 0;
    // fir
    device_memory d_taps; // d_taps_padded, zeros past L
    std::size_t d_taps_padded = 0;
};

} // namespace

std::unique_ptr<pulse_compression_cuda_engine>
make_pulse_compression_cuda(std::size_t nrange,
                            std::size_t rows,
                            const std::vector<cfloat>& waveform,
                            const window_spec& window,
                            bool normalize,
                            pulse_compression::method m,
                            stream_ref stream,
                            std::size_t fft_length,
                            sample_format input)
{
    return std::make_unique<pulse_compression_cuda>(
        nrange, rows, waveform, window, normalize, m, stream, fft_length, input);
}

} // namespace gpuradar::kernels::detail
