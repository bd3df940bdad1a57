/* -*- c++ -*- */
/*
 * gr-gpuradar device buffer (see include/gnuradio/gpuradar/device_buffer.h). Written for
 * this module from GNU Radio 3.10's documented custom buffer API.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "peer_edges.h"
#include "transfer_counters.h"
#include <gnuradio/block.h>
#include <gnuradio/buffer_reader.h>
#include <gnuradio/gpuradar/device_buffer.h>
#include <gpuradar/kernels/common/cuda_resources.h>
#include <gpuradar/kernels/common/peer_copy.h>
#include <algorithm>
#include <atomic>
#include <climits>
#include <cstring>
#include <iterator>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

namespace gr {
namespace gpuradar {

//! The DSP core (gpuradar-kernels), outside the gr namespace.
namespace kernels = ::gpuradar::kernels;

namespace {
std::atomic<std::uint64_t> g_h2d_bytes{ 0 };
std::atomic<std::uint64_t> g_d2h_bytes{ 0 };
std::atomic<std::uint64_t> g_d2d_bytes{ 0 };
std::atomic<std::uint64_t> g_peer_bytes{ 0 };
std::atomic<bool> g_peer_copy_on_one_device{ false };
constexpr const char* who = "gpuradar::device_buffer";

const device_stream_provider* stream_provider(const gr::block_sptr& b)
{
    return dynamic_cast<const device_stream_provider*>(b.get());
}

//! `bytes` of device memory on `device`.
kernels::device_memory memory_on(int device, std::size_t bytes)
{
    kernels::device_scope on(device);
    return kernels::device_memory(bytes);
}
} // namespace

void set_peer_copy_on_one_device(bool on) { g_peer_copy_on_one_device = on; }

//! The readers' copy of an edge across devices.
struct device_buffer::peer_side {
    int device = 0; //!< the readers'
    kernels::peer_route route = kernels::peer_route::direct;
    kernels::device_memory memory; //!< as large as the edge's own, same item offsets
};

struct device_buffer::impl {
    std::weak_ptr<gr::block>
        owner; //!< the block that owns this buffer (see the constructor)
    kernels::device_memory device;
    int device_index = 0; //!< where `device` lives (see memory_device())
    std::size_t bytes = 0;
    // Pinned host side: only edges that meet a host block need it, so it is made on first
    // use (the transfer type is set after allocation).
    kernels::pinned_memory host;
    std::once_flag host_once;
    // Fallback stream for edges whose GPU block provides none; such copies are waited
    // for.
    std::unique_ptr<kernels::cuda_stream> own_stream;
    std::once_flag own_stream_once;
    // Scratch for overlapping device moves in the wrap-around callbacks (rare).
    kernels::device_memory scratch;
    std::mutex scratch_mutex;
    // Event ordering (event_ordered edges): the writer's last write, each reader's last
    // read, keyed by the reader's stream provider.
    std::mutex event_mutex;
    //! The writer's marks, a ring: (end of the items written, event after their kernels).
    struct write_mark {
        std::uint64_t end = 0;
        kernels::cuda_event event;
    };
    std::vector<write_mark> write_marks;
    std::uint64_t marks_recorded = 0;
    std::vector<std::pair<const device_stream_provider*, kernels::cuda_event>>
        read_events;
    // Edges across devices: decided once, when the edge first runs with its readers.
    std::mutex peer_mutex;
    bool peer_decided = false;
    std::unique_ptr<peer_side> peer;
};

namespace {
//! The block's stream provider if it orders its stream by events, else nullptr.
const device_stream_provider* event_ordering_block(const gr::block_sptr& b)
{
    const auto* p = dynamic_cast<const device_stream_provider*>(b.get());
    return p && p->orders_by_events() ? p : nullptr;
}
} // namespace

gr::buffer_type device_buffer::type(gr::buftype<device_buffer, device_buffer>{});

device_buffer::stats device_buffer::transfer_stats()
{
    stats s;
    s.h2d_bytes = g_h2d_bytes.load();
    s.d2h_bytes = g_d2h_bytes.load();
    s.d2d_bytes = g_d2d_bytes.load();
    s.peer_bytes = g_peer_bytes.load();
    return s;
}

void count_device_to_host_bytes(std::uint64_t bytes) { g_d2h_bytes += bytes; }

void device_buffer::reset_transfer_stats()
{
    g_h2d_bytes = 0;
    g_d2h_bytes = 0;
    g_d2d_bytes = 0;
    g_peer_bytes = 0;
}

gr::buffer_sptr device_buffer::make_buffer(int nitems,
                                           std::size_t sizeof_item,
                                           std::uint64_t downstream_lcm_nitems,
                                           std::uint32_t downstream_max_out_mult,
                                           gr::block_sptr link,
                                           gr::block_sptr buf_owner)
{
    // GNU Radio sizes buffers for 32 KiB of host items; device launches want more.
    const std::size_t min_items = (min_bytes + sizeof_item - 1) / sizeof_item;
    // A host block's output replaced by ours (host -> device edge: the writer is no GPU
    // block): twice the items, so that the host block fills one half while the other
    // half's async copy to the device runs. At GNU Radio's size (two CPIs in front of the
    // pulse framer) the host block waited for each CPI's whole copy before writing the
    // next (`gpuradar_bench e2e/PD`: higher end-to-end throughput with the deeper edge).
    const bool host_writer = link && stream_provider(link) == nullptr;
    const std::size_t want = std::max<std::size_t>(nitems, min_items) *
                             (host_writer ? host_to_device_depth : 1);
    nitems = static_cast<int>(std::min<std::size_t>(want, INT_MAX / 2));
    // GNU Radio 3.10 makes a single-mapped buffer at least 4x the largest output multiple
    // of its readers, counted in this buffer's items. A CPI block's output multiple
    // counts its own output items (nrange range bins), not the pulses it reads: PD-A's
    // pulse stream would get 4 x 9000 items of 1.15 MB = 41 GB. Cap that heuristic at
    // max_heuristic_bytes; the readers' real need (two CPIs of input) is far below it.
    const std::uint32_t cap_mult = static_cast<std::uint32_t>(std::max<std::size_t>(
        1, max_heuristic_bytes / (4 * std::max<std::size_t>(sizeof_item, 1))));
    downstream_max_out_mult = std::min(downstream_max_out_mult, cap_mult);
    return gr::buffer_sptr(new device_buffer(nitems,
                                             sizeof_item,
                                             downstream_lcm_nitems,
                                             downstream_max_out_mult,
                                             link,
                                             buf_owner));
}

device_buffer::device_buffer(int nitems,
                             std::size_t sizeof_item,
                             std::uint64_t downstream_lcm_nitems,
                             std::uint32_t downstream_max_out_mult,
                             gr::block_sptr link,
                             gr::block_sptr buf_owner)
    // GNU Radio's buffer_single_mapped keeps its owner by a strong pointer while the
    // owner's block_detail keeps this buffer: a cycle that nothing breaks when the
    // flowgraph goes, so every block on such an edge (and its device memory) would
    // outlive it. The owner is kept here by a weak pointer instead.
    : gr::buffer_single_mapped(nitems,
                               sizeof_item,
                               downstream_lcm_nitems,
                               downstream_max_out_mult,
                               link,
                               gr::block_sptr()),
      d_impl(std::make_unique<impl>())
{
    d_impl->owner = buf_owner;
    gr::configure_default_loggers(d_logger, d_debug_logger, "device_buffer");
    if (!allocate_buffer(nitems))
        throw std::bad_alloc();
}

device_buffer::~device_buffer() = default;

namespace {
//! The device of the GPU block that writes the buffer (`link`), or of the GPU block
//! that made it when the writer is a host block (host-to-device: `owner`, the reader).
int memory_device(const gr::block_sptr& link, const gr::block_sptr& owner)
{
    if (const auto* p = stream_provider(link))
        return p->cuda_device();
    if (const auto* p = stream_provider(owner))
        return p->cuda_device();
    return 0;
}
} // namespace

bool device_buffer::do_allocate_buffer(std::size_t final_nitems, std::size_t sizeof_item)
{
    d_impl->bytes = final_nitems * sizeof_item;
    d_impl->device_index = memory_device(link(), d_impl->owner.lock());
    d_impl->device = memory_on(d_impl->device_index, d_impl->bytes);
    d_base = nullptr; // host side made on demand, see host_base()
    return true;
}

char* device_buffer::device_base() const { return d_impl->device.as<char>(); }

char* device_buffer::host_base()
{
    std::call_once(d_impl->host_once, [this] {
        // Pinned by the context of the edge's device, which its copies run on.
        kernels::device_scope on(d_impl->device_index);
        d_impl->host = kernels::pinned_memory(d_impl->bytes);
        d_base = d_impl->host.as<char>();
    });
    return d_impl->host.as<char>();
}

void* device_buffer::transfer_stream(bool* ordered)
{
    // H2D edges belong to the reading GPU block (GNU Radio replaced the host block's
    // buffer with ours); D2H and D2D edges to the writing GPU block.
    gr::block_sptr block = d_transfer_type == gr::transfer_type::HOST_TO_DEVICE
                               ? d_impl->owner.lock()
                               : link();
    if (auto* p = dynamic_cast<device_stream_provider*>(block.get())) {
        *ordered = true;
        return p->device_stream();
    }
    std::call_once(d_impl->own_stream_once, [this] {
        kernels::device_scope on(d_impl->device_index);
        d_impl->own_stream = std::make_unique<kernels::cuda_stream>();
    });
    *ordered = false;
    return d_impl->own_stream->ref().native();
}

void device_buffer::wait_for_transfers()
{
    bool ordered = false;
    kernels::synchronize(kernels::stream_ref(transfer_stream(&ordered)), who);
}

device_buffer::peer_side* device_buffer::crossing()
{
    if (d_transfer_type != gr::transfer_type::DEVICE_TO_DEVICE || nreaders() == 0)
        return nullptr;
    std::lock_guard<std::mutex> lock(d_impl->peer_mutex);
    if (d_impl->peer_decided)
        return d_impl->peer.get();
    std::set<int> devices;
    for (std::size_t i = 0; i < nreaders(); ++i)
        if (const auto* p = stream_provider(reader(i)->link()))
            devices.insert(p->cuda_device());
    if (devices.size() > 1) {
        // _read_pointer() cannot tell its readers apart, so one memory serves them all.
        std::ostringstream msg;
        msg << who << ": the readers of " << link()->alias()
            << "'s output are on different devices (" << *devices.begin() << " and "
            << *devices.rbegin()
            << "); every reader of one output must name the same device";
        throw std::runtime_error(msg.str());
    }
    const int from = d_impl->device_index;
    const int to = devices.empty() ? from : *devices.begin();
    d_impl->peer_decided = true;
    if (to == from && !g_peer_copy_on_one_device)
        return nullptr;
    auto p = std::make_unique<peer_side>();
    p->device = to;
    p->route = kernels::route_between(from, to);
    p->memory = memory_on(to, d_impl->bytes);
    d_logger->info("{}: device {} to device {}, copied {}",
                   link()->alias(),
                   from,
                   to,
                   p->route == kernels::peer_route::direct
                       ? "peer to peer"
                       : "through pinned host memory (no peer access)");
    d_impl->peer = std::move(p);
    return d_impl->peer.get();
}

char* device_buffer::read_base()
{
    if (peer_side* p = crossing())
        return p->memory.as<char>();
    return device_base();
}

void* device_buffer::device_copy(void* dst, const void* src, std::size_t bytes)
{
    bool ordered = false;
    const kernels::stream_ref s(transfer_stream(&ordered));
    if (peer_side* p = crossing()) // both ends in the readers' memory, on their device
        kernels::copy_peer_async(dst,
                                 p->device,
                                 src,
                                 p->device,
                                 bytes,
                                 kernels::peer_route::direct,
                                 nullptr,
                                 s,
                                 who);
    else
        kernels::copy_async(
            dst, src, bytes, kernels::copy_kind::device_to_device, s, who);
    wait_for_transfers();
    g_d2d_bytes += bytes;
    return dst;
}

void* device_buffer::device_move(void* dst, const void* src, std::size_t bytes)
{
    const auto* d = static_cast<const char*>(dst);
    const auto* s = static_cast<const char*>(src);
    if (d + bytes <= s || s + bytes <= d)
        return device_copy(dst, src, bytes);
    // cudaMemcpy on overlapping ranges is undefined: go through scratch memory.
    std::lock_guard<std::mutex> lock(d_impl->scratch_mutex);
    if (d_impl->scratch.size() < bytes) {
        const peer_side* p = crossing();
        d_impl->scratch = memory_on(p ? p->device : d_impl->device_index, d_impl->bytes);
    }
    device_copy(d_impl->scratch.get(), src, bytes);
    return device_copy(dst, d_impl->scratch.get(), bytes);
}

void device_buffer::post_work(int nitems)
{
    if (nitems <= 0)
        return;
    // The write index has not advanced yet: the new items start at d_write_index.
    const std::size_t offset = std::size_t(d_write_index) * d_sizeof_item;
    const std::size_t bytes = std::size_t(nitems) * d_sizeof_item;
    bool ordered = false;
    switch (d_transfer_type) {
    case gr::transfer_type::HOST_TO_DEVICE: {
        const kernels::stream_ref s(transfer_stream(&ordered));
        kernels::copy_async(device_base() + offset,
                            host_base() + offset,
                            bytes,
                            kernels::copy_kind::host_to_device,
                            s,
                            who);
        // On the reader's own stream its kernels are ordered after this copy, and the
        // reader waits for its stream before it releases the items: no wait needed here.
        if (!ordered)
            wait_for_transfers();
        g_h2d_bytes += bytes;
        break;
    }
    case gr::transfer_type::DEVICE_TO_HOST: {
        const kernels::stream_ref s(transfer_stream(&ordered));
        kernels::copy_async(host_base() + offset,
                            device_base() + offset,
                            bytes,
                            kernels::copy_kind::device_to_host,
                            s,
                            who);
        // The host reader may read as soon as we return.
        wait_for_transfers();
        g_d2h_bytes += bytes;
        break;
    }
    case gr::transfer_type::DEVICE_TO_DEVICE: {
        peer_side* p = crossing();
        if (p == nullptr)
            break; // read in place by the next GPU block
        const kernels::stream_ref s(transfer_stream(&ordered));
        kernels::copy_peer_async(read_base() + offset,
                                 p->device,
                                 device_base() + offset,
                                 d_impl->device_index,
                                 bytes,
                                 p->route,
                                 p->route == kernels::peer_route::staged ? host_base()
                                                                         : nullptr,
                                 s,
                                 who);
        // Not event-ordered: the readers may read as soon as we return.
        wait_for_transfers();
        g_peer_bytes += bytes;
        break;
    }
    default: {
        std::ostringstream msg;
        msg << who << ": unexpected transfer type " << d_transfer_type;
        throw std::runtime_error(msg.str());
    }
    }
}

bool device_buffer::event_ordered()
{
    if (d_transfer_type != gr::transfer_type::DEVICE_TO_DEVICE || nreaders() == 0)
        return false;
    try {
        if (crossing())
            return false; // post_work() copies and waits (see the class comment)
        if (!event_ordering_block(link()))
            return false;
        for (std::size_t i = 0; i < nreaders(); ++i)
            if (!event_ordering_block(reader(i)->link()))
                return false;
    } catch (const std::bad_weak_ptr&) {
        return false; // a block of the edge is gone (flowgraph torn down)
    }
    return true;
}

bool device_buffer::device_to_host() const
{
    return d_transfer_type == gr::transfer_type::DEVICE_TO_HOST;
}

void device_buffer::write_done(void* stream, std::uint64_t end_item)
{
    // A writer runs ahead of its readers by at most the buffer: a few work calls of
    // CPI-sized items. If it ever laps the ring, a reader finds a later mark than it
    // needs, which covers its items too (one stream): slower, never wrong.
    constexpr std::size_t write_mark_ring = 64;
    std::lock_guard<std::mutex> lock(d_impl->event_mutex);
    auto& marks = d_impl->write_marks;
    if (marks.empty())
        marks.resize(write_mark_ring);
    auto& m = marks[d_impl->marks_recorded % marks.size()];
    m.end = end_item;
    m.event.record(kernels::stream_ref(stream));
    ++d_impl->marks_recorded;
}

void device_buffer::wait_for_write(void* stream, std::uint64_t end_item)
{
    std::lock_guard<std::mutex> lock(d_impl->event_mutex);
    const auto& marks = d_impl->write_marks;
    const std::uint64_t n = d_impl->marks_recorded;
    if (n == 0)
        return; // nothing written by kernels yet, nothing to wait for
    // Oldest to newest: the first mark whose items reach end_item (else the newest).
    const std::uint64_t first = n > marks.size() ? n - marks.size() : 0;
    std::uint64_t pick = n - 1;
    for (std::uint64_t i = first; i < n; ++i)
        if (marks[i % marks.size()].end >= end_item) {
            pick = i;
            break;
        }
    marks[pick % marks.size()].event.make_stream_wait(kernels::stream_ref(stream));
}

void device_buffer::read_done(const device_stream_provider* reader, void* stream)
{
    std::lock_guard<std::mutex> lock(d_impl->event_mutex);
    auto it = std::find_if(d_impl->read_events.begin(),
                           d_impl->read_events.end(),
                           [&](const auto& e) { return e.first == reader; });
    if (it == d_impl->read_events.end()) {
        d_impl->read_events.emplace_back(reader, kernels::cuda_event());
        it = std::prev(d_impl->read_events.end());
    }
    it->second.record(kernels::stream_ref(stream));
}

void device_buffer::wait_for_reads(void* stream)
{
    std::lock_guard<std::mutex> lock(d_impl->event_mutex);
    for (const auto& e : d_impl->read_events)
        e.second.make_stream_wait(kernels::stream_ref(stream));
}

void device_buffer::wait_for_edge_streams()
{
    if (!event_ordered())
        return;
    auto sync = [](const gr::block_sptr& b) {
        if (const auto* p = event_ordering_block(b))
            kernels::synchronize(kernels::stream_ref(p->device_stream()), who);
    };
    sync(link());
    for (std::size_t i = 0; i < nreaders(); ++i)
        sync(reader(i)->link());
}

void* device_buffer::write_pointer()
{
    char* base = d_transfer_type == gr::transfer_type::HOST_TO_DEVICE ? host_base()
                                                                      : device_base();
    return base + std::size_t(d_write_index) * d_sizeof_item;
}

const void* device_buffer::_read_pointer(unsigned int read_index)
{
    char* base =
        d_transfer_type == gr::transfer_type::DEVICE_TO_HOST ? host_base() : read_base();
    return base + std::size_t(read_index) * d_sizeof_item;
}

bool device_buffer::input_blocked_callback(int items_required,
                                           int items_avail,
                                           unsigned read_index)
{
    if (d_transfer_type == gr::transfer_type::DEVICE_TO_HOST)
        return input_blocked_callback_logic(items_required,
                                            items_avail,
                                            read_index,
                                            host_base(),
                                            std::memcpy,
                                            std::memmove);
    // Unread items live on the device; queued H2D copies must land before they move, and
    // on an event-ordered edge no block's queued kernels may still use either range.
    wait_for_transfers();
    wait_for_edge_streams();
    using namespace std::placeholders;
    return input_blocked_callback_logic(
        items_required,
        items_avail,
        read_index,
        read_base(),
        std::bind(&device_buffer::device_copy, this, _1, _2, _3),
        std::bind(&device_buffer::device_move, this, _1, _2, _3));
}

bool device_buffer::output_blocked_callback(int output_multiple, bool force)
{
    if (d_transfer_type == gr::transfer_type::DEVICE_TO_HOST)
        return output_blocked_callback_logic(
            output_multiple, force, host_base(), std::memmove);
    wait_for_transfers();
    wait_for_edge_streams();
    using namespace std::placeholders;
    return output_blocked_callback_logic(
        output_multiple,
        force,
        read_base(),
        std::bind(&device_buffer::device_move, this, _1, _2, _3));
}

} // namespace gpuradar
} // namespace gr
