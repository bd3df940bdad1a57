/*
 * GNU Radio blocks used only by the flowgraph benchmarks: a device-resident replay
 * source, a device sink, a host replay source that timestamps CPI ends, and a message
 * sink that timestamps detections. Bench-only: they exist to keep PCIe or a slow host
 * source out of what a benchmark measures.
 */
#ifndef INCLUDED_GPURADAR_BENCH_GR_BLOCKS_H
#define INCLUDED_GPURADAR_BENCH_GR_BLOCKS_H

#include "bench_pd_common.h"
#include <gnuradio/block_detail.h>
#include <gnuradio/buffer_reader.h>
#include <gnuradio/gpuradar/device_buffer.h>
#include <gnuradio/io_signature.h>
#include <gnuradio/sync_block.h>
#include <condition_variable>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace gpuradar::bench::pd {

namespace grr = gr::gpuradar;
using clock_type = std::chrono::steady_clock;

//! Emits `ncpi` copies of one device-resident CPI through a device_buffer.
class device_replay_source : public gr::sync_block, public grr::device_stream_provider
{
public:
    device_replay_source(const kernels::device_memory& cpi,
                         std::size_t itemsize,
                         int items_per_cpi,
                         std::uint64_t ncpi)
        : gr::sync_block(
              "device_replay_source",
              gr::io_signature::make(0, 0, 0),
              gr::io_signature::make(1, 1, itemsize, grr::device_buffer::type)),
          d_cpi(cpi),
          d_itemsize(itemsize),
          d_items_per_cpi(items_per_cpi),
          d_left(ncpi)
    {
        set_output_multiple(items_per_cpi);
    }
    void* device_stream() const override { return d_stream.ref().native(); }
    //! Takes part in the device buffers' event ordering (as the gpuradar blocks do).
    bool orders_by_events() const override { return true; }
    int
    work(int noutput_items, gr_vector_const_void_star&, gr_vector_void_star& out) override
    {
        if (d_left == 0)
            return WORK_DONE;
        auto* buf = dynamic_cast<grr::device_buffer*>(detail()->output(0).get());
        const bool ordered = buf && buf->event_ordered();
        if (ordered) // the reader's kernels may still read the space GNU Radio hands us
            buf->wait_for_reads(device_stream());
        const auto n = std::min<std::uint64_t>(noutput_items / d_items_per_cpi, d_left);
        auto* dst = static_cast<char*>(out[0]);
        const std::size_t cpi_bytes = d_itemsize * d_items_per_cpi;
        for (std::uint64_t i = 0; i < n; ++i)
            kernels::copy_async(dst + i * cpi_bytes,
                                d_cpi.get(),
                                cpi_bytes,
                                kernels::copy_kind::device_to_device,
                                d_stream.ref(),
                                "device_replay_source");
        if (ordered)
            buf->write_done(device_stream(), nitems_written(0) + n * d_items_per_cpi);
        else
            d_stream.synchronize("device_replay_source");
        d_left -= n;
        return static_cast<int>(n) * d_items_per_cpi;
    }

private:
    const kernels::device_memory& d_cpi;
    const std::size_t d_itemsize;
    const int d_items_per_cpi;
    std::uint64_t d_left;
    kernels::cuda_stream d_stream;
};

//! When each CPI's last item reached a sink (items_per_cpi items a CPI; 0: not noted),
//! and the steady spacing of those arrivals.
class cpi_arrivals
{
public:
    explicit cpi_arrivals(std::uint64_t items_per_cpi)
        : d_items_per_cpi(items_per_cpi), d_next_end(items_per_cpi)
    {
    }
    //! The sink has now consumed `done` items in all.
    void consumed(std::uint64_t done)
    {
        if (d_items_per_cpi == 0)
            return;
        const auto now = clock_type::now();
        for (; d_next_end <= done; d_next_end += d_items_per_cpi)
            d_cpi_end.push_back(now);
    }
    /*!
     * Steady milliseconds per CPI: the spacing of the CPI arrivals after the first
     * `skip` (pipeline fill), averaged; -1 with too few CPIs.
     */
    double steady_ms_per_cpi(std::size_t skip) const
    {
        if (d_cpi_end.size() < skip + 2)
            return -1;
        return std::chrono::duration<double, std::milli>(d_cpi_end.back() -
                                                         d_cpi_end[skip])
                   .count() /
               double(d_cpi_end.size() - 1 - skip);
    }
    /*!
     * Steady milliseconds per CPI from CPIs first..last (inclusive): the least-squares
     * slope of their arrival times, which averages out a periodic bunching of the
     * arrivals that the end points alone would not; -1 when last is not past first or
     * not yet arrived.
     */
    double steady_ms_fit(std::size_t first, std::size_t last) const
    {
        if (last <= first || last >= d_cpi_end.size())
            return -1;
        const double mid = 0.5 * double(first + last);
        double sxy = 0, sxx = 0;
        for (std::size_t i = first; i <= last; ++i) {
            const double x = double(i) - mid;
            const double y =
                std::chrono::duration<double, std::milli>(d_cpi_end[i] - d_cpi_end[first])
                    .count();
            sxy += x * y;
            sxx += x * x;
        }
        return sxy / sxx;
    }
    std::size_t cpis() const { return d_cpi_end.size(); }

private:
    const std::uint64_t d_items_per_cpi;
    std::uint64_t d_next_end;
    std::vector<clock_type::time_point> d_cpi_end;
};

