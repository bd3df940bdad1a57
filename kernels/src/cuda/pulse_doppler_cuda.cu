/*
 * CUDA pulse_doppler. Passes over one CPI of N complex samples (N = npulses * channels *
 * nrange), F = pulse-compression FFT length, rows = npulses * channels:
 *  - pulse compression (pulse_compression's CUDA engine). overlap_save (automatic's
 *    choice for fir_crossover_taps_cuda < L <= overlap_save_auto_max_taps): one kernel,
 *    the compressed CPI in a plain buffer (row stride nrange), which the fused Doppler
 *    kernel reads. fir: the same buffer. fft with separate kernels:
 *    pad, forward FFT, spectrum product, inverse FFT; the rows stay in its workspace
 *    (row stride F: no strip pass). With cuFFT callbacks (fusion.pc_callbacks): two
 *    passes, result in a compressed CPI buffer (row stride nrange).
 *  - fused Doppler (fusion.fused_doppler, power-of-two nfft up to 4096): ONE kernel reads
 *    a tile of range bins for every pulse (the corner turn is in its load), applies the
 *    canceller, window and fftshift modulation, runs the Doppler FFT in shared memory
 *    and writes the envelope straight into the range-major map: 8N bytes read, 4 N * nfft
 *    / npulses written, instead of corner turn (16N) + prepare and in-place FFT (32N) +
 *    envelope (12N).
 *  - otherwise corner_turn, doppler_filter and envelope objects, as separate kernels.
 */
#include "../pulse_compression_backends.h"
#include "../pulse_doppler_backends.h"
#include "complex_math.cuh"
#include "cuda_check.h"
#include "smem_fft.cuh"
#include <cuda_runtime.h>
#include <gpuradar/kernels/corner_turn.h>
#include <algorithm>
#include <cmath>
#include <string>

namespace gpuradar::kernels::detail {
namespace {

constexpr const char* who = "pulse_doppler";

//! Fused Doppler kernel: threads per block (8 warps keep the tile loads in flight).
constexpr int fd_threads = 256;
//! Complex samples per block tile (range bins x nfft): 32 KiB + padding, under the 48 KiB
//! a block gets without opting in, 6 blocks per H100 SM.
constexpr unsigned fd_tile_samples = 4096;
//! Most range bins per tile: 32 consecutive bins are one 256-byte run per pulse.
constexpr unsigned fd_max_bins = 32;
//! Samples each thread fetches before storing any (memory-level parallelism: 6 blocks x
//! 256 threads x 4 x 8 B in flight per SM covers the H100's latency-bandwidth product).
constexpr int fd_batch = 4;
//! Longest Doppler FFT the fused kernel takes (one range bin fills the tile).
constexpr std::size_t fd_max_nfft = fd_tile_samples;

struct fd_args {
    const float2* x;     // compressed CPI: sample (p, c, r) at p*pstride + c*cstride + r
    std::size_t pstride; // samples between pulses
    std::size_t cstride; // samples between channels of one pulse
    const float2* weights; // m: window x fftshift modulation
    const float2* twiddle; // nfft/2: exp(-2 pi i t / nfft)
    float* out;            // ((r * channels + c) * nfft + k)
    unsigned nrange, channels, npulses, m, order, nfft, log2n, bins;
    unsigned env_linear, env_db;
};

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
        const float2 y = sm[j * S + k];
        const float pw = fmaf(y.x, y.x, y.y * y.y);
        float v;
        if (a.env_db)
            v = 10.0f * log10f(pw);
        else
            v = a.env_linear ? sqrtf(pw) : pw;
        a.out[(std::size_t(r) * a.channels + c) * n_fft + k] = v;
    }
}

bool fused_doppler_fits(std::size_t nfft)
{
    return nfft >= 2 && nfft <= fd_max_nfft && (nfft & (nfft - 1)) == 0;
}

class pulse_doppler_cuda final : public pulse_doppler
{
public:
    pulse_doppler_cuda(const params& p, stream_ref s, const fusion& f)
        : pulse_doppler(p),
          d_stream(native(s)),
          d_pc(make_pulse_compression_cuda_engine(p.nrange,
                                                  p.npulses * p.channels,
                                                  p.waveform,
                                                  p.range_window,
                                                  p.normalize,
                                                  p.pc_method,
                                                  s,
                                                  0,
                                                  f.pc_callbacks,
                                                  f.pc_rows_per_batch)),
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

    void run(const cfloat* in, float* out) override
    {
        cfloat* a = d_compressed.as<cfloat>();
        if (!d_fused) {
            d_pc->run(in, a);
            d_ct->run(a, d_turned.as<cfloat>());
            d_df->run(d_turned.as<cfloat>(), d_doppler.as<cfloat>());
            d_env->run(d_doppler.as<cfloat>(), out, output_size());
            return;
        }
        const pc_rows_view v = d_pc->run_view(in, a);
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
        const std::size_t smem = std::size_t(d_bins) * (p.nfft + 1) * sizeof(float2);
        fused_doppler<<<grid, fd_threads, smem, d_stream>>>(args);
        GPURADAR_CUDA_CHECK_LAUNCH(who, "fused_doppler");
    }

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
    void upload_tables()
    {
        const auto& p = d_params;
        const std::size_t nfft = p.nfft;
        d_log2n = 0;
        while ((std::size_t(1) << d_log2n) < nfft)
            ++d_log2n;
        d_bins = static_cast<unsigned>(std::min<std::size_t>(
            fd_max_bins, std::max<std::size_t>(1, fd_tile_samples / nfft)));
        const auto w = pulse_doppler_weights(p);
        std::vector<cfloat> tw(std::max<std::size_t>(nfft / 2, 1));
        for (std::size_t t = 0; t < tw.size(); ++t) {
            // Angles in double from the integer ratio: exact to float rounding.
            const double ang = -2.0 * 3.14159265358979323846 * double(t) / double(nfft);
            tw[t] = cfloat(float(std::cos(ang)), float(std::sin(ang)));
        }
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
    std::unique_ptr<pulse_compression_cuda_engine> d_pc;
    device_memory d_compressed; // pulse-major compressed CPI (when pc writes it)
    // fused Doppler
    bool d_fused = false;
    device_memory d_weights, d_twiddle;
    unsigned d_log2n = 0, d_bins = 1;
    std::string d_fused_why;
    // separate path
    std::unique_ptr<corner_turn> d_ct;
    std::unique_ptr<doppler_filter> d_df;
    std::unique_ptr<envelope> d_env;
    device_memory d_turned, d_doppler;
};

} // namespace

std::unique_ptr<pulse_doppler> make_pulse_doppler_cuda(const pulse_doppler_params& p,
                                                       stream_ref stream,
                                                       const pulse_doppler_fusion& f)
{
    return std::make_unique<pulse_doppler_cuda>(p, stream, f);
}

} // namespace gpuradar::kernels::detail
