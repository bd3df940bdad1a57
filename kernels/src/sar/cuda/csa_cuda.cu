/*
 * CUDA chirp-scaling focusing (csa_backends.h has the maths).
 *
 * Device memory: the image buffer is the work array (azimuth FFT raw -> image, then in
 * place), one cuFFT work area shared by the plans, the per-row phase coefficients and
 * the windows; on the cuFFT range path squinted geometry adds one naz x nrange scratch
 * for the range resampler (which reads neighbouring samples, so it cannot run in place
 * there).
 *
 * Passes over the matrix: the azimuth FFT and its inverse around the range stage. The
 * azimuth transform is the module's four-step one (csa_azimuth_fft.h: two passes each
 * way, the rows left in digit-reversed bin order, so the per-row tables are uploaded
 * in that order) when naz is a power of two it supports, else batched cuFFT over
 * strided columns (one pass while a column fits a block). The range stage is one fused
 * pass (csa_range_rows.h) when nrange is a power of two it supports, else two batched
 * range FFTs and three elementwise kernels. Every phase is computed from the row's
 * three coefficients (double, x^2 included), so no phase matrix is ever stored.
 */
#include "common/cuda/complex_math.cuh"
#include "common/cuda/cuda_check.h"
#include "common/cuda/cufft_plan.h"
#include "common/cuda/device_upload.h"
#include "common/cuda/launch.h"
#include "common/dft_tables.h"
#include "sar/csa_backends.h"
#include "sar/cuda/csa_azimuth_fft.h"
#include "sar/cuda/csa_phase.cuh"
#include "sar/cuda/csa_range_rows.h"
#include <cuda_runtime.h>
#include <algorithm>
#include <optional>

