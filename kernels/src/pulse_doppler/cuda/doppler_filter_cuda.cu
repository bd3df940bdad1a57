/*
 * CUDA Doppler filter: doppler_prepare writes the cancelled, windowed (and modulated, for
 * fftshift) rows zero-padded to nfft straight into `out`; one in-place batched cuFFT over
 * `out` finishes. Two passes in all: no workspace, no separate pad, shift or scale
 * kernel.
 */
#include "common/cuda/complex_math.cuh"
#include "common/cuda/cuda_check.h"
#include "common/cuda/cufft_plan.h"
#include "common/cuda/launch.h"
#include "pulse_doppler/doppler_filter_backends.h"
#include <cuda_runtime.h>
#include <limits>

namespace gpuradar::kernels::detail {
namespace {

constexpr const char* who = "doppler_filter";

/*
 * One thread per output sample (grid-stride over rows*nfft, flattened so that short
 * Doppler rows still fill whole warps). Neighbouring threads read neighbouring pulses,
 * so the canceller's x[n+1], x[n+2] come from the same cache lines. Index is 32-bit when
 * rows*nfft fits (cheaper division), else 64-bit.
 */
template <int Order, typename Index>
__global__ void doppler_prepare(const float2* __restrict__ in,
                                float2* __restrict__ out,
                                const float2* __restrict__ weights,
                                Index npulses,
                                Index m,
                                Index nfft,
                                Index total)
{
    const Index stride = Index(gridDim.x) * blockDim.x;
    for (Index i = Index(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
        const Index r = i / nfft;
        const Index n = i - r * nfft;
        float2 v = make_float2(0.0f, 0.0f);
        if (n < m) {
            const float2* x = in + r * npulses + n;
            if (Order == 0) {
                v = x[0];
            } else if (Order == 1) {
                const float2 a = x[0], b = x[1];
                v = make_float2(b.x - a.x, b.y - a.y);
            } else {
                const float2 a = x[0], b = x[1], c = x[2];
                v = make_float2(fmaf(-2.0f, b.x, a.x + c.x), fmaf(-2.0f, b.y, a.y + c.y));
            }
            v = cmul(v, __ldg(weights + n));
        }
        out[i] = v;
    }
}

template <int Order, typename Index>
void launch_prepare(const float2* in,
                    float2* out,
                    const float2* weights,
                    std::size_t npulses,
                    std::size_t m,
                    std::size_t nfft,
                    std::size_t rows,
                    cudaStream_t s)
{
    const std::size_t total = rows * nfft;
    doppler_prepare<Order, Index>
        <<<elementwise_blocks(total), elementwise_threads, 0, s>>>(
            in, out, weights, Index(npulses), Index(m), Index(nfft), Index(total));
    GPURADAR_CUDA_CHECK_LAUNCH(who, "doppler_prepare");
}

class doppler_filter_cuda final : public doppler_filter
{
public:
    doppler_filter_cuda(std::size_t npulses,
                        std::size_t rows,
                        std::size_t nfft,
                        mti_mode mti,
                        const window_spec& window,
                        bool fftshift,
                        stream_ref s)
        : doppler_filter(npulses, rows, nfft, mti, window, fftshift),
          d_stream(native(s)),
          d_plan(int(nfft), int(rows), 1, int(nfft), d_stream, who)
    {
        const auto w = make_weights();
        d_weights = device_memory(w.size() * sizeof(float2));
        copy_async(d_weights.get(),
                   w.data(),
                   d_weights.size(),
                   copy_kind::host_to_device,
                   s,
                   who);
        // The host table dies with this scope.
        GPURADAR_CUDA_CHECK(who, cudaStreamSynchronize(d_stream));
    }

    void run(const cfloat* in, cfloat* out) override
    {
        const auto* x = reinterpret_cast<const float2*>(in);
        auto* y = reinterpret_cast<float2*>(out);
        const auto* w = d_weights.as<float2>();
        const std::size_t m = mti_output_length();
        const bool narrow = d_rows * d_nfft <= std::numeric_limits<unsigned>::max();
        const auto order = mti_order(d_mti);
        if (narrow) {
            if (order == 0)
                launch_prepare<0, unsigned>(
                    x, y, w, d_npulses, m, d_nfft, d_rows, d_stream);
            else if (order == 1)
                launch_prepare<1, unsigned>(
                    x, y, w, d_npulses, m, d_nfft, d_rows, d_stream);
            else
                launch_prepare<2, unsigned>(
                    x, y, w, d_npulses, m, d_nfft, d_rows, d_stream);
        } else {
            if (order == 0)
                launch_prepare<0, std::size_t>(
                    x, y, w, d_npulses, m, d_nfft, d_rows, d_stream);
            else if (order == 1)
                launch_prepare<1, std::size_t>(
                    x, y, w, d_npulses, m, d_nfft, d_rows, d_stream);
            else
                launch_prepare<2, std::size_t>(
                    x, y, w, d_npulses, m, d_nfft, d_rows, d_stream);
        }
        auto* z = reinterpret_cast<cufftComplex*>(y);
        GPURADAR_CUFFT_CHECK(who, cufftExecC2C(d_plan.get(), z, z, CUFFT_FORWARD));
    }

private:
    cudaStream_t d_stream;
    cufft_plan_1d d_plan;
    device_memory d_weights; // mti_output_length() complex weights
};

} // namespace

std::unique_ptr<doppler_filter> make_doppler_filter_cuda(std::size_t npulses,
                                                         std::size_t rows,
                                                         std::size_t nfft,
                                                         doppler_filter::mti_mode mti,
                                                         const window_spec& window,
                                                         bool fftshift,
                                                         stream_ref stream)
{
    return std::make_unique<doppler_filter_cuda>(
        npulses, rows, nfft, mti, window, fftshift, stream);
}

} // namespace gpuradar::kernels::detail
