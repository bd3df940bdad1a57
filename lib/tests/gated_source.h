/* A test source that emits its items up to a gate the test opens step by step, so that a
 * setter can be called while a flowgraph runs at a known point of the stream. */
#ifndef INCLUDED_GPURADAR_TEST_GATED_SOURCE_H
#define INCLUDED_GPURADAR_TEST_GATED_SOURCE_H

#include <gnuradio/io_signature.h>
#include <gnuradio/sync_block.h>
#include <condition_variable>
#include <algorithm>
#include <chrono>
#include <cstring>
#include <mutex>
#include <vector>

namespace gpuradar::test {

class gated_source : public gr::sync_block
{
public:
    using sptr = std::shared_ptr<gated_source>;

    //! items of `itemsize` bytes; `tags` are attached to their items as they go out.
    static sptr
    make(std::vector<char> data, std::size_t itemsize, std::vector<gr::tag_t> tags)
    {
        return gnuradio::make_block_sptr<gated_source>(
            std::move(data), itemsize, std::move(tags));
    }

    gated_source(std::vector<char> data,
                 std::size_t itemsize,
                 std::vector<gr::tag_t> tags)
        : gr::sync_block("gated_source",
                         gr::io_signature::make(0, 0, 0),
                         gr::io_signature::make(1, 1, itemsize)),
          d_data(std::move(data)),
          d_itemsize(itemsize),
          d_tags(std::move(tags))
    {
    }

    //! Lets items [0, n) out (n is clamped to the data).
    void open_to(std::uint64_t n)
    {
        std::lock_guard<std::mutex> lock(d_mutex);
        d_open = std::min<std::uint64_t>(n, d_data.size() / d_itemsize);
        d_cv.notify_all();
    }
    void open_all() { open_to(d_data.size() / d_itemsize); }

    int work(int noutput_items,
             gr_vector_const_void_star&,
             gr_vector_void_star& output_items) override
    {
        const std::uint64_t total = d_data.size() / d_itemsize;
        const std::uint64_t pos = nitems_written(0);
        if (pos >= total)
            return WORK_DONE;
        std::unique_lock<std::mutex> lock(d_mutex);
        // Wait briefly for the gate: returning 0 keeps the scheduler calling us.
        d_cv.wait_for(lock, std::chrono::milliseconds(20), [&] { return d_open > pos; });
        const std::uint64_t n = std::min<std::uint64_t>(d_open > pos ? d_open - pos : 0,
                                                        std::uint64_t(noutput_items));
        lock.unlock();
        std::memcpy(output_items[0], d_data.data() + pos * d_itemsize, n * d_itemsize);
        for (const auto& t : d_tags)
            if (t.offset >= pos && t.offset < pos + n)
                add_item_tag(0, t);
        return static_cast<int>(n);
    }

private:
    const std::vector<char> d_data;
    const std::size_t d_itemsize;
    const std::vector<gr::tag_t> d_tags;
    std::mutex d_mutex;
    std::condition_variable d_cv;
    std::uint64_t d_open = 0;
};

} // namespace gpuradar::test

#endif
