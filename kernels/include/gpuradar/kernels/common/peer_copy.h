/*
 * Copies between the memories of two CUDA devices: straight from device to device when
 * the devices can reach each other (or are one device), else staged through pinned host
 * memory. No CUDA types, so GNU Radio plumbing includes it with the host compiler.
 */
#ifndef INCLUDED_GPURADAR_KERNELS_PEER_COPY_H
#define INCLUDED_GPURADAR_KERNELS_PEER_COPY_H

#include <gpuradar/kernels/common/cuda_resources.h>
#include <cstddef>

namespace gpuradar::kernels {

//! How copy_peer_async moves bytes from one device's memory to another's.
enum class peer_route {
    direct, //!< cudaMemcpyPeerAsync: one device, or peer access between the two
    staged  //!< no peer access: device to pinned host memory, then host to device
};

/*!
 * The route from src_device to dst_device: direct when they are one device or
 * cudaDeviceCanAccessPeer says dst_device reaches src_device (peer access is then
 * enabled, once per pair and process), staged otherwise. Without CUDA: a cuda_error.
 */
peer_route route_between(int src_device, int dst_device);

/*!
 * Queues a copy of `bytes` from `src` (memory of src_device) to `dst` (memory of
 * dst_device) on `stream`; it has finished when the stream's work has. direct:
 * cudaMemcpyPeerAsync (the driver accepts src_device == dst_device). staged: the bytes
 * go to `staging` (pinned host memory of at least `bytes`) and from there to `dst`, both
 * on `stream`, so `staging` must stay untouched until the stream has run them.
 * `who` names the caller in errors.
 */
void copy_peer_async(void* dst,
                     int dst_device,
                     const void* src,
                     int src_device,
                     std::size_t bytes,
                     peer_route route,
                     void* staging,
                     stream_ref stream,
                     const char* who);

} // namespace gpuradar::kernels

#endif
