/* CUDA sample conversion: SDR integers (sc16, sc8) to complex float at 1.0 = full scale,
 * row by row, so that a gather of range gates and the conversion are one pass (fc32: the
 * same pass, a copy). */
#include "common/cuda/cuda_check.h"
#include "common/cuda/launch.h"
#include "common/cuda/sample_convert.cuh"
#include "common/sample_convert_backends.h"
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdint>

namespace gpuradar::kernels::detail {
namespace {

constexpr const char* who = "gpuradar::sample_convert (cuda)";
constexpr std::size_t max_grid_y = 65535; // CUDA's limit on gridDim.y

// Rows of samples in the input's format (E: float2, short2 or char2, sample_convert.cuh)
// to complex float: row r on the grid's y walk, range samples along x. The conversion is
// sample_to_float2, the one every CUDA stage that loads SDR integers uses (the same bits
// as the CPU twin's VOLK). A kernel for fc32 too rather than cudaMemcpy2DAsync: for the
// gates' short rows (tens of KB) the runtime's 2-D device copy moves them at well under
// the copy rate.
template <typename E>
__global__ void rows_kernel(const E* __restrict__ src,
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
            dst[r * dst_stride + c] = sample_to_float2(src[r * src_stride + c]);
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
        switch (format()) {
        case sample_format::sc16:
            launch(static_cast<const short2*>(src),
                   src_stride,
                   dst,
                   dst_stride,
                   row_len,
                   nrows);
            break;
        case sample_format::sc8:
            launch(static_cast<const char2*>(src),
                   src_stride,
                   dst,
                   dst_stride,
                   row_len,
                   nrows);
            break;
        case sample_format::fc32:
        default:
            launch(static_cast<const float2*>(src),
                   src_stride,
                   dst,
                   dst_stride,
                   row_len,
                   nrows);
            break;
        }
    }

private:
    // rows_kernel over about elementwise_max_blocks blocks, a row of blocks per row.
    template <typename E>
    void launch(const E* src,
                std::size_t src_stride,
                cfloat* dst,
                std::size_t dst_stride,
                std::size_t row_len,
                std::size_t nrows)
    {
        const std::size_t bx = std::min<std::size_t>((row_len + elementwise_threads - 1) /
                                                         elementwise_threads,
                                                     elementwise_max_blocks);
        const std::size_t by = std::min<std::size_t>(
            { nrows, max_grid_y, std::max<std::size_t>(1, elementwise_max_blocks / bx) });
        rows_kernel<<<dim3(static_cast<unsigned int>(bx), static_cast<unsigned int>(by)),
                      elementwise_threads,
                      0,
                      native(d_stream)>>>(
            src, src_stride, reinterpret_cast<float2*>(dst), dst_stride, row_len, nrows);
        GPURADAR_CUDA_CHECK_LAUNCH(who, "rows_kernel");
    }

    stream_ref d_stream;
};

} // namespace

std::unique_ptr<sample_convert> make_sample_convert_cuda(sample_format f,
                                                         stream_ref stream)
{
    return std::make_unique<sample_convert_cuda>(f, stream);
}

} // namespace gpuradar::kernels::detail
