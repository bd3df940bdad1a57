/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "map_tap.h"
#include "transfer_counters.h"
#include <algorithm>

namespace gr {
namespace gpuradar {

namespace {
//! Pinned slots per tap: a copy in flight while the previous one waits to be published.
constexpr std::size_t tap_slots = 2;
constexpr const char* who = "gpuradar map tap";
} // namespace

pmt::pmt_t map_port()
{
    static const pmt::pmt_t port = pmt::intern("map");
    return port;
}

map_tap::map_tap(unsigned every,
                 std::size_t floats,
                 kernels::backend backend,
                 kernels::stream_ref stream,
                 publisher publish)
    : d_every(every),
      d_floats(floats),
      d_backend(backend),
      d_stream(stream),
      d_publish(std::move(publish))
{
    if (d_every && d_backend == kernels::backend::cuda) {
        d_slots.resize(tap_slots);
        for (auto& s : d_slots)
            s.host = kernels::pinned_memory(d_floats * sizeof(float));
    }
}

bool map_tap::due()
{
    if (!d_every)
        return false;
    return d_seen++ % d_every == 0;
}

void map_tap::capture(const float* map, const pmt::pmt_t& meta)
{
    std::lock_guard<std::mutex> lock(d_mutex);
    if (d_backend != kernels::backend::cuda) {
        d_publish(pmt::cons(meta, pmt::init_f32vector(d_floats, map)));
        return;
    }
    if (d_queued.size() == d_slots.size()) { // every slot busy: wait for the oldest copy
        publish_slot(d_queued.front());
        d_queued.pop_front();
    }
    std::size_t index = 0;
    while (std::find(d_queued.begin(), d_queued.end(), index) != d_queued.end())
        ++index;
    auto& s = d_slots[index];
    const std::size_t bytes = d_floats * sizeof(float);
    kernels::copy_async(
        s.host.get(), map, bytes, kernels::copy_kind::device_to_host, d_stream, who);
    s.copied.record(d_stream);
    s.meta = meta;
    d_queued.push_back(index);
    count_device_to_host_bytes(bytes);
}

void map_tap::publish_slot(std::size_t index)
{
    auto& s = d_slots[index];
    s.copied.synchronize();
    d_publish(pmt::cons(s.meta, pmt::init_f32vector(d_floats, s.host.as<float>())));
    s.meta = pmt::pmt_t();
}

void map_tap::publish_ready(bool wait_all)
{
    std::lock_guard<std::mutex> lock(d_mutex);
    while (!d_queued.empty() && (wait_all || d_slots[d_queued.front()].copied.done())) {
        publish_slot(d_queued.front());
        d_queued.pop_front();
    }
}

} // namespace gpuradar
} // namespace gr
