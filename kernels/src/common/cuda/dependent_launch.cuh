/*
 * Programmatic dependent launch (internal to kernels/). On sm_90+ a kernel launched with
 * launch_dependent() may be scheduled while the kernel before it in the stream is still
 * finishing its last blocks: its launch and block start-up overlap that tail instead of
 * following it (the pulse-Doppler chain crosses two such kernel boundaries per CPI).
 * Correctness does not depend on it: the dependent kernel calls wait_for_predecessor()
 * before it touches global memory, which returns once the predecessor has completed and
 * its writes are visible. Elsewhere (devices below compute capability 9.0, which lack
 * griddepcontrol, or a predecessor that is a copy or a memset) the launch is an ordinary
 * one.
 */
#ifndef INCLUDED_GPURADAR_KERNELS_DEPENDENT_LAUNCH_CUH
#define INCLUDED_GPURADAR_KERNELS_DEPENDENT_LAUNCH_CUH

#include "common/cuda/cuda_check.h"
#include <cuda_runtime.h>
#include <utility>

namespace gpuradar::kernels::detail {

//! First statement of a dependent kernel: wait for the predecessor's completion and
//! memory. A no-op below sm_90 and when the kernel was launched the ordinary way.
__device__ __forceinline__ void wait_for_predecessor()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

//! Let the next kernel in the stream launch now (its blocks then wait in
//! wait_for_predecessor() until this kernel has completed). A no-op below sm_90.
__device__ __forceinline__ void allow_dependents()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

//! Whether the current device takes dependent launches (compute capability 9.0+).
inline bool dependent_launch_supported(const char* who)
{
    int dev = 0, major = 0;
    GPURADAR_CUDA_CHECK(who, cudaGetDevice(&dev));
    GPURADAR_CUDA_CHECK(
        who, cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
    constexpr int first_major = 9; // griddepcontrol: sm_90
    return major >= first_major;
}

//! kernel<<<grid, block, smem, stream>>>(args...), as a dependent launch when
//! `dependent` (from dependent_launch_supported()); checked.
template <typename... Params, typename... Args>
void launch_dependent(bool dependent,
                      void (*kernel)(Params...),
                      dim3 grid,
                      dim3 block,
                      std::size_t smem,
                      cudaStream_t stream,
                      const char* who,
                      Args&&... args)
{
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.dynamicSmemBytes = smem;
    cfg.stream = stream;
    cfg.attrs = attr;
    cfg.numAttrs = dependent ? 1 : 0;
    GPURADAR_CUDA_CHECK(who,
                        cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...));
}

} // namespace gpuradar::kernels::detail

#endif