//! A stream made on `device`.
inline kernels::cuda_stream stream_on(int device)
{
    kernels::device_scope on(device);
    return kernels::cuda_stream();
}

//! Consumes device items without copying them anywhere; with items_per_cpi > 0 it also
//! records when each CPI's last item arrived. On `device`, as the block that feeds it
//! (else the device buffer would copy the items over to it).
class device_sink : public gr::sync_block, public grr::device_stream_provider
{
public:
    explicit device_sink(std::size_t itemsize,
                         std::uint64_t items_per_cpi = 0,
                         int device = 0)
        : gr::sync_block("device_sink",
                         gr::io_signature::make(1, 1, itemsize, grr::device_buffer::type),
                         gr::io_signature::make(0, 0, 0)),
          d_arrivals(items_per_cpi),
          d_device(device),
          d_stream(stream_on(device))
    {
    }
    void* device_stream() const override { return d_stream.ref().native(); }
    int cuda_device() const override { return d_device; }
    //! Takes part in the event ordering, so the writer need not wait in its work(); the
    //! sink waits instead, so an item counts as arrived once its kernels are done.
    bool orders_by_events() const override { return true; }
    int work(int n, gr_vector_const_void_star&, gr_vector_void_star&) override
    {
        auto* buf = dynamic_cast<grr::device_buffer*>(detail()->input(0)->buffer().get());
        if (buf && buf->event_ordered())
            buf->wait_for_write(device_stream());
        d_stream.synchronize("device_sink");
        d_arrivals.consumed(nitems_read(0) + n);
        return n;
    }
    const cpi_arrivals& arrivals() const { return d_arrivals; }
    double steady_ms_per_cpi(std::size_t skip) const
    {
        return d_arrivals.steady_ms_per_cpi(skip);
    }

private:
    cpi_arrivals d_arrivals;
    const int d_device;
    kernels::cuda_stream d_stream;
};

//! The host twin of device_sink: consumes host items and notes each CPI's arrival.
class host_sink : public gr::sync_block
{
public:
    host_sink(std::size_t itemsize, std::uint64_t items_per_cpi)
        : gr::sync_block("host_sink",
                         gr::io_signature::make(1, 1, itemsize),
                         gr::io_signature::make(0, 0, 0)),
          d_arrivals(items_per_cpi)
    {
    }
    int work(int n, gr_vector_const_void_star&, gr_vector_void_star&) override
    {
        d_arrivals.consumed(nitems_read(0) + n);
        return n;
    }
    const cpi_arrivals& arrivals() const { return d_arrivals; }

private:
    cpi_arrivals d_arrivals;
};

/*!
 * memcpy split over persistent threads, as a receiver writes its samples with several
 * threads (an SDR driver's DMA does not copy on one core either): one memcpy thread
 * would otherwise bound every end-to-end figure. The threads live as long as the source
 * (spawning them per call cost more than a CPI's copy of the small workloads); the
 * calling thread copies the first part itself. Copies below
 * min_part_bytes per thread use fewer threads.
 */
class copy_pool
{
public:
    static constexpr std::size_t min_part_bytes = std::size_t(4) << 20;
    //! `requested`, or (0) half the cores, at most 8: the rest run the flowgraph's
    //! blocks.
    static unsigned threads_for(unsigned requested)
    {
        return requested > 0
                   ? requested
                   : std::max(1u, std::min(8u, std::thread::hardware_concurrency() / 2));
    }
    explicit copy_pool(unsigned threads) : d_threads(std::max(1u, threads))
    {
        for (unsigned t = 1; t < d_threads; ++t)
            d_workers.emplace_back([this, t] { serve(t); });
    }
    ~copy_pool()
    {
        {
            std::lock_guard<std::mutex> lock(d_mutex);
            d_stop = true;
        }
        d_start.notify_all();
        for (auto& w : d_workers)
            w.join();
    }
    copy_pool(const copy_pool&) = delete;
    copy_pool& operator=(const copy_pool&) = delete;