namespace gpuradar::kernels::detail {
namespace {

constexpr const char* who = "csa";

__device__ __forceinline__ float2 scale(float2 a, float w)
{
    return make_float2(a.x * w, a.y * w);
}

//! Rows are blockIdx.y (grid-stride), columns threads (grid-stride in x).
#define CSA_FOR_EACH_ELEMENT(na, nr)                                             \
    for (std::size_t m = blockIdx.y; m < (na); m += gridDim.y)                   \
        for (std::size_t k = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; \
             k < (nr);                                                           \
             k += std::size_t(gridDim.x) * blockDim.x)

//! Chirp scaling; rows outside the processed Doppler band are zeroed.
__global__ void csa_phase1(float2* __restrict__ d,
                           const csa_quadratic* __restrict__ q,
                           const float* __restrict__ wa,
                           std::size_t na,
                           std::size_t nr)
{
    CSA_FOR_EACH_ELEMENT(na, nr)
    {
        float2& v = d[m * nr + k];
        v = wa[m] == 0.0f ? make_float2(0.0f, 0.0f)
                          : cmul(v, csa_phasor(q[m], static_cast<double>(k)));
    }
}

//! Range compression, SRC, bulk RCMC and the range window (2-D frequency domain).
__global__ void csa_phase2(float2* __restrict__ d,
                           const csa_quadratic* __restrict__ q,
                           const float* __restrict__ wr,
                           const float* __restrict__ wa,
                           std::size_t na,
                           std::size_t nr)
{
    CSA_FOR_EACH_ELEMENT(na, nr)
    {
        if (wa[m] == 0.0f)
            continue;
        const double x =
            csa_signed_bin(static_cast<unsigned>(k), static_cast<unsigned>(nr));
        float2& v = d[m * nr + k];
        v = scale(cmul(v, csa_phasor(q[m], x)), wr[k]);
    }
}

//! Residual phase, azimuth compression, azimuth window and FFT scale, in place.
__global__ void csa_phase3(float2* __restrict__ d,
                           const csa_quadratic* __restrict__ q,
                           const float* __restrict__ wa,
                           std::size_t na,
                           std::size_t nr)
{
    CSA_FOR_EACH_ELEMENT(na, nr)
    {
        float2& v = d[m * nr + k];
        v = scale(cmul(v, csa_phasor(q[m], static_cast<double>(k))), wa[m]);
    }
}

//! As csa_phase3, reading the row resampled onto the zero-Doppler grid from `in`.
__global__ void csa_phase3_resampled(const float2* __restrict__ in,
                                     float2* __restrict__ out,
                                     const csa_quadratic* __restrict__ q,
                                     const float* __restrict__ wa,
                                     const int* __restrict__ first,
                                     const float* __restrict__ taps,
                                     std::size_t na,
                                     std::size_t nr)
{
    CSA_FOR_EACH_ELEMENT(na, nr)
    {
        float2 acc = make_float2(0.0f, 0.0f);
        if (wa[m] != 0.0f) {
            const float2* src = in + m * nr + first[k];
            const float* h = taps + k * csa_resample_taps;
#pragma unroll
            for (int t = 0; t < csa_resample_taps; ++t) {
                acc.x = fmaf(h[t], src[t].x, acc.x);
                acc.y = fmaf(h[t], src[t].y, acc.y);
            }
            acc = scale(cmul(acc, csa_phasor(q[m], static_cast<double>(k))), wa[m]);
        }
        out[m * nr + k] = acc;
    }
}

//! Per-row tables in the order the four-step azimuth transform leaves the rows.
template <typename T>
std::vector<T> in_row_order(const std::vector<T>& per_bin)
{
    std::vector<T> out(per_bin.size());
    for (std::size_t row = 0; row < out.size(); ++row)
        out[row] = per_bin[csa_azimuth_fft_bin(row, per_bin.size())];
    return out;
}

//! csa_make_tables, with the per-row tables in row order when `four_step`.
csa_tables tables_for(const stripmap_params& p,
                      std::size_t naz,
                      const csa::options& o,
                      bool four_step)
{
    csa_tables t = csa_make_tables(p, naz, o);
    if (four_step) {
        t.phase1 = in_row_order(t.phase1);
        t.phase2 = in_row_order(t.phase2);
        t.phase3 = in_row_order(t.phase3);
        t.azimuth_weight = in_row_order(t.azimuth_weight);
    }
    return t;
}

class csa_cuda final : public csa
{
public:
    csa_cuda(const stripmap_params& p, std::size_t naz, const options& o, stream_ref s)
        : csa(p, naz),
          d_stream(native(s)),
          d_four_step(csa_azimuth_fft_supported(naz)),
          d_t(tables_for(p, naz, o, d_four_step)),
          d_fused(csa_range_rows_supported(p.nrange)),
          d_range_launch(d_fused ? csa_range_rows_prepare(p.nrange, naz)
                                 : csa_range_rows_launch{}),
          d_phase1(upload(d_t.phase1, d_stream, who)),
          d_phase2(upload(d_t.phase2, d_stream, who)),
          d_phase3(upload(d_t.phase3, d_stream, who)),
          d_range_weight(upload(d_t.range_weight, d_stream, who)),
          d_azimuth_weight(upload(d_t.azimuth_weight, d_stream, who)),
          d_first(upload(d_t.resample_first, d_stream, who)),
          d_taps(upload(d_t.resample_taps, d_stream, who)),
          d_twiddle(upload(
              d_fused ? dft_twiddles(p.nrange) : std::vector<cfloat>{}, d_stream, who)),
          d_scratch(d_t.resample && !d_fused ? naz * p.nrange * sizeof(cfloat) : 0)
    {
        if (d_four_step)
            d_az_four_step.emplace(naz, p.nrange, d_stream);
        else
            d_az.emplace(n(naz), n(p.nrange), n(p.nrange), 1, d_stream, who, shared);
        if (!d_fused)
            d_rg.emplace(n(p.nrange), n(naz), 1, n(p.nrange), d_stream, who, shared);
        d_work = device_memory(std::max(d_az ? d_az->work_size() : std::size_t(0),
                                        d_rg ? d_rg->work_size() : std::size_t(0)));
        if (d_az)
            d_az->set_work_area(d_work.get(), who);
        if (d_rg)
            d_rg->set_work_area(d_work.get(), who);
        // The uploads read host tables this object owns: done before run() can race.
        GPURADAR_CUDA_CHECK(who, cudaStreamSynchronize(d_stream));
    }

    void run(const cfloat* raw, cfloat* image) override
    {
        auto* in = reinterpret_cast<cufftComplex*>(const_cast<cfloat*>(raw));
        auto* img = reinterpret_cast<cufftComplex*>(image);
        if (d_az_four_step)
            d_az_four_step->forward(reinterpret_cast<const float2*>(raw),
                                    reinterpret_cast<float2*>(image),
                                    d_stream);
        else
            GPURADAR_CUFFT_CHECK(who, cufftExecC2C(d_az->get(), in, img, CUFFT_FORWARD));
        if (d_fused)
            range_stage_fused(reinterpret_cast<float2*>(image));
        else
            range_stage_cufft(img);
        if (d_az_four_step)
            d_az_four_step->inverse(reinterpret_cast<float2*>(image), d_stream);
        else
            GPURADAR_CUFFT_CHECK(who, cufftExecC2C(d_az->get(), img, img, CUFFT_INVERSE));
    }

