/*
 * Cross-ambiguity map, CUDA: cuFFT batched plans and small elementwise kernels, the
 * steps of cross_ambiguity.h in the CPU twin's order.
 *  batched: gather the B surveillance batches (tapered) and reference segments into
 *           B x P rows, forward FFTs, conj(A) U, inverse FFTs, lags into M x B rows,
 *           FFTs of B across batches, map.
 *  direct:  the reference's spectrum once; per chunk of Doppler bins, the shifted and
 *           tapered surveillance rows, forward FFTs, conj(A) U, inverse FFTs, map.
 */
#include "common/cuda/cuda_check.h"
#include "common/cuda/cufft_plan.h"
#include "common/cuda/launch.h"
#include "passive/cross_ambiguity_backends.h"
#include <cuComplex.h>
#include <algorithm>
#include <optional>
#include <vector>

namespace gpuradar::kernels::detail {

namespace {

constexpr const char* who = "cross_ambiguity";
//! Direct method: Doppler rows transformed together, at most this many samples in all
//! (128 MiB a buffer), so long CPIs do not hold 2K+1 CPI-long rows at once.
constexpr std::size_t direct_chunk_samples = std::size_t(1) << 24;

__device__ inline cuFloatComplex cmul_conj_a(cuFloatComplex a, cuFloatComplex u)
{
    // conj(a) * u
    return make_cuFloatComplex(a.x * u.x + a.y * u.y, a.x * u.y - a.y * u.x);
}

//! a[b, i] = s[bL+i] w[b] (i < L), u[b, j] = r[bL+j-(M-1)] (0 <= that, j < L+M-1); 0
//! else.
__global__ void gather_batches(const cuFloatComplex* __restrict__ r,
                               const cuFloatComplex* __restrict__ s,
                               const float* __restrict__ w,
                               cuFloatComplex* __restrict__ a,
                               cuFloatComplex* __restrict__ u,
                               std::size_t nbatches,
                               std::size_t l,
                               std::size_t m,
                               std::size_t p)
{
    const std::size_t total = nbatches * p;
    for (std::size_t t = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; t < total;
         t += std::size_t(gridDim.x) * blockDim.x) {
        const std::size_t b = t / p, i = t % p;
        cuFloatComplex x = make_cuFloatComplex(0.f, 0.f);
        if (i < l) {
            x = s[b * l + i];
            x.x *= w[b];
            x.y *= w[b];
        }
        a[t] = x;
        const std::size_t idx = b * l + i;
        u[t] = (i < l + m - 1 && idx >= m - 1) ? r[idx - (m - 1)]
                                               : make_cuFloatComplex(0.f, 0.f);
    }
}

//! Doppler rows d = 0..rows-1 of bin k = k0 + d: a[d, n] = s[n] w[n] exp(-j 2 pi k n / N)
//! (n < N), 0 up to P. The phase from (k n mod N) in integers, as the CPU twin.
__global__ void gather_doppler_rows(const cuFloatComplex* __restrict__ s,
                                    const float* __restrict__ w,
                                    cuFloatComplex* __restrict__ a,
                                    std::size_t rows,
                                    long long k0,
                                    std::size_t n,
                                    std::size_t p)
{
    const std::size_t total = rows * p;
    for (std::size_t t = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; t < total;
         t += std::size_t(gridDim.x) * blockDim.x) {
        const std::size_t d = t / p, i = t % p;
        cuFloatComplex x = make_cuFloatComplex(0.f, 0.f);
        if (i < n) {
            long long k = (k0 + static_cast<long long>(d)) % static_cast<long long>(n);
            const unsigned long long kk =
                static_cast<unsigned long long>(k < 0 ? k + n : k);
            const double turns =
                static_cast<double>((kk * i) % n) / static_cast<double>(n);
            double sn, cs;
            sincospi(-2.0 * turns, &sn, &cs);
            const cuFloatComplex v = s[i];
            const float ws = w[i];
            const float c = static_cast<float>(cs), si = static_cast<float>(sn);
            x = make_cuFloatComplex(ws * (v.x * c - v.y * si), ws * (v.x * si + v.y * c));
        }
        a[t] = x;
    }
}

//! a[row, j] = conj(a[row, j]) u[(row or 0), j]: u_rows 1 broadcasts one spectrum.
__global__ void conj_multiply(cuFloatComplex* __restrict__ a,
                              const cuFloatComplex* __restrict__ u,
                              std::size_t rows,
                              std::size_t p,
                              bool broadcast_u)
{
    const std::size_t total = rows * p;
    for (std::size_t t = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; t < total;
         t += std::size_t(gridDim.x) * blockDim.x)
        a[t] = cmul_conj_a(a[t], u[broadcast_u ? t % p : t]);
}

//! corr[m' * B + b] = conj(h[b, M-1-m']) / P.
__global__ void lags_to_rows(const cuFloatComplex* __restrict__ h,
                             cuFloatComplex* __restrict__ corr,
                             std::size_t nbatches,
                             std::size_t m,
                             std::size_t p)
{
    const std::size_t total = nbatches * m;
    const float scale = 1.0f / static_cast<float>(p);
    for (std::size_t t = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; t < total;
         t += std::size_t(gridDim.x) * blockDim.x) {
        const std::size_t lag = t / nbatches, b = t % nbatches;
        const cuFloatComplex x = h[b * p + (m - 1 - lag)];
        corr[t] = make_cuFloatComplex(x.x * scale, -x.y * scale);
    }
}

__device__ inline float cell(cuFloatComplex x, bool db)
{
    const float p = x.x * x.x + x.y * x.y;
    return db ? 10.0f * log10f(fmaxf(p, caf_db_floor_power)) : p;
}

//! Batched: map[m', k + K] from corr[m' * B + (k mod B)].
__global__ void batched_map(const cuFloatComplex* __restrict__ corr,
                            float* __restrict__ map,
                            std::size_t nbatches,
                            std::size_t m,
                            long long kh,
                            bool db)
{
    const std::size_t nd = 2 * std::size_t(kh) + 1, total = m * nd;
    for (std::size_t t = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; t < total;
         t += std::size_t(gridDim.x) * blockDim.x) {
        const std::size_t lag = t / nd;
        const long long k = static_cast<long long>(t % nd) - kh;
        const std::size_t bin = k < 0 ? nbatches - std::size_t(-k) : std::size_t(k);
        map[t] = cell(corr[lag * nbatches + bin], db);
    }
}

//! Direct: rows d < valid of h (bin k0 + d) into map[m', k0 + d + K] = |conj(h[d,
//! M-1-m']) / P|^2.
__global__ void direct_map(const cuFloatComplex* __restrict__ h,
                           float* __restrict__ map,
                           std::size_t valid,
                           std::size_t first_column,
                           std::size_t nd,
                           std::size_t m,
                           std::size_t p,
                           bool db)
{
    const std::size_t total = valid * m;
    const float scale = 1.0f / static_cast<float>(p);
    for (std::size_t t = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; t < total;
         t += std::size_t(gridDim.x) * blockDim.x) {
        const std::size_t lag = t / valid, d = t % valid;
        const cuFloatComplex x = h[d * p + (m - 1 - lag)];
        map[lag * nd + first_column + d] =
            cell(make_cuFloatComplex(x.x * scale, x.y * scale), db);
    }
}

class cross_ambiguity_cuda final : public cross_ambiguity
{
public:
    cross_ambiguity_cuda(const cross_ambiguity_params& p, stream_ref s)
        : cross_ambiguity(p),
          d_stream(s),
          d_nbatches(p.nsamples / d_batch_length),
          d_nfft(caf_fft_length(d_batch_length + p.nrange - 1)),
          d_rows(d_method == caf_method::batched
                     ? d_nbatches
                     : std::min(2 * p.doppler_half + 1,
                                std::max<std::size_t>(1, direct_chunk_samples / d_nfft)))
    {
        const std::vector<double> taper = window_coefficients(
            p.window, d_method == caf_method::batched ? d_nbatches : p.nsamples);
        const std::vector<float> w(taper.begin(), taper.end());
        d_taper = device_memory(w.size() * sizeof(float));
        copy_async(d_taper.get(),
                   w.data(),
                   w.size() * sizeof(float),
                   copy_kind::host_to_device,
                   d_stream,
                   who);
        d_a = device_memory(d_rows * d_nfft * sizeof(cuFloatComplex));
        const cudaStream_t st = native(d_stream);
        d_rows_plan.emplace(int(d_nfft), int(d_rows), 1, int(d_nfft), st, who);
        if (d_method == caf_method::batched) {
            d_u = device_memory(d_nbatches * d_nfft * sizeof(cuFloatComplex));
            d_corr = device_memory(p.nrange * d_nbatches * sizeof(cuFloatComplex));
            d_doppler_plan.emplace(
                int(d_nbatches), int(p.nrange), 1, int(d_nbatches), st, who);
        } else {
            d_u = device_memory(d_nfft * sizeof(cuFloatComplex));
            d_ref_plan.emplace(int(d_nfft), 1, 1, int(d_nfft), st, who);
        }
        synchronize(d_stream, who); // the taper's upload, before `w` goes
    }

