/* CUDA envelope: bandwidth-bound (8 B in, 4 B out per sample), 16-byte loads. */
#include "common/cuda/cuda_check.h"
#include "common/cuda/launch.h"
#include "pulse_doppler/envelope_backends.h"
#include <cuda_runtime.h>

namespace gpuradar::kernels::detail {
namespace {

template <bool Linear, bool Db>
__device__ __forceinline__ float detect(float re, float im)
{
    const float p = fmaf(re, re, im * im);
    if (Db)
        return Linear ? 20.0f * log10f(sqrtf(p)) : 10.0f * log10f(p);
    return Linear ? sqrtf(p) : p;
}

// Each thread handles two samples per step: one float4 load, one float2 store.
template <bool Linear, bool Db>
__global__ void envelope_pairs(const float4* __restrict__ in,
                               float2* __restrict__ out,
                               std::size_t npairs)
{
    const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
    for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < npairs;
         i += stride) {
        const float4 v = in[i];
        out[i] = make_float2(detect<Linear, Db>(v.x, v.y), detect<Linear, Db>(v.z, v.w));
    }
}

// Unaligned pointers or an odd tail: one sample per thread.
template <bool Linear, bool Db>
__global__ void
envelope_single(const float2* __restrict__ in, float* __restrict__ out, std::size_t n)
{
    const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
    for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += stride) {
        const float2 v = in[i];
        out[i] = detect<Linear, Db>(v.x, v.y);
    }
}

template <bool Linear, bool Db>
void launch(const cfloat* in, float* out, std::size_t n, cudaStream_t s)
{
    const bool aligned = reinterpret_cast<std::uintptr_t>(in) % sizeof(float4) == 0 &&
                         reinterpret_cast<std::uintptr_t>(out) % sizeof(float2) == 0;
    std::size_t done = 0;
    if (aligned && n >= 2) {
        const std::size_t npairs = n / 2;
        envelope_pairs<Linear, Db>
            <<<elementwise_blocks(npairs), elementwise_threads, 0, s>>>(
                reinterpret_cast<const float4*>(in),
                reinterpret_cast<float2*>(out),
                npairs);
        GPURADAR_CUDA_CHECK_LAUNCH("envelope", "envelope_pairs");
        done = 2 * npairs;
    }
    if (done < n) {
        envelope_single<Linear, Db>
            <<<elementwise_blocks(n - done), elementwise_threads, 0, s>>>(
                reinterpret_cast<const float2*>(in + done), out + done, n - done);
        GPURADAR_CUDA_CHECK_LAUNCH("envelope", "envelope_single");
    }
}

class envelope_cuda final : public envelope
{
public:
    envelope_cuda(mode m, bool db, stream_ref s) : envelope(m, db), d_stream(native(s)) {}

    void run(const cfloat* in, float* out, std::size_t n) override
    {
        if (n == 0)
            return;
        const bool linear = d_mode == mode::linear;
        if (linear)
            d_db ? launch<true, true>(in, out, n, d_stream)
                 : launch<true, false>(in, out, n, d_stream);
        else
            d_db ? launch<false, true>(in, out, n, d_stream)
                 : launch<false, false>(in, out, n, d_stream);
    }

private:
    cudaStream_t d_stream;
};

} // namespace

std::unique_ptr<envelope> make_envelope_cuda(envelope::mode m, bool db, stream_ref s)
{
    return std::make_unique<envelope_cuda>(m, db, s);
}

} // namespace gpuradar::kernels::detail
