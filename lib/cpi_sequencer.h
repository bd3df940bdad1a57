/* Whole-CPI framing shared by the CPI-sized blocks (internal). */
#ifndef INCLUDED_GPURADAR_CPI_SEQUENCER_H
#define INCLUDED_GPURADAR_CPI_SEQUENCER_H

#include <gnuradio/logger.h>
#include <gnuradio/tags.h>
#include <pmt/pmt.h>
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace gr {
namespace gpuradar {

/*!
 * Decides, CPI by CPI, what a block that works on whole CPIs does with its input
 * (CONVENTIONS.md, Streams and the CPI):
 * - a `cpi` tag on the first item of the CPI gives its dict (and its index);
 * - without a tag the block counts items_per_cpi items from the start of the stream and
 *   makes a dict {index, npulses, nrange};
 * - a tag inside the CPI means samples were lost upstream: the items before it are a
 *   partial CPI and are discarded (counted), so that the next CPI starts on the tag;
 * - a tag whose npulses / nrange differ from the block's shape: the CPI is discarded.
 * A CPI is therefore never built across a gap or from two CPIs. Items at the end of the
 * stream that do not complete a CPI are never processed (GNU Radio ends the flowgraph
 * with them unread).
 */
class cpi_sequencer
{
public:
    cpi_sequencer(std::uint64_t items_per_cpi,
                  std::uint64_t npulses,
                  std::uint64_t nrange);

    struct step {
        pmt::pmt_t dict;        //!< the CPI's dict when drop == 0
        std::uint64_t drop = 0; //!< items to discard at `start` instead of a CPI
        std::string reason;     //!< why they are discarded, for the block's log
    };

    /*!
     * The CPI that would start at absolute input offset `start`, given the `cpi` tags
     * in [start, start + items_per_cpi) (any order). On a whole CPI the running index
     * advances; on a drop the dropped-CPI count does.
     */
    step next(std::uint64_t start, std::vector<gr::tag_t> tags);

    std::uint64_t items_per_cpi() const { return d_items_per_cpi; }
    //! CPIs (partial or of the wrong shape) discarded so far; safe from any thread.
    std::uint64_t dropped() const { return d_dropped.load(); }

private:
    const std::uint64_t d_items_per_cpi, d_npulses, d_nrange;
    std::uint64_t d_next_index = 0;
    std::atomic<std::uint64_t> d_dropped{ 0 };
};

/*!
 * The work() loop of a CPI block: up to `ncpi` whole CPIs from input 0, starting at
 * absolute offset `read0`. For each, `tags_in_range(tags, begin, end)` fetches the `cpi`
 * tags (gr::block::get_tags_in_range is protected, so the block passes a lambda) and
 * `run(consumed, cpi, dict)` processes the CPI whose first item is `consumed` items
 * into the window, as the block's `cpi`-th output CPI of this call. The loop stops at the
 * first discarded CPI (logged as `unit`s) so that the next call starts on its tag.
 */
struct cpi_run {
    std::uint64_t consumed = 0; //!< input items used, discarded ones included
    int cpis = 0;               //!< CPIs run
};

template <typename TagsInRange, typename Run>
cpi_run run_whole_cpis(cpi_sequencer& seq,
                       std::uint64_t read0,
                       int ncpi,
                       const gr::logger_ptr& logger,
                       const char* unit,
                       TagsInRange&& tags_in_range,
                       Run&& run)
{
    cpi_run r;
    while (r.cpis < ncpi) {
        const std::uint64_t start = read0 + r.consumed;
        std::vector<gr::tag_t> tags;
        tags_in_range(tags, start, start + seq.items_per_cpi());
        const auto s = seq.next(start, std::move(tags));
        if (s.drop) {
            logger->warn("discarded {} {} of a CPI: {} ({} CPIs dropped so far)",
                         s.drop,
                         unit,
                         s.reason,
                         seq.dropped());
            r.consumed += s.drop;
            break;
        }
        run(r.consumed, r.cpis, s.dict);
        r.consumed += seq.items_per_cpi();
        ++r.cpis;
    }
    return r;
}

} // namespace gpuradar
} // namespace gr

#endif
