/* gpu_stream_owner: event ordering between gpuradar GPU blocks (see gpu_stream_owner.h).
 */
#include "gpu_stream_owner.h"
#include <gnuradio/block_detail.h>
#include <gnuradio/buffer.h>
#include <gnuradio/buffer_reader.h>
#include <algorithm>

namespace gr {
namespace gpuradar {

namespace {

//! The gr::block this owner is a base of (every gpuradar block is both).
gr::block* block_of(const gpu_stream_owner* owner)
{
    return dynamic_cast<gr::block*>(const_cast<gpu_stream_owner*>(owner));
}

//! The block's detail (its buffers), or nullptr before the flowgraph is set up.
gr::block_detail* detail_of(gr::block* blk)
{
    return blk ? blk->detail().get() : nullptr;
}

device_buffer* input_buffer(gr::block_detail* d, int i)
{
    return dynamic_cast<device_buffer*>(d->input(i)->buffer().get());
}

device_buffer* output_buffer(gr::block_detail* d, int o)
{
    return dynamic_cast<device_buffer*>(d->output(o).get());
}

} // namespace

bool gpu_stream_owner::orders_by_events() const { return d_stream != nullptr; }

void gpu_stream_owner::begin_work(bool inputs_per_cpi) const
{
    if (d_stream)
        kernels::make_current(d_device);
    if (!orders_by_events())
        return;
    gr::block_detail* d = detail_of(block_of(this));
    if (d == nullptr)
        return;
    void* s = device_stream();
    for (int i = inputs_per_cpi ? 1 : 0; i < d->ninputs(); ++i)
        if (device_buffer* b = input_buffer(d, i); b && b->event_ordered())
            b->wait_for_write(s);
    for (int o = 0; o < d->noutputs(); ++o)
        if (device_buffer* b = output_buffer(d, o); b && b->event_ordered())
            b->wait_for_reads(s);
}

void gpu_stream_owner::wait_for_input(std::uint64_t end_item) const
{
    if (!orders_by_events())
        return;
    gr::block_detail* d = detail_of(block_of(this));
    if (d == nullptr || d->ninputs() == 0)
        return;
    if (device_buffer* b = input_buffer(d, 0); b && b->event_ordered())
        b->wait_for_write(device_stream(), end_item);
}

void gpu_stream_owner::finish_work(int produced) const
{
    if (!d_stream)
        return;
    gr::block* blk = block_of(this);
    gr::block_detail* d = orders_by_events() ? detail_of(blk) : nullptr;
    if (d == nullptr) {
        synchronize_stream();
        return;
    }
    void* s = device_stream();
    bool wait = false;
    for (int i = 0; i < d->ninputs(); ++i) {
        device_buffer* b = input_buffer(d, i);
        if (b && b->event_ordered())
            b->read_done(this, s);
        else
            wait = true; // e.g. host-to-device: the host writer reuses its pinned memory
    }
    for (int o = 0; o < d->noutputs(); ++o) {
        device_buffer* b = output_buffer(d, o);
        if (b && b->event_ordered())
            b->write_done(s,
                          blk->nitems_written(o) + std::uint64_t(std::max(produced, 0)));
        else if (!(b && b->device_to_host())) // device to host: post_work() waits
            wait = true;
    }
    if (wait) {
        // An event recorded now, not the whole stream: a host writer's thread may have
        // queued its next host-to-device copy on this stream meanwhile (post_work), and
        // this block's items do not depend on it.
        if (!d_done)
            d_done = std::make_unique<kernels::cuda_event>();
        d_done->record(stream());
        d_done->synchronize();
    }
}

} // namespace gpuradar
} // namespace gr
