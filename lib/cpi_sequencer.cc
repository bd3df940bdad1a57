/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "cpi_sequencer.h"
#include "cpi_tag.h"
#include <algorithm>

namespace gr {
namespace gpuradar {

cpi_sequencer::cpi_sequencer(std::uint64_t items_per_cpi,
                             std::uint64_t npulses,
                             std::uint64_t nrange)
    : d_items_per_cpi(items_per_cpi), d_npulses(npulses), d_nrange(nrange)
{
}

cpi_sequencer::step cpi_sequencer::next(std::uint64_t start, std::vector<gr::tag_t> tags)
{
    std::sort(tags.begin(), tags.end(), gr::tag_t::offset_compare);
    step s;
    for (const auto& t : tags) {
        if (t.offset == start) {
            s.dict = t.value;
        } else if (t.offset > start) {
            s.drop = t.offset - start;
            s.reason = "a new CPI's tag arrived before this one was complete (samples "
                       "lost upstream)";
            ++d_dropped;
            return s;
        }
    }
    if (s.dict && !cpi_shape_matches(s.dict, d_npulses, d_nrange)) {
        s.drop = d_items_per_cpi;
        s.reason = "its cpi tag's shape " +
                   std::to_string(cpi_field(s.dict, "npulses", 0)) + " pulses x " +
                   std::to_string(cpi_field(s.dict, "nrange", 0)) +
                   " bins differs from the block's npulses=" + std::to_string(d_npulses) +
                   ", nrange=" + std::to_string(d_nrange);
        s.dict = pmt::pmt_t();
        ++d_dropped;
        return s;
    }
    if (s.dict)
        d_next_index = cpi_field(s.dict, "index", d_next_index);
    else
        s.dict = make_cpi_dict(d_next_index, d_npulses, d_nrange);
    ++d_next_index;
    return s;
}

} // namespace gpuradar
} // namespace gr
