/* Adding to device_buffer::transfer_stats() from outside the buffer (internal). */
#ifndef INCLUDED_GPURADAR_TRANSFER_COUNTERS_H
#define INCLUDED_GPURADAR_TRANSFER_COUNTERS_H

#include <cstdint>

namespace gr {
namespace gpuradar {

//! Counts a device-to-host copy a block queues itself (the processor's map tap) in the
//! same process-wide counter as the device buffers' copies.
void count_device_to_host_bytes(std::uint64_t bytes);

} // namespace gpuradar
} // namespace gr

#endif
