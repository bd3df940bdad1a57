/* A host copy of a CPI block's output map every N CPIs, published as a message
 * (internal). */
#ifndef INCLUDED_GPURADAR_MAP_TAP_H
#define INCLUDED_GPURADAR_MAP_TAP_H

#include <gpuradar/kernels/common/backend.h>
#include <gpuradar/kernels/common/cuda_resources.h>
#include <pmt/pmt.h>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <vector>

namespace gr {
namespace gpuradar {

namespace kernels = ::gpuradar::kernels;

/*!
 * Lets one chain feed both a GPU consumer (the stream output) and a host display (a
 * message): every `every`-th CPI the block hands its map to capture(), which publishes
 * (meta . f32vector) through `publish`.
 * - CPU backend: the map is in host memory; capture() copies it and publishes at once.
 * - CUDA backend: capture() queues an async device-to-host copy into pinned memory on the
 *   block's stream, after the kernels that wrote the map, and returns without waiting;
 *   publish_ready() publishes the copies that have completed. Only when every pinned slot
 *   still holds an unfinished copy does capture() wait, for the oldest one. The bytes are
 *   counted in device_buffer::transfer_stats().d2h_bytes.
 * CPIs are counted from the first one the block processes: CPIs 0, N, 2N, ... are tapped.
 */
class map_tap
{
public:
    using publisher = std::function<void(const pmt::pmt_t&)>;

    //! every: 0 = off; floats: one map's size; stream: the block's (CUDA backend).
    map_tap(unsigned every,
            std::size_t floats,
            kernels::backend backend,
            kernels::stream_ref stream,
            publisher publish);

    bool enabled() const { return d_every != 0; }
    //! Called once per processed CPI, in order: true when this CPI is to be tapped.
    bool due();
    /*!
     * The map of a due CPI: a host pointer (CPU) or a device pointer written by work
     * already queued on the stream (CUDA); `meta` is the message's car.
     */
    void capture(const float* map, const pmt::pmt_t& meta);
    //! Publishes the captured maps whose copies completed, in order; all of them
    //! (waiting for their copies) when `wait_all`.
    void publish_ready(bool wait_all);

private:
    struct slot {
        kernels::pinned_memory host;
        kernels::cuda_event copied;
        pmt::pmt_t meta;
    };
    void publish_slot(std::size_t index);

    const unsigned d_every;
    const std::size_t d_floats;
    const kernels::backend d_backend;
    const kernels::stream_ref d_stream;
    const publisher d_publish;
    std::uint64_t d_seen = 0;
    std::vector<slot> d_slots; //!< CUDA: pinned copies, made when enabled
    std::deque<std::size_t>
        d_queued;       //!< CUDA: slots with a copy not yet published, oldest first
    std::mutex d_mutex; //!< work() and stop() may run on different threads
};

//! The `map` message port's name.
pmt::pmt_t map_port();

} // namespace gpuradar
} // namespace gr

#endif
