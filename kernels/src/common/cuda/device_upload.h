/* A host table copied into new device memory (internal). */
#ifndef INCLUDED_GPURADAR_KERNELS_DEVICE_UPLOAD_H
#define INCLUDED_GPURADAR_KERNELS_DEVICE_UPLOAD_H

#include "common/cuda/cuda_check.h"
#include <cuda_runtime.h>
#include <vector>

namespace gpuradar::kernels::detail {

//! v in new device memory, the copy queued on s (a pageable source has been read
//! into the driver's staging when the call returns); empty v: no allocation.
template <typename T>
device_memory upload(const std::vector<T>& v, cudaStream_t s, const char* who)
{
    device_memory d(v.size() * sizeof(T));
    if (!v.empty())
        GPURADAR_CUDA_CHECK(
            who, cudaMemcpyAsync(d.get(), v.data(), d.size(), cudaMemcpyHostToDevice, s));
    return d;
}

} // namespace gpuradar::kernels::detail

#endif
