/* Complex float2 arithmetic for the stage kernels (internal, device code). */
#ifndef INCLUDED_GPURADAR_KERNELS_COMPLEX_MATH_CUH
#define INCLUDED_GPURADAR_KERNELS_COMPLEX_MATH_CUH

#include <cuda_runtime.h>

namespace gpuradar::kernels::detail {

//! a + b
__device__ __forceinline__ float2 cadd(float2 a, float2 b)
{
    return make_float2(a.x + b.x, a.y + b.y);
}

//! a - b
__device__ __forceinline__ float2 csub(float2 a, float2 b)
{
    return make_float2(a.x - b.x, a.y - b.y);
}

//! a * b
__device__ __forceinline__ float2 cmul(float2 a, float2 b)
{
    return make_float2(fmaf(a.x, b.x, -a.y * b.y), fmaf(a.x, b.y, a.y * b.x));
}

//! acc += a * b
__device__ __forceinline__ void cmac(float2& acc, float2 a, float2 b)
{
    acc.x = fmaf(a.x, b.x, fmaf(-a.y, b.y, acc.x));
    acc.y = fmaf(a.x, b.y, fmaf(a.y, b.x, acc.y));
}

} // namespace gpuradar::kernels::detail

#endif
