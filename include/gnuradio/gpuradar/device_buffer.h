/* -*- c++ -*- */
/*
 * gr-gpuradar device buffer: a GNU Radio 3.10 custom buffer whose items live in CUDA
 * device memory, so that chained GPU blocks read each other's output in place.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_GPURADAR_DEVICE_BUFFER_H
#define INCLUDED_GPURADAR_DEVICE_BUFFER_H

#include <gnuradio/buffer_single_mapped.h>
#include <gnuradio/buffer_type.h>
#include <gnuradio/gpuradar/api.h>
#include <cstdint>
#include <memory>

namespace gr {
namespace gpuradar {

/*!
 * \brief Implemented by every block that runs kernels on a CUDA stream. The device
 * buffer queues its copies on that stream, so that a block's kernels are ordered after
 * the host-to-device copy of their input without a host-side wait.
 */
class GPURADAR_API device_stream_provider
{
public:
    virtual ~device_stream_provider() = default;
    //! The block's cudaStream_t, as void* so that this header needs no CUDA include.
    virtual void* device_stream() const = 0;
    /*!
     * True when the block orders its stream by the device buffers' events (see
     * device_buffer::event_ordered): it waits for them before queuing kernels that read
     * or overwrite a buffer, and records them after. Blocks that instead wait for their
     * stream at the end of every work() keep the default.
     */
    virtual bool orders_by_events() const { return false; }
    //! The CUDA device of the block's stream (its `device` parameter): the device buffer
    //! places an edge's memory on it and copies between devices where the writer's and
    //! readers' devices differ.
    virtual int cuda_device() const { return 0; }
};

/*!
 * \brief Custom buffer (gr::buffer_single_mapped) holding items in CUDA device memory.
 *
 * A GPU block declares `device_buffer::type` on its ports (io_signature). GNU Radio then
 * picks the transfer per edge:
 * - host block -> GPU block (HOST_TO_DEVICE): the host block writes into pinned host
 *   memory; post_work() queues an async copy to the device on the GPU block's stream.
 * - GPU block -> GPU block (DEVICE_TO_DEVICE), one device: both read and write device
 *   memory in place; nothing is copied.
 * - GPU block -> GPU block on another device (the blocks' `device` parameters differ):
 *   the buffer keeps a second memory on the readers' device; post_work() copies the new
 *   items there (cudaMemcpyPeerAsync, or staged through pinned host memory when
 *   cudaDeviceCanAccessPeer says the devices cannot reach each other) on the writer's
 *   stream and waits for the copy, and the readers read that memory. Such an edge is not
 *   event-ordered (both blocks wait for their streams at the end of work()); the readers
 *   of one output must share one device.
 * - GPU block -> host block (DEVICE_TO_HOST): the GPU block writes device memory;
 *   post_work() copies the new items to pinned host memory and waits for the copy, so the
 *   host reader only ever sees complete items.
 * Contract with GPU blocks: GNU Radio releases the input and publishes the output as
 * soon as work() returns, so either work() waits for its stream before returning, or —
 * on a device-to-device edge whose writer and readers all order their streams by events
 * (event_ordered()) — the writer records write_done() after queuing its kernels and each
 * reader's stream waits for it (wait_for_write()) before reading, while each reader
 * records read_done() and the writer's stream waits for those (wait_for_reads()) before
 * it overwrites space the readers released. No host-side wait on such an edge.
 *
 * The buffer holds at least min_bytes (default 16 MiB) so launches are large; items of
 * a CPI size are handled as GNU Radio sizes buffers from the block's output multiple. A
 * host-to-device edge holds host_to_device_depth times what GNU Radio asks for (its
 * pinned and its device side), so that the host block writes while the copy runs.
 * The buffer's memory lives on the device of the GPU block that writes it (for a
 * host-to-device edge, of the GPU block that reads it).
 * Bytes moved per direction are counted process-wide (transfer_stats()) so tests can
 * prove a chain touches the host only at its ends.
 */
