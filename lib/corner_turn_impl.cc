/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "corner_turn_impl.h"
#include "backend_select.h"
#include "cpi_tag.h"
#include <gnuradio/io_signature.h>

namespace gr {
namespace gpuradar {

corner_turn::sptr corner_turn::make(unsigned int npulses,
                                    unsigned int nrange,
                                    unsigned int channels,
                                    const std::string& backend)
{
    check_positive("corner_turn", "npulses", npulses);
    check_positive("corner_turn", "nrange", nrange);
    check_positive("corner_turn", "channels", channels);
    const auto b = select_backend(backend, "corner_turn");
    return gnuradio::make_block_sptr<corner_turn_impl>(npulses, nrange, channels, b);
}

corner_turn_impl::corner_turn_impl(unsigned int npulses,
                                   unsigned int nrange,
                                   unsigned int channels,
                                   kernels::backend backend)
    : gr::block("corner_turn",
                stream_signature(backend, std::size_t(channels) * nrange * sizeof(gr_complex)),
                stream_signature(backend, std::size_t(channels) * npulses * sizeof(gr_complex))),
      gpu_stream_owner(backend, "corner_turn"),
      d_npulses(npulses),
      d_nrange(nrange),
      d_channels(channels),
      d_backend(backend),
      d_kernel(kernels::corner_turn::make(backend, npulses, nrange, channels, stream()))
{
    // Whole CPIs only: nrange output items per npulses input items. GNU Radio sizes the
    // buffers for at least two output multiples, i.e. two CPIs.
    set_output_multiple(static_cast<int>(nrange));
    set_relative_rate(std::uint64_t(nrange), std::uint64_t(npulses));
    // The cpi tag is re-emitted by hand with the output shape; nothing else maps 1:1.
    set_tag_propagation_policy(TPP_DONT);
}

void corner_turn_impl::forecast(int noutput_items, gr_vector_int& ninput_items_required)
{
    ninput_items_required[0] = (noutput_items / static_cast<int>(d_nrange)) * d_npulses;
}

int corner_turn_impl::general_work(int noutput_items,
                                   gr_vector_int& ninput_items,
                                   gr_vector_const_void_star& input_items,
                                   gr_vector_void_star& output_items)
{
    const auto* in = static_cast<const gr_complex*>(input_items[0]);
    auto* out = static_cast<gr_complex*>(output_items[0]);
    const std::size_t in_cpi = std::size_t(d_npulses) * d_channels * d_nrange;
    const int ncpi = std::min(noutput_items / static_cast<int>(d_nrange),
                              ninput_items[0] / static_cast<int>(d_npulses));
    const std::uint64_t read0 = nitems_read(0);

    int done = 0;
    int dropped_items = 0;
    for (; done < ncpi; ++done) {
        const std::uint64_t start = read0 + std::uint64_t(done) * d_npulses;
        std::vector<gr::tag_t> tags;
        get_tags_in_range(tags, 0, start, start + d_npulses, cpi_tag_key());
        pmt::pmt_t dict;
        for (const auto& t : tags) {
            if (t.offset == start) {
                dict = t.value;
            } else {
                // A new CPI starts inside this one: samples were lost upstream. Drop the
                // partial CPI and realign on the tag.
                dropped_items = static_cast<int>(t.offset - start);
                break;
            }
        }
        if (!dropped_items && dict && !cpi_shape_matches(dict, d_npulses, d_nrange)) {
            // Data error, not a crash: a CPI of another shape cannot be turned here.
            d_logger->error("cpi tag shape {} pulses x {} bins differs from npulses={}, "
                            "nrange={}: CPI discarded",
                            cpi_field(dict, "npulses", 0),
                            cpi_field(dict, "nrange", 0),
                            d_npulses,
                            d_nrange);
            dropped_items = static_cast<int>(d_npulses);
        }
        if (dropped_items)
            break;
        if (dict) {
            d_next_index = cpi_field(dict, "index", d_next_index);
        } else {
            dict = make_cpi_dict(d_next_index, d_npulses, d_nrange);
        }
        d_kernel->run(in + done * in_cpi, out + done * in_cpi);
        add_item_tag(0, nitems_written(0) + std::uint64_t(done) * d_nrange, cpi_tag_key(), dict);
        ++d_next_index;
    }
    finish_work();
    if (dropped_items) {
        ++d_dropped;
        d_logger->warn("discarded {} items of a CPI ({} CPIs dropped so far)",
                       dropped_items,
                       d_dropped.load());
    }
    consume_each(done * static_cast<int>(d_npulses) + dropped_items);
    return done * static_cast<int>(d_nrange);
}

} // namespace gpuradar
} // namespace gr
