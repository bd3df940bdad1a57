#include "common/factories.h"
#include <gpuradar/kernels/common/backend.h>
#include <gpuradar/kernels/common/cuda_resources.h>
#include <string>

namespace gpuradar::kernels {

const char* to_string(backend b) { return b == backend::cuda ? "cuda" : "cpu"; }

bool built_with_cuda()
{
#ifdef GPURADAR_HAVE_CUDA
    return true;
#else
    return false;
#endif
}

std::string cuda_unavailable_reason()
{
#ifdef GPURADAR_HAVE_CUDA
    // Function-local static: probed once, thread-safe.
    static const std::string reason = detail::probe_cuda_device();
    return reason;
#else
    return "gr-gpuradar was built without CUDA (no nvcc at configure time)";
#endif
}

bool cuda_available() { return cuda_unavailable_reason().empty(); }

namespace detail {
void require_backend(backend b, const char* stage)
{
    if (b == backend::cuda && !cuda_available()) {
        throw cuda_error(std::string("gpuradar::") + stage +
                         ": backend 'cuda' requested but no usable CUDA device: " +
                         cuda_unavailable_reason());
    }
}
} // namespace detail

} // namespace gpuradar::kernels
