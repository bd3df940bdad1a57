/* Scoped current CUDA device (internal to kernels/). */
#ifndef INCLUDED_GPURADAR_KERNELS_DEVICE_GUARD_H
#define INCLUDED_GPURADAR_KERNELS_DEVICE_GUARD_H

#include "cuda_check.h"

namespace gpuradar::kernels::detail {

//! Makes `device` the calling thread's current device; the destructor restores the
//! device that was current before.
class device_guard
{
public:
    device_guard(int device, const char* who)
    {
        GPURADAR_CUDA_CHECK(who, cudaGetDevice(&d_previous));
        if (device != d_previous)
            GPURADAR_CUDA_CHECK(who, cudaSetDevice(device));
    }
    ~device_guard() { cudaSetDevice(d_previous); }
    device_guard(const device_guard&) = delete;
    device_guard& operator=(const device_guard&) = delete;

    int previous() const { return d_previous; }

private:
    int d_previous = 0;
};

} // namespace gpuradar::kernels::detail

#endif
