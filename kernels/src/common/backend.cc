#include "common/factories.h"
#include <gpuradar/kernels/common/backend.h>
#include <gpuradar/kernels/common/cuda_resources.h>
#include <string>

namespace gpuradar::kernels {

const char* to_string(backend b) { return b == backend::cuda ? "cuda" : "cpu"; }

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
namespace {
std::string cuda_version_text(int version)
{
    return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}
} // namespace

std::string explain_cuda_unavailable(const std::string& error_name,
                                     int driver_version,
                                     int runtime_version,
                                     const char* visible_devices)
{
    std::string text;
    // The runtime reports a missing driver as an insufficient one (version 0).
    if (error_name == "cudaErrorInsufficientDriver" && driver_version == 0)
        text = "no NVIDIA driver found: this machine has no NVIDIA GPU, or its driver is "
               "not installed";
    else if (error_name == "cudaErrorInsufficientDriver")
        text = "the NVIDIA driver supports CUDA " + cuda_version_text(driver_version) +
               ", older than the CUDA " + cuda_version_text(runtime_version) +
               " gr-gpuradar was built with: install a newer NVIDIA driver";
    else if (error_name == "cudaErrorNoDevice" && visible_devices != nullptr)
        text = std::string("no NVIDIA GPU visible: CUDA_VISIBLE_DEVICES='") +
               visible_devices + "' hides the GPUs the driver sees";
    else if (error_name == "cudaErrorNoDevice")
        text = "no NVIDIA GPU found: the NVIDIA driver is installed but sees no GPU";
    else if (error_name == "cudaErrorSystemDriverMismatch")
        text = "the NVIDIA driver's kernel module and its library differ in version "
               "(after a driver update, reboot)";
    else
        text = "the NVIDIA GPU cannot be used";
    return text + " (" + error_name + ")";
}

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
