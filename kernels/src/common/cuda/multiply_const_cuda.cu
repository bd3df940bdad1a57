/* CUDA complex gain: bandwidth-bound (8 B in, 8 B out per sample), 16-byte accesses. */
#include "common/cuda/complex_math.cuh"
#include "common/cuda/cuda_check.h"
#include "common/cuda/launch.h"
#include "common/multiply_const_backends.h"
#include <cuda_runtime.h>

namespace gpuradar::kernels::detail {
namespace {

// Two samples per thread per step (one float4). No __restrict__: in == out is allowed.
__global__ void
multiply_const_pairs(const float4* in, float4* out, std::size_t npairs, float2 k)
{
    const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
    for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < npairs;
         i += stride) {
        const float4 v = in[i];
        const float2 a = cmul(make_float2(v.x, v.y), k);
        const float2 b = cmul(make_float2(v.z, v.w), k);
        out[i] = make_float4(a.x, a.y, b.x, b.y);
    }
}

__global__ void
multiply_const_single(const float2* in, float2* out, std::size_t n, float2 k)
{
    const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
    for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += stride)
        out[i] = cmul(in[i], k);
}

class multiply_const_cuda final : public multiply_const
{
public:
    explicit multiply_const_cuda(stream_ref s) : d_stream(native(s)) {}

    void run(const cfloat* in, cfloat* out, std::size_t n, cfloat k) override
    {
        if (n == 0)
            return;
        const float2 kk = make_float2(k.real(), k.imag());
        const bool aligned = reinterpret_cast<std::uintptr_t>(in) % sizeof(float4) == 0 &&
                             reinterpret_cast<std::uintptr_t>(out) % sizeof(float4) == 0;
        std::size_t done = 0;
        if (aligned && n >= 2) {
            const std::size_t npairs = n / 2;
            multiply_const_pairs<<<elementwise_blocks(npairs),
                                   elementwise_threads,
                                   0,
                                   d_stream>>>(reinterpret_cast<const float4*>(in),
                                               reinterpret_cast<float4*>(out),
                                               npairs,
                                               kk);
            GPURADAR_CUDA_CHECK_LAUNCH("multiply_const", "multiply_const_pairs");
            done = 2 * npairs;
        }
        if (done < n) {
            multiply_const_single<<<elementwise_blocks(n - done),
                                    elementwise_threads,
                                    0,
                                    d_stream>>>(
                reinterpret_cast<const float2*>(in + done),
                reinterpret_cast<float2*>(out + done),
                n - done,
                kk);
            GPURADAR_CUDA_CHECK_LAUNCH("multiply_const", "multiply_const_single");
        }
    }

private:
    cudaStream_t d_stream;
};

} // namespace

std::unique_ptr<multiply_const> make_multiply_const_cuda(stream_ref s)
{
    return std::make_unique<multiply_const_cuda>(s);
}

} // namespace gpuradar::kernels::detail
