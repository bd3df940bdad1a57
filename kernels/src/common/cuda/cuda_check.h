/* Checked CUDA calls (internal to kernels/). Every CUDA call goes through these. */
#ifndef INCLUDED_GPURADAR_KERNELS_CUDA_CHECK_H
#define INCLUDED_GPURADAR_KERNELS_CUDA_CHECK_H

#include <cuda_runtime.h>
#include <gpuradar/kernels/common/cuda_resources.h>
#include <string>

namespace gpuradar::kernels::detail {

[[noreturn]] inline void throw_cuda(cudaError_t err, const char* who, const char* call)
{
    throw cuda_error(std::string(who) + ": " + call + " failed: " +
                     cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")");
}

inline void check_cuda(cudaError_t err, const char* who, const char* call)
{
    if (err != cudaSuccess)
        throw_cuda(err, who, call);
}

inline cudaStream_t native(stream_ref s) { return static_cast<cudaStream_t>(s.native()); }

//! The calling thread's current device; 0 when it cannot be read (no device).
inline int current_device_or_0() noexcept
{
    int d = 0;
    return cudaGetDevice(&d) == cudaSuccess ? d : 0;
}

/*!
 * Runs release() with `device` current and then the caller's device again: for library
 * handles tied to the device they were made on (cuFFT plans, cuBLAS handles), whose
 * owner may be destroyed on a thread where another device is current. Never throws.
 */
template <typename F>
void release_on(int device, F&& release) noexcept
{
    const int current = current_device_or_0();
    const bool switched = current != device && cudaSetDevice(device) == cudaSuccess;
    release();
    if (switched)
        cudaSetDevice(current);
}

} // namespace gpuradar::kernels::detail

//! Check a CUDA runtime call: GPURADAR_CUDA_CHECK("envelope", cudaMalloc(...)).
#define GPURADAR_CUDA_CHECK(who, call) \
    ::gpuradar::kernels::detail::check_cuda((call), (who), #call)

//! Check a kernel launch (configuration errors surface through cudaGetLastError).
#define GPURADAR_CUDA_CHECK_LAUNCH(who, kernel_name) \
    ::gpuradar::kernels::detail::check_cuda(         \
        cudaGetLastError(), (who), kernel_name "<<<>>>")

#endif
