/* Device-to-device edges across GPUs: a switch for tests on one GPU (internal). */
#ifndef INCLUDED_GPURADAR_PEER_EDGES_H
#define INCLUDED_GPURADAR_PEER_EDGES_H

namespace gr {
namespace gpuradar {

/*!
 * Tests on one GPU: when on, a device-to-device edge whose writer and readers share a
 * device copies its items to a second memory of that device exactly as an edge between
 * two devices does (cudaMemcpyPeerAsync accepts one device as both ends), counted in
 * device_buffer::transfer_stats().peer_bytes. Each edge reads it once, when it first
 * runs. Off by default.
 */
void set_peer_copy_on_one_device(bool on);

} // namespace gpuradar
} // namespace gr

#endif
