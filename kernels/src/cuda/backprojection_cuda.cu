/* CUDA backprojection (placeholder until the kernels land). */
#include "../backprojection_backends.h"
#include <gpuradar/kernels/cuda_resources.h>

namespace gpuradar::kernels::detail {
std::unique_ptr<backprojection> make_backprojection_cuda(const image_grid&,
                                                         std::size_t,
                                                         backprojection::precision,
                                                         stream_ref)
{
    throw cuda_error("gpuradar::backprojection: the CUDA backend is not built yet");
}
} // namespace gpuradar::kernels::detail
