/* CUDA sample conversion: SDR integers (sc16, sc8) to complex float at 1.0 = full scale,
 * row by row, so that a gather of range gates and the conversion are one pass. */
#include "common/cuda/cuda_check.h"
#include "common/cuda/launch.h"
#include "common/sample_convert_backends.h"
#include <cuda_runtime.h>
#include <cstdint>

namespace gpuradar::kernels::detail {
namespace {

constexpr const char* who = "gpuradar::sample_convert (cuda)";

// One thread per output sample (grid-stride over rows * row_len). Parts are read one
// integer at a time, so no alignment beyond the integer's own is assumed. The scale is a
// power of two: __fmul_rn gives the exact product, the same bits as the CPU twin's VOLK.
template <typename Int>
__global__ void convert_rows_kernel(const Int* __restrict__ src,
                                    std::size_t src_stride,
                                    float2* __restrict__ dst,
                                    std::size_t dst_stride,
                                    std::size_t row_len,
                                    std::size_t total,
                                    float inv_full_scale)
{
    const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
    for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
         i += stride) {
        const std::size_t r = i / row_len;
        const std::size_t c = i - r * row_len;
        const Int* p = src + 2 * (r * src_stride + c);
        dst[r * dst_stride + c] =
            make_float2(__fmul_rn(static_cast<float>(p[0]), inv_full_scale),
                        __fmul_rn(static_cast<float>(p[1]), inv_full_scale));
    }
}

class sample_convert_cuda final : public sample_convert
{
public:
    sample_convert_cuda(sample_format f, stream_ref s) : sample_convert(f), d_stream(s) {}

    void rows(const void* src,
              std::size_t src_stride,
              cfloat* dst,
              std::size_t dst_stride,
              std::size_t row_len,
              std::size_t nrows) override
    {
        if (row_len == 0 || nrows == 0)
            return;
        const auto stream = native(d_stream);
        const std::size_t total = row_len * nrows;
        const float inv = 1.0f / full_scale_code(format());
        auto* out = reinterpret_cast<float2*>(dst);
        switch (format()) {
        case sample_format::sc16:
            convert_rows_kernel<std::int16_t>
                <<<elementwise_blocks(total), elementwise_threads, 0, stream>>>(
                    static_cast<const std::int16_t*>(src),
                    src_stride,
                    out,
                    dst_stride,
                    row_len,
                    total,
                    inv);
            GPURADAR_CUDA_CHECK_LAUNCH(who, "convert_rows_kernel<int16_t>");
            break;
        case sample_format::sc8:
            convert_rows_kernel<std::int8_t>
                <<<elementwise_blocks(total), elementwise_threads, 0, stream>>>(
                    static_cast<const std::int8_t*>(src),
                    src_stride,
                    out,
                    dst_stride,
                    row_len,
                    total,
                    inv);
            GPURADAR_CUDA_CHECK_LAUNCH(who, "convert_rows_kernel<int8_t>");
            break;
        case sample_format::fc32:
        default:
            // Already complex float: one strided copy (rows = gates).
            GPURADAR_CUDA_CHECK(who,
                                cudaMemcpy2DAsync(dst,
                                                  dst_stride * sizeof(cfloat),
                                                  src,
                                                  src_stride * sizeof(cfloat),
                                                  row_len * sizeof(cfloat),
                                                  nrows,
                                                  cudaMemcpyDeviceToDevice,
                                                  stream));
            break;
        }
    }

private:
    stream_ref d_stream;
};

} // namespace

std::unique_ptr<sample_convert> make_sample_convert_cuda(sample_format f,
                                                         stream_ref stream)
{
    return std::make_unique<sample_convert_cuda>(f, stream);
}

} // namespace gpuradar::kernels::detail
