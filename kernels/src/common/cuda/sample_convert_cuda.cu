/* CUDA sample conversion: SDR integers (sc16, sc8) to complex float at 1.0 = full scale,
 * row by row, so that a gather of range gates and the conversion are one pass. */
#include "common/cuda/cuda_check.h"
#include "common/cuda/launch.h"
#include "common/sample_convert_backends.h"
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdint>

namespace gpuradar::kernels::detail {
namespace {

constexpr const char* who = "gpuradar::sample_convert (cuda)";
constexpr std::size_t max_grid_y = 65535; // CUDA's limit on gridDim.y

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

// fc32 rows: a plain 2-D copy, row r of the grid's y walk, range samples along x. A
// kernel rather than cudaMemcpy2DAsync: for the gates' short rows (tens of KB) the
// runtime's 2-D device copy moves them at well under the copy rate.
__global__ void copy_rows_kernel(const float2* __restrict__ src,
                                 std::size_t src_stride,
                                 float2* __restrict__ dst,
                                 std::size_t dst_stride,
                                 std::size_t row_len,
                                 std::size_t nrows)
{
    const std::size_t c0 = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    const std::size_t cstride = std::size_t(gridDim.x) * blockDim.x;
    for (std::size_t r = blockIdx.y; r < nrows; r += gridDim.y)
        for (std::size_t c = c0; c < row_len; c += cstride)
            dst[r * dst_stride + c] = src[r * src_stride + c];
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
        default: { // Already complex float: one strided copy (rows = gates).
            const std::size_t bx = std::min<std::size_t>(
                (row_len + elementwise_threads - 1) / elementwise_threads,
                elementwise_max_blocks);
            const std::size_t by = std::min<std::size_t>(
                { nrows,
                  max_grid_y,
                  std::max<std::size_t>(1, elementwise_max_blocks / bx) });
            copy_rows_kernel<<<dim3(static_cast<unsigned int>(bx),
                                    static_cast<unsigned int>(by)),
                               elementwise_threads,
                               0,
                               stream>>>(static_cast<const float2*>(src),
                                         src_stride,
                                         out,
                                         dst_stride,
                                         row_len,
                                         nrows);
            GPURADAR_CUDA_CHECK_LAUNCH(who, "copy_rows_kernel");
            break;
        }
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
