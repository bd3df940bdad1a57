/* RAII cuBLAS handle bound to a stream, with checked calls (internal). */
#ifndef INCLUDED_GPURADAR_KERNELS_CUBLAS_HANDLE_H
#define INCLUDED_GPURADAR_KERNELS_CUBLAS_HANDLE_H

#include "common/cuda/cuda_check.h"
#include <cublas_v2.h>
#include <string>

namespace gpuradar::kernels::detail {

inline void check_cublas(cublasStatus_t r, const char* who, const char* call)
{
    if (r != CUBLAS_STATUS_SUCCESS)
        throw cuda_error(std::string(who) + ": " + call + " failed: " +
                         cublasGetStatusName(r) + " (" + cublasGetStatusString(r) + ")");
}

#define GPURADAR_CUBLAS_CHECK(who, call) \
    ::gpuradar::kernels::detail::check_cublas((call), (who), #call)

/*!
 * One cuBLAS handle per kernels object, made once (cublasCreate allocates and is slow),
 * bound to the object's stream. The default math mode is kept: fp32 products, no TF32,
 * so results stay within the CPU twin's tolerance.
 */
class cublas_handle
{
public:
    cublas_handle(cudaStream_t stream, const char* who)
    {
        GPURADAR_CUBLAS_CHECK(who, cublasCreate(&d_handle));
        try {
            GPURADAR_CUBLAS_CHECK(who, cublasSetStream(d_handle, stream));
        } catch (...) {
            cublasDestroy(d_handle);
            throw;
        }
    }
    ~cublas_handle() // destructors do not throw
    {
        release_on(d_device, [this] { cublasDestroy(d_handle); });
    }
    cublas_handle(const cublas_handle&) = delete;
    cublas_handle& operator=(const cublas_handle&) = delete;

    cublasHandle_t get() const { return d_handle; }

private:
    cublasHandle_t d_handle = nullptr;
    int d_device = current_device_or_0(); //!< the handle's, released with it current
};

} // namespace gpuradar::kernels::detail

#endif
