/* Whether a CPI's data can stay in L2 from one stage kernel to the next (internal). */
#ifndef INCLUDED_GPURADAR_KERNELS_L2_RESIDENCY_H
#define INCLUDED_GPURADAR_KERNELS_L2_RESIDENCY_H

#include "common/cuda/cuda_check.h"
#include <cuda_runtime.h>
#include <cstddef>

namespace gpuradar::kernels::detail {

//! The current device's L2 cache size in bytes.
inline std::size_t l2_cache_bytes(const char* who)
{
    int dev = 0, l2 = 0;
    GPURADAR_CUDA_CHECK(who, cudaGetDevice(&dev));
    GPURADAR_CUDA_CHECK(who, cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
    return static_cast<std::size_t>(l2);
}

/*!
 * True when `bytes` fit in the current device's L2 cache. The pulse-Doppler stage
 * kernels (overlap_save, the fused Doppler kernel, the CFAR row-vector kernel) then read
 * a CPI for the last time with evict-first loads (__ldcs), so that the L2 keeps what the
 * next kernel reads (faster on PD-C, whose compressed CPI fits: `gpuradar_bench
 * pd_chain/default`). A CPI larger than the L2 cannot stay there, and evicting its lines
 * early only costs re-reads (slower on PD-A): plain loads.
 */
inline bool fits_in_l2(std::size_t bytes, const char* who)
{
    return bytes <= l2_cache_bytes(who);
}

} // namespace gpuradar::kernels::detail

#endif