    void copy(void* dst, const void* src, std::size_t bytes)
    {
        const unsigned parts = static_cast<unsigned>(std::max<std::size_t>(
            1, std::min<std::size_t>(d_threads, bytes / min_part_bytes)));
        // Parts of whole pages, so that no two threads write one cache line.
        const std::size_t page = 4096;
        const std::size_t per = (bytes / parts + page - 1) / page * page;
        {
            std::lock_guard<std::mutex> lock(d_mutex);
            d_dst = static_cast<char*>(dst);
            d_src = static_cast<const char*>(src);
            d_bytes = bytes;
            d_per = per;
            d_parts = parts;
            d_pending = parts - 1;
            ++d_generation;
        }
        if (parts > 1)
            d_start.notify_all();
        copy_part(0);
        std::unique_lock<std::mutex> lock(d_mutex);
        d_done.wait(lock, [this] { return d_pending == 0; });
    }

private:
    void copy_part(unsigned t) const
    {
        const std::size_t a = std::min(d_bytes, t * d_per);
        const std::size_t b = std::min(d_bytes, a + d_per);
        if (b > a)
            std::memcpy(d_dst + a, d_src + a, b - a);
    }
    void serve(unsigned t)
    {
        std::uint64_t seen = 0;
        std::unique_lock<std::mutex> lock(d_mutex);
        for (;;) {
            d_start.wait(lock, [&] { return d_stop || d_generation != seen; });
            if (d_stop)
                return;
            seen = d_generation;
            if (t >= d_parts)
                continue;
            lock.unlock();
            copy_part(t);
            lock.lock();
            if (--d_pending == 0)
                d_done.notify_one();
        }
    }

    const unsigned d_threads;
    std::vector<std::thread> d_workers;
    std::mutex d_mutex;
    std::condition_variable d_start, d_done;
    bool d_stop = false;
    std::uint64_t d_generation = 0;
    char* d_dst = nullptr;
    const char* d_src = nullptr;
    std::size_t d_bytes = 0, d_per = 0;
    unsigned d_parts = 0, d_pending = 0;
};

