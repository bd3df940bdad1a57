/* The CUDA stream a GPU block owns, shared with its device buffers (internal). */
#ifndef INCLUDED_GPURADAR_GPU_STREAM_OWNER_H
#define INCLUDED_GPURADAR_GPU_STREAM_OWNER_H

#include "backend_select.h"
#include <gnuradio/block.h>
#include <gnuradio/gpuradar/device_buffer.h>
#include <gpuradar/kernels/common/backend.h>
#include <gpuradar/kernels/common/cuda_resources.h>
#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace gr {
namespace gpuradar {

//! The DSP core (gpuradar-kernels), outside the gr namespace.
namespace kernels = ::gpuradar::kernels;

/*!
 * Base of every gpuradar block: on the CUDA backend it owns one stream, hands it to its
 * kernels objects and to the device buffers on its ports (device_stream_provider).
 * work() calls begin_work() before it queues kernels (CPI blocks: wait_for_input()
 * before each CPI) and finish_work(produced) at its end. Between two gpuradar GPU blocks
 * (an event-ordered device-to-device edge) the blocks order their streams by the
 * buffer's events and nobody waits on the host; a block with any other edge
 * (host-to-device input, an edge to a block outside this protocol) waits at the end of
 * work() for the work it queued, as GNU Radio releases the input and publishes the
 * output as soon as work() returns.
 */
class gpu_stream_owner : public device_stream_provider
{
public:
    /*!
     * priority: high for blocks that wait on the host for every CPI's result (the
     * detectors), so that their kernels are not queued behind the next CPI's upstream
     * work on the shared SMs.
     */
    gpu_stream_owner(kernels::backend b,
                     const char* block_name,
                     kernels::stream_priority priority = kernels::stream_priority::normal,
                     int device = 0)
        : d_block_name(std::string("gpuradar::") + block_name), d_device(device)
    {
        if (b == kernels::backend::cuda) {
            // The stream belongs to the device that is current when it is made.
            kernels::device_scope on(device);
            d_stream = std::make_unique<kernels::cuda_stream>(priority);
        }
    }

    void* device_stream() const override
    {
        return d_stream ? d_stream->ref().native() : nullptr;
    }
    bool orders_by_events() const override;
    int cuda_device() const override { return d_device; }

    /*!
     * Makes the block's device current until destroyed (CUDA backend; nothing on the
     * CPU): around what builds or touches kernels objects outside work(), e.g. a setter
     * called from a GUI's thread.
     */
    class device_guard
    {
    public:
        explicit device_guard(const gpu_stream_owner& owner)
        {
            if (owner.d_stream)
                d_on.emplace(owner.d_device);
        }

    private:
        std::optional<kernels::device_scope> d_on;
    };

protected:
    kernels::stream_ref stream() const
    {
        return d_stream ? d_stream->ref() : kernels::stream_ref();
    }

    /*!
     * First in work(), before any kernel is queued: makes the block's device current on
     * the block's thread (once: GNU Radio runs each block on a thread of its own, so
     * the device stays current between calls), then this block's stream waits for the
     * readers of its event-ordered outputs (the space they released) and, unless
     * `inputs_per_cpi` (the block then calls wait_for_input() before each CPI), for the
     * writers of everything on its event-ordered inputs. No-op on the CPU backend.
     */
    void begin_work(bool inputs_per_cpi = false) const;

    /*!
     * Before queuing kernels that read input 0 up to absolute item `end_item`: waits for
     * the writer's work on those items only, not for what it queued after them (a writer
     * that runs several CPIs ahead would otherwise hold each CPI back to the newest).
     */
    void wait_for_input(std::uint64_t end_item) const;

    /*!
     * Last in work(), with the items this call produces on every output: records this
     * block's events on its event-ordered edges, and waits for its stream when any edge
     * is not event-ordered (see the class comment). No-op on the CPU backend.
     */
    void finish_work(int produced) const;

    //! Waits for everything queued on the stream (constructors, set-up). No-op on CPU.
    void synchronize_stream() const
    {
        if (d_stream)
            d_stream->synchronize(d_block_name.c_str());
    }

    /*!
     * Launches on the GPU amortise best over many items: ask GNU Radio for an output
     * buffer of at least device_buffer::min_bytes (it also caps noutput_items by it).
     */
    static void size_output_buffer(gr::block& blk, std::size_t itemsize)
    {
        const auto items = (device_buffer::min_bytes + itemsize - 1) / itemsize;
        blk.set_min_output_buffer(static_cast<long>(items));
    }

private:
    const std::string d_block_name;
    const int d_device; //!< the `device` parameter (used on the CUDA backend only)
    std::unique_ptr<kernels::cuda_stream> d_stream;
    //! finish_work()'s host wait (made on first use; only the block's thread uses it).
    mutable std::unique_ptr<kernels::cuda_event> d_done;
};

/*!
 * make() of a GPU block: its `device` checked (select_device, before anything is
 * allocated), then block Impl made from `args` with that device current on the CUDA
 * backend, so that everything its constructor allocates (stream, plans, memory) lives
 * there; the caller's device is current again afterwards. Impl's constructor takes the
 * device among `args` for its gpu_stream_owner.
 */
template <class Impl, class... Args>
std::shared_ptr<Impl> make_block_on_device(kernels::backend b,
                                           int device,
                                           const char* block_name,
                                           Args&&... args)
{
    select_device(device, b, block_name);
    std::optional<kernels::device_scope> on;
    if (b == kernels::backend::cuda)
        on.emplace(device);
    return gnuradio::make_block_sptr<Impl>(std::forward<Args>(args)...);
}

} // namespace gpuradar
} // namespace gr

#endif
