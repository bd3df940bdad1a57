/* Device-side loads of input samples in an SDR's format (sample_convert.h), converted to
 * complex float at 1.0 = full scale as they are read: what lets a stage's first kernel
 * take sc16 / sc8 straight from the copy to the GPU, with no conversion pass. */
#ifndef INCLUDED_GPURADAR_KERNELS_SAMPLE_CONVERT_CUH
#define INCLUDED_GPURADAR_KERNELS_SAMPLE_CONVERT_CUH

#include <cuda_runtime.h>
#include <gpuradar/kernels/common/sample_convert.h>

namespace gpuradar::kernels::detail {

// One complex sample per element: float2 (fc32), short2 (sc16: int16 I then Q, 4-byte
// aligned whenever the buffer is, as sample offsets are whole samples), char2 (sc8:
// signed char I, Q). The scale is a power of two, so __fmul_rn gives the exact quotient:
// the same bits as VOLK's conversion on the CPU twin and as sample_convert's kernel.
__device__ __forceinline__ float2 sample_to_float2(float2 v) { return v; }
__device__ __forceinline__ float2 sample_to_float2(short2 v)
{
    constexpr float inv = 1.0f / sc16_full_scale_code;
    return make_float2(__fmul_rn(static_cast<float>(v.x), inv),
                       __fmul_rn(static_cast<float>(v.y), inv));
}
__device__ __forceinline__ float2 sample_to_float2(char2 v)
{
    constexpr float inv = 1.0f / sc8_full_scale_code;
    return make_float2(__fmul_rn(static_cast<float>(v.x), inv),
                       __fmul_rn(static_cast<float>(v.y), inv));
}

//! The device element type of a format, for kernels templated on their input.
template <sample_format F>
struct sample_element;
template <>
struct sample_element<sample_format::fc32> {
    using type = float2;
};
template <>
struct sample_element<sample_format::sc16> {
    using type = short2;
};
template <>
struct sample_element<sample_format::sc8> {
    using type = char2;
};

static_assert(sizeof(short2) == 4 && sizeof(char2) == 2 && sizeof(float2) == 8,
              "one element is one complex sample of its format (sample_bytes)");

} // namespace gpuradar::kernels::detail

#endif
