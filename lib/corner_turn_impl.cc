/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "backend_select.h"
#include "corner_turn_impl.h"
#include "cpi_tag.h"
#include <gnuradio/io_signature.h>
#include <algorithm>

namespace gr {
namespace gpuradar {

corner_turn::sptr corner_turn::make(unsigned int npulses,
                                    unsigned int nrange,
                                    unsigned int channels,
                                    const std::string& backend,
                                    int device)
{
    check_positive("corner_turn", "npulses", npulses);
    check_positive("corner_turn", "nrange", nrange);
    check_positive("corner_turn", "channels", channels);
    kernels::corner_turn::validate(npulses, nrange, channels);
    check_item_size("corner_turn",
                    { { "channels", channels }, { "nrange", nrange } },
                    sizeof(gr_complex));
    check_item_size("corner_turn",
                    { { "channels", channels }, { "npulses", npulses } },
                    sizeof(gr_complex));
    const auto b = select_backend(backend, "corner_turn");
    return make_block_on_device<corner_turn_impl>(
        b, device, "corner_turn", npulses, nrange, channels, b, device);
}

namespace {

//! Pulses in, range bins out (every channel in each item): the transpose of one CPI.
cpi_framing framing(unsigned npulses, unsigned nrange, unsigned channels)
{
    cpi_framing f;
    f.npulses = npulses;
    f.nrange = nrange;
    f.in = cpi_item::pulse;
    f.in_elements = std::size_t(channels) * nrange;
    f.out = cpi_item::range_bin;
    f.out_elements = std::size_t(channels) * npulses;
    return f;
}

} // namespace

corner_turn_impl::corner_turn_impl(unsigned int npulses,
                                   unsigned int nrange,
                                   unsigned int channels,
                                   kernels::backend backend,
                                   int device)
    : gr::block(
          "corner_turn",
          stream_signature(backend, std::size_t(channels) * nrange * sizeof(gr_complex)),
          stream_signature(backend,
                           std::size_t(channels) * npulses * sizeof(gr_complex))),
      cpi_block("corner_turn", backend, device, framing(npulses, nrange, channels)),
      d_kernel(kernels::corner_turn::make(backend, npulses, nrange, channels, stream()))
{
    // Whole CPIs only: nrange output items per npulses input items. GNU Radio sizes the
    // buffers for at least two output multiples, i.e. two CPIs.
    set_output_multiple(static_cast<int>(nrange));
    set_relative_rate(std::uint64_t(nrange), std::uint64_t(npulses));
    // The cpi tag is re-emitted by hand with the output shape; nothing else maps 1:1.
    set_tag_propagation_policy(TPP_DONT);
}

void corner_turn_impl::process_cpi(const cpi_io& io)
{
    d_kernel->run(io.in, io.out);
    add_item_tag(0, io.out_start, cpi_tag_key(), io.dict);
}

} // namespace gpuradar
} // namespace gr
