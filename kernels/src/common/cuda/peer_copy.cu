/* Copies between two devices' memories (see peer_copy.h). */
#include "common/cuda/cuda_check.h"
#include <gpuradar/kernels/common/peer_copy.h>
#include <mutex>
#include <set>
#include <utility>

namespace gpuradar::kernels {

namespace {
//! Lets dst_device's copies reach src_device's memory directly
//! (cudaDeviceEnablePeerAccess once per pair: a second call fails with "already
//! enabled", which counts as success). A pair is remembered only once enabled, so a
//! failed call throws again on the next attempt instead of letting copies assume access.
void enable_peer_access(int src_device, int dst_device)
{
    static std::mutex mutex;
    static std::set<std::pair<int, int>> enabled;
    std::lock_guard<std::mutex> lock(mutex);
    const std::pair<int, int> pair{ src_device, dst_device };
    if (enabled.count(pair))
        return;
    device_scope on(dst_device);
    const cudaError_t err = cudaDeviceEnablePeerAccess(src_device, 0);
    if (err != cudaSuccess)
        cudaGetLastError(); // cleared so that later launch checks do not see it
    if (err != cudaErrorPeerAccessAlreadyEnabled)
        detail::check_cuda(err, "gpuradar::peer_copy", "cudaDeviceEnablePeerAccess");
    enabled.insert(pair);
}
} // namespace

peer_route route_between(int src_device, int dst_device)
{
    if (src_device == dst_device)
        return peer_route::direct;
    int can = 0;
    GPURADAR_CUDA_CHECK("gpuradar::peer_copy",
                        cudaDeviceCanAccessPeer(&can, dst_device, src_device));
    if (!can)
        return peer_route::staged;
    enable_peer_access(src_device, dst_device);
    return peer_route::direct;
}

void copy_peer_async(void* dst,
                     int dst_device,
                     const void* src,
                     int src_device,
                     std::size_t bytes,
                     peer_route route,
                     void* staging,
                     stream_ref stream,
                     const char* who)
{
    if (bytes == 0)
        return;
    const cudaStream_t s = detail::native(stream);
    if (route == peer_route::direct) {
        GPURADAR_CUDA_CHECK(
            who, cudaMemcpyPeerAsync(dst, dst_device, src, src_device, bytes, s));
        return;
    }
    // Unified addressing: each pointer names its device, so plain copies through the
    // pinned host memory reach both.
    GPURADAR_CUDA_CHECK(who,
                        cudaMemcpyAsync(staging, src, bytes, cudaMemcpyDeviceToHost, s));
    GPURADAR_CUDA_CHECK(who,
                        cudaMemcpyAsync(dst, staging, bytes, cudaMemcpyHostToDevice, s));
}

} // namespace gpuradar::kernels