    int passes() const override { return (d_az_four_step ? 4 : 2) + (d_fused ? 1 : 5); }

private:
    void range_stage_fused(float2* rows)
    {
        csa_range_rows_args a{};
        a.rows = rows;
        a.q1 = d_phase1.as<csa_quadratic>();
        a.q2 = d_phase2.as<csa_quadratic>();
        a.q3 = d_phase3.as<csa_quadratic>();
        a.range_weight = d_range_weight.as<float>();
        a.azimuth_weight = d_azimuth_weight.as<float>();
        a.resample_first = d_t.resample ? d_first.as<int>() : nullptr;
        a.resample_taps = d_t.resample ? d_taps.as<float>() : nullptr;
        a.twiddle = d_twiddle.as<float2>();
        a.naz = d_naz;
        a.nrange = static_cast<unsigned>(d_t.nrange);
        csa_range_rows(a, d_range_launch, d_stream);
    }

    void range_stage_cufft(cufftComplex* img)
    {
        const std::size_t na = d_naz, nr = d_t.nrange;
        auto* dev = reinterpret_cast<float2*>(img);
        const dim3 block(elementwise_threads);
        const dim3 grid(
            static_cast<unsigned>((nr + elementwise_threads - 1) / elementwise_threads),
            static_cast<unsigned>(std::min<std::size_t>(na, 65535)));
        csa_phase1<<<grid, block, 0, d_stream>>>(
            dev, d_phase1.as<csa_quadratic>(), d_azimuth_weight.as<float>(), na, nr);
        GPURADAR_CUDA_CHECK_LAUNCH(who, "csa_phase1");
        GPURADAR_CUFFT_CHECK(who, cufftExecC2C(d_rg->get(), img, img, CUFFT_FORWARD));
        csa_phase2<<<grid, block, 0, d_stream>>>(dev,
                                                 d_phase2.as<csa_quadratic>(),
                                                 d_range_weight.as<float>(),
                                                 d_azimuth_weight.as<float>(),
                                                 na,
                                                 nr);
        GPURADAR_CUDA_CHECK_LAUNCH(who, "csa_phase2");
        if (d_t.resample) {
            auto* tmp = d_scratch.as<cufftComplex>();
            GPURADAR_CUFFT_CHECK(who, cufftExecC2C(d_rg->get(), img, tmp, CUFFT_INVERSE));
            csa_phase3_resampled<<<grid, block, 0, d_stream>>>(
                reinterpret_cast<const float2*>(tmp),
                dev,
                d_phase3.as<csa_quadratic>(),
                d_azimuth_weight.as<float>(),
                d_first.as<int>(),
                d_taps.as<float>(),
                na,
                nr);
            GPURADAR_CUDA_CHECK_LAUNCH(who, "csa_phase3_resampled");
        } else {
            GPURADAR_CUFFT_CHECK(who, cufftExecC2C(d_rg->get(), img, img, CUFFT_INVERSE));
            csa_phase3<<<grid, block, 0, d_stream>>>(
                dev, d_phase3.as<csa_quadratic>(), d_azimuth_weight.as<float>(), na, nr);
            GPURADAR_CUDA_CHECK_LAUNCH(who, "csa_phase3");
        }
    }

    static int n(std::size_t v) { return static_cast<int>(v); }
    static constexpr cufft_plan_1d::shared_workspace_t shared{};

    cudaStream_t d_stream;
    const bool d_four_step; //!< the azimuth FFT is csa_azimuth_fft (else cuFFT)
    const csa_tables d_t;
    const bool d_fused; //!< the range stage is csa_range_rows (else cuFFT + kernels)
    const csa_range_rows_launch d_range_launch;    //!< when d_fused
    std::optional<csa_azimuth_fft> d_az_four_step; //!< when naz suits it
    std::optional<cufft_plan_1d> d_az;             //!< otherwise
    std::optional<cufft_plan_1d> d_rg;
    device_memory d_phase1, d_phase2, d_phase3, d_range_weight, d_azimuth_weight;
    device_memory d_first, d_taps, d_twiddle, d_scratch;
    device_memory d_work;
};

} // namespace

std::unique_ptr<csa> make_csa_cuda(const stripmap_params& p,
                                   std::size_t naz,
                                   const csa::options& o,
                                   stream_ref s)
{
    return std::make_unique<csa_cuda>(p, naz, o, s);
}

} // namespace gpuradar::kernels::detail
