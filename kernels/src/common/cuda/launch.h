/* Launch shapes shared by the elementwise kernels (internal). */
#ifndef INCLUDED_GPURADAR_KERNELS_LAUNCH_H
#define INCLUDED_GPURADAR_KERNELS_LAUNCH_H

#include <algorithm>
#include <cstddef>

namespace gpuradar::kernels::detail {

//! 256 threads: 8 warps, enough to hide memory latency with 16-byte loads in flight.
constexpr int elementwise_threads = 256;
//! Grid-stride loops with at most this many blocks: more than the SMs x 16 resident
//! 256-thread blocks of current GPUs, few enough that launches stay cheap.
constexpr int elementwise_max_blocks = 4096;

inline int elementwise_blocks(std::size_t work_items)
{
    const std::size_t want = (work_items + elementwise_threads - 1) / elementwise_threads;
    return static_cast<int>(
        std::max<std::size_t>(1, std::min<std::size_t>(want, elementwise_max_blocks)));
}

} // namespace gpuradar::kernels::detail

#endif