class GPURADAR_API device_buffer : public gr::buffer_single_mapped
{
public:
    static gr::buffer_type type;

    struct stats {
        std::uint64_t h2d_bytes = 0;  //!< host to device (post_work copies)
        std::uint64_t d2h_bytes = 0;  //!< device to host (post_work copies, map taps)
        std::uint64_t d2d_bytes = 0;  //!< device to device (wrap-around realignment)
        std::uint64_t peer_bytes = 0; //!< between two devices (edges across devices)
    };
    //! Process-wide byte counters of every device_buffer since the last reset.
    static stats transfer_stats();
    static void reset_transfer_stats();

    //! Smallest buffer, in bytes, a device_buffer allocates (amortises launch overhead).
    static constexpr std::size_t min_bytes = std::size_t(16) << 20;
    //! Host-to-device edges: this many times GNU Radio's size (the host block fills one
    //! part while another part's copy to the device runs).
    static constexpr std::size_t host_to_device_depth = 2;
    /*!
     * Most bytes GNU Radio's "4 x the readers' output multiple" sizing may ask of one
     * buffer (512 MiB): CPI blocks count their output multiple in output items, which
     * would otherwise size their input buffers by the wrong item. Two CPIs of input must
     * fit in it.
     */
    static constexpr std::size_t max_heuristic_bytes = std::size_t(512) << 20;

    static gr::buffer_sptr make_buffer(int nitems,
                                       std::size_t sizeof_item,
                                       std::uint64_t downstream_lcm_nitems,
                                       std::uint32_t downstream_max_out_mult,
                                       gr::block_sptr link = gr::block_sptr(),
                                       gr::block_sptr buf_owner = gr::block_sptr());

    ~device_buffer() override;

    void post_work(int nitems) override;
    bool do_allocate_buffer(std::size_t final_nitems, std::size_t sizeof_item) override;
    void* write_pointer() override;
    const void* _read_pointer(unsigned int read_index) override;
    bool input_blocked_callback(int items_required,
                                int items_avail,
                                unsigned read_index) override;
    bool output_blocked_callback(int output_multiple, bool force) override;

    //! Device to device, and the writer and every reader order their streams by events.
    bool event_ordered();
    //! Device to host: post_work() copies the writer's items out and waits for the copy.
    bool device_to_host() const;
    //! The writer, after queuing kernels that wrote the items before absolute index
    //! `end_item` (its stream, cudaStream_t).
    void write_done(void* stream, std::uint64_t end_item);
    //! A reader, before queuing kernels that read items before absolute index `end_item`
    //! (all written so far by default): its stream waits for the writer's earliest mark
    //! that covers them, not for work the writer queued after them.
    void wait_for_write(void* stream, std::uint64_t end_item = UINT64_MAX);
    //! A reader, after queuing kernels that read items.
    void read_done(const device_stream_provider* reader, void* stream);
    //! The writer, before queuing kernels that write into space the readers released.
    void wait_for_reads(void* stream);

private:
    device_buffer(int nitems,
                  std::size_t sizeof_item,
                  std::uint64_t downstream_lcm_nitems,
                  std::uint32_t downstream_max_out_mult,
                  gr::block_sptr link,
                  gr::block_sptr buf_owner);

    //! The stream copies go on; *ordered is true when it is a GPU block's own stream.
    void* transfer_stream(bool* ordered);
    struct peer_side;
    //! The readers' memory on another device, or nullptr when the edge stays on one.
    peer_side* crossing();
    //! The device memory readers read (the peer side's on an edge across devices).
    char* read_base();
    void wait_for_transfers();
    //! Waits for the streams of the writer and every reader (before moving items).
    void wait_for_edge_streams();
    char* host_base();
    char* device_base() const;
    void* device_copy(void* dst, const void* src, std::size_t bytes);
    void* device_move(void* dst, const void* src, std::size_t bytes);

    struct impl;
    std::unique_ptr<impl> d_impl;
};

} // namespace gpuradar
} // namespace gr

#endif