    void run(const cfloat* reference, const cfloat* surveillance, float* map) override
    {
        const auto* r = reinterpret_cast<const cuFloatComplex*>(reference);
        const auto* s = reinterpret_cast<const cuFloatComplex*>(surveillance);
        if (d_method == caf_method::batched)
            run_batched(r, s, map);
        else
            run_direct(r, s, map);
        synchronize(d_stream, who);
    }

private:
    void fft(const cufft_plan_1d& plan, cuFloatComplex* x, int direction)
    {
        GPURADAR_CUFFT_CHECK(who, cufftExecC2C(plan.get(), x, x, direction));
    }

    void run_batched(const cuFloatComplex* r, const cuFloatComplex* s, float* map)
    {
        const cudaStream_t st = native(d_stream);
        const std::size_t m = d_params.nrange, b = d_nbatches, p = d_nfft;
        auto* a = d_a.as<cuFloatComplex>();
        auto* u = d_u.as<cuFloatComplex>();
        auto* corr = d_corr.as<cuFloatComplex>();
        gather_batches<<<elementwise_blocks(b * p), elementwise_threads, 0, st>>>(
            r, s, d_taper.as<float>(), a, u, b, d_batch_length, m, p);
        GPURADAR_CUDA_CHECK_LAUNCH(who, "gather_batches");
        fft(*d_rows_plan, a, CUFFT_FORWARD);
        fft(*d_rows_plan, u, CUFFT_FORWARD);
        conj_multiply<<<elementwise_blocks(b * p), elementwise_threads, 0, st>>>(
            a, u, b, p, false);
        GPURADAR_CUDA_CHECK_LAUNCH(who, "conj_multiply");
        fft(*d_rows_plan, a, CUFFT_INVERSE);
        lags_to_rows<<<elementwise_blocks(b * m), elementwise_threads, 0, st>>>(
            a, corr, b, m, p);
        GPURADAR_CUDA_CHECK_LAUNCH(who, "lags_to_rows");
        fft(*d_doppler_plan, corr, CUFFT_FORWARD);
        batched_map<<<elementwise_blocks(m * ndoppler()), elementwise_threads, 0, st>>>(
            corr, map, b, m, static_cast<long long>(d_params.doppler_half), d_params.db);
        GPURADAR_CUDA_CHECK_LAUNCH(who, "batched_map");
    }

