/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "corner_turn_impl.h"
#include "backend_select.h"
#include "cpi_tag.h"
#include <algorithm>
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
      d_kernel(kernels::corner_turn::make(backend, npulses, nrange, channels, stream())),
      d_sequencer(npulses, npulses, nrange)
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
    begin_work(); // before any kernel touches the buffers
    const auto* in = static_cast<const gr_complex*>(input_items[0]);
    auto* out = static_cast<gr_complex*>(output_items[0]);
    const std::size_t cpi_samples = std::size_t(d_npulses) * d_channels * d_nrange;
    const int ncpi = std::min(noutput_items / static_cast<int>(d_nrange),
                              ninput_items[0] / static_cast<int>(d_npulses));
    const auto r = run_whole_cpis(
        d_sequencer,
        nitems_read(0),
        ncpi,
        d_logger,
        "pulses",
        [this](std::vector<gr::tag_t>& t, std::uint64_t a, std::uint64_t b) {
            get_tags_in_range(t, 0, a, b, cpi_tag_key());
        },
        [&](std::uint64_t consumed, int cpi, const pmt::pmt_t& dict) {
            d_kernel->run(in + consumed * d_channels * d_nrange, out + cpi * cpi_samples);
            add_item_tag(
                0, nitems_written(0) + std::uint64_t(cpi) * d_nrange, cpi_tag_key(), dict);
        });
    const int produced = r.cpis * static_cast<int>(d_nrange);
    finish_work(produced);
    consume_each(static_cast<int>(r.consumed));
    return produced;
}

} // namespace gpuradar
} // namespace gr