//! Replays a host vector of samples (looping) as fast as the flowgraph takes them and
//! records when each CPI's last sample was handed downstream.
//! Items are `vlen` samples each (1: a sample stream; nrange: one pulse per item);
//! total, cpi_samples and rate then count items, and samples.size() is a whole number
//! of items.
class host_replay_source : public gr::sync_block
{
public:
    /*!
     * rate: samples (items) per second to pace to (a hardware source's clock), 0 =
     * unpaced.
     * pieces_per_cpi (paced only): a paced call hands out at most cpi_samples /
     * pieces_per_cpi samples, each not before its last sample's time. 1: a CPI at once,
     * at its last sample's time (the worst case for latency: its whole host -> device
     * copy starts then); larger: samples arrive as from an SDR, in pieces far smaller
     * than a CPI, so the copies of a CPI overlap its arrival.
     */
    host_replay_source(const std::vector<cfloat>& samples,
                       std::uint64_t total,
                       std::uint64_t cpi_samples,
                       const source_tuning& tuning,
                       double rate = 0.0,
                       std::uint64_t pieces_per_cpi = 1,
                       std::size_t vlen = 1)
        : host_replay_source(samples.data(),
                             samples.size(),
                             sizeof(cfloat),
                             total,
                             cpi_samples,
                             tuning,
                             rate,
                             pieces_per_cpi,
                             vlen)
    {
    }
    //! The same from nsamples samples of sample_bytes each (sc16: 4, sc8: 2) at data,
    //! which must outlive the source.
    host_replay_source(const void* data,
                       std::size_t nsamples,
                       std::size_t sample_bytes,
                       std::uint64_t total,
                       std::uint64_t cpi_samples,
                       const source_tuning& tuning,
                       double rate = 0.0,
                       std::uint64_t pieces_per_cpi = 1,
                       std::size_t vlen = 1)
        : gr::sync_block("host_replay_source",
                         gr::io_signature::make(0, 0, 0),
                         gr::io_signature::make(1, 1, vlen * sample_bytes)),
          d_data(static_cast<const char*>(data)),
          d_nsamples(nsamples),
          d_sample_bytes(sample_bytes),
          d_vlen(vlen),
          d_total(total),
          d_cpi_samples(cpi_samples),
          d_rate(rate),
          d_piece(std::max<std::uint64_t>(
              1, cpi_samples / std::max<std::uint64_t>(1, pieces_per_cpi))),
          d_record_cpi_ends(tuning.record_cpi_ends),
          d_copy(copy_pool::threads_for(tuning.copy_threads))
    {
        // Large work calls: a memcpy per call, not per default 32 kB buffer
        // (tuning.buffer_cpis CPIs); a device_buffer behind it (the CUDA framer's input)
        // doubles that (device_buffer::host_to_device_depth).
        set_min_output_buffer(static_cast<long>(tuning.buffer_cpis * cpi_samples));
        if (d_record_cpi_ends)
            d_cpi_end.reserve(total / cpi_samples + 1);
    }
    int
    work(int noutput_items, gr_vector_const_void_star&, gr_vector_void_star& out) override
    {
        const std::uint64_t done = nitems_written(0);
        if (done >= d_total)
            return WORK_DONE;
        auto n = static_cast<std::size_t>(
            std::min<std::uint64_t>(noutput_items, d_total - done));
        if (d_rate > 0) {
            // Paced: at most one piece per call, never past a CPI's end, not before its
            // time.
            if (done == 0)
                d_start = clock_type::now();
            n = std::min<std::size_t>(n, d_cpi_samples - done % d_cpi_samples);
            n = std::min<std::size_t>(n, d_piece);
            std::this_thread::sleep_until(
                d_start + std::chrono::duration_cast<clock_type::duration>(
                              std::chrono::duration<double>(double(done + n) / d_rate)));
        }
        auto* dst = static_cast<char*>(out[0]);
        const std::size_t first = done * d_vlen, count = n * d_vlen;
        const std::size_t sb = d_sample_bytes;
        std::size_t copied = 0;
        while (copied < count) {
            const std::size_t at = (first + copied) % d_nsamples;
            const std::size_t len = std::min(count - copied, d_nsamples - at);
            d_copy.copy(dst + copied * sb, d_data + at * sb, len * sb);
            copied += len;
        }
        const auto now = clock_type::now();
        for (std::uint64_t end = (done / d_cpi_samples + 1) * d_cpi_samples;
             d_record_cpi_ends && end <= done + n;
             end += d_cpi_samples)
            d_cpi_end.push_back(now);
        return static_cast<int>(n);
    }
    //! When the last sample of CPI k left the source.
    const std::vector<clock_type::time_point>& cpi_end() const { return d_cpi_end; }

private:
    const char* d_data; //!< the caller's samples
    const std::size_t d_nsamples;
    const std::size_t d_sample_bytes;
    const std::size_t d_vlen;
    const std::uint64_t d_total, d_cpi_samples;
    const double d_rate;
    const std::uint64_t d_piece; //!< samples per paced call, at most
    const bool d_record_cpi_ends;
    copy_pool d_copy;
    clock_type::time_point d_start;
    std::vector<clock_type::time_point> d_cpi_end;
};

//! Records the arrival time and detection count of each detections PDU, by its cpi index.
class detections_timer : public gr::block
{
public:
    detections_timer()
        : gr::block("detections_timer",
                    gr::io_signature::make(0, 0, 0),
                    gr::io_signature::make(0, 0, 0))
    {
        message_port_register_in(pmt::mp("in"));
        set_msg_handler(pmt::mp("in"), [this](const pmt::pmt_t& pdu) {
            const auto now = clock_type::now();
            const auto meta = pmt::car(pdu);
            const auto index =
                pmt::to_uint64(pmt::dict_ref(meta, pmt::mp("cpi"), pmt::from_uint64(0)));
            std::lock_guard<std::mutex> lock(d_mutex);
            d_arrivals.push_back({ index, now, pmt::length(pmt::cdr(pdu)) });
        });
    }
    struct arrival {
        std::uint64_t cpi;
        clock_type::time_point when;
        std::size_t detections;
    };
    std::vector<arrival> arrivals() const
    {
        std::lock_guard<std::mutex> lock(d_mutex);
        return d_arrivals;
    }

private:
    mutable std::mutex d_mutex;
    std::vector<arrival> d_arrivals;
};

inline double seconds(const std::function<void()>& f)
{
    const auto t0 = clock_type::now();
    f();
    return std::chrono::duration<double>(clock_type::now() - t0).count();
}

} // namespace gpuradar::bench::pd

#endif
