#include "common/factories.h"
#include "common/multiply_const_backends.h"
#include <gpuradar/kernels/common/multiply_const.h>

namespace gpuradar::kernels {

std::unique_ptr<multiply_const> multiply_const::make(backend b, stream_ref stream)
{
    detail::require_backend(b, "multiply_const");
#ifdef GPURADAR_HAVE_CUDA
    if (b == backend::cuda)
        return detail::make_multiply_const_cuda(stream);
#else
    (void)stream;
#endif
    return detail::make_multiply_const_cpu();
}

} // namespace gpuradar::kernels