    void run_direct(const cuFloatComplex* r, const cuFloatComplex* s, float* map)
    {
        const cudaStream_t st = native(d_stream);
        const std::size_t m = d_params.nrange, p = d_nfft, nd = ndoppler();
        auto* a = d_a.as<cuFloatComplex>();
        auto* u = d_u.as<cuFloatComplex>();
        // the reference spectrum: u = r[-(M-1) .. N), one "batch" of the whole CPI
        gather_batches<<<elementwise_blocks(p), elementwise_threads, 0, st>>>(
            r, s, d_taper.as<float>(), a, u, 1, d_params.nsamples, m, p);
        GPURADAR_CUDA_CHECK_LAUNCH(who, "gather_batches");
        fft(*d_ref_plan, u, CUFFT_FORWARD);
        const long long kh = static_cast<long long>(d_params.doppler_half);
        for (std::size_t first = 0; first < nd; first += d_rows) {
            const std::size_t valid = std::min(d_rows, nd - first);
            gather_doppler_rows<<<elementwise_blocks(d_rows * p),
                                  elementwise_threads,
                                  0,
                                  st>>>(s,
                                        d_taper.as<float>(),
                                        a,
                                        d_rows,
                                        static_cast<long long>(first) - kh,
                                        d_params.nsamples,
                                        p);
            GPURADAR_CUDA_CHECK_LAUNCH(who, "gather_doppler_rows");
            fft(*d_rows_plan, a, CUFFT_FORWARD);
            conj_multiply<<<elementwise_blocks(d_rows * p), elementwise_threads, 0, st>>>(
                a, u, d_rows, p, true);
            GPURADAR_CUDA_CHECK_LAUNCH(who, "conj_multiply");
            fft(*d_rows_plan, a, CUFFT_INVERSE);
            direct_map<<<elementwise_blocks(valid * m), elementwise_threads, 0, st>>>(
                a, map, valid, first, nd, m, p, d_params.db);
            GPURADAR_CUDA_CHECK_LAUNCH(who, "direct_map");
        }
    }

    stream_ref d_stream;
    std::size_t d_nbatches, d_nfft, d_rows;
    device_memory d_taper, d_a, d_u, d_corr;
    std::optional<cufft_plan_1d> d_rows_plan, d_doppler_plan, d_ref_plan;
};

} // namespace

std::unique_ptr<cross_ambiguity>
make_cross_ambiguity_cuda(const cross_ambiguity_params& p, stream_ref s)
{
    return std::make_unique<cross_ambiguity_cuda>(p, s);
}

} // namespace gpuradar::kernels::detail
