/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "backend_select.h"
#include "cpi_tag.h"
#include "doppler_filter_impl.h"
#include <gnuradio/io_signature.h>
#include <algorithm>

namespace gr {
namespace gpuradar {

doppler_filter::sptr doppler_filter::make(unsigned int npulses,
                                          unsigned int nrange,
                                          unsigned int nfft,
                                          unsigned int channels,
                                          const std::string& mti,
                                          const std::string& window,
                                          int nbar,
                                          double sll_db,
                                          double beta,
                                          bool fftshift,
                                          const std::string& backend,
                                          int device)
{
    constexpr const char* name = "doppler_filter";
    check_positive(name, "nrange", nrange);
    check_positive(name, "channels", channels);
    const auto m = kernels::doppler_filter::parse_mti(mti);
    const auto w = kernels::window_spec::make(window, nbar, sll_db, beta, name);
    // Before the io_signatures are made: the kernel's checks (npulses >= 2 or 3, nfft >=
    // npulses), the sizes in this block's parameters, the items.
    kernels::check_buffer_size(
        name,
        { { "nfft", nfft }, { "nrange", nrange }, { "channels", channels } },
        sizeof(gr_complex),
        "the Doppler bins of one CPI");
    kernels::doppler_filter::validate(
        npulses, std::size_t(nrange) * channels, nfft, m, w);
    check_item_size(
        name, { { "channels", channels }, { "nfft", nfft } }, sizeof(gr_complex));
    const auto b = select_backend(backend, name);
    return make_block_on_device<doppler_filter_impl>(
        b, device, name, npulses, nrange, nfft, channels, m, w, fftshift, b, device);
}

namespace {

//! Range bins in (the CPI's pulses), range bins out (their nfft Doppler bins), every
//! channel in each item.
cpi_framing framing(unsigned npulses, unsigned nrange, unsigned nfft, unsigned channels)
{
    cpi_framing f;
    f.npulses = npulses;
    f.nrange = nrange;
    f.in = cpi_item::range_bin;
    f.in_elements = std::size_t(channels) * npulses;
    f.out = cpi_item::range_bin;
    f.out_elements = std::size_t(channels) * nfft;
    return f;
}

} // namespace

doppler_filter_impl::doppler_filter_impl(unsigned int npulses,
                                         unsigned int nrange,
                                         unsigned int nfft,
                                         unsigned int channels,
                                         kernels::doppler_filter::mti_mode mti,
                                         const kernels::window_spec& window,
                                         bool fftshift,
                                         kernels::backend backend,
                                         int device)
    : gr::block(
          "doppler_filter",
          stream_signature(backend, std::size_t(channels) * npulses * sizeof(gr_complex)),
          stream_signature(backend, std::size_t(channels) * nfft * sizeof(gr_complex))),
      cpi_block(
          "doppler_filter", backend, device, framing(npulses, nrange, nfft, channels)),
      d_nfft(nfft),
      d_fftshift(fftshift),
      // One kernel call per CPI: rows = every channel of every range bin.
      d_kernel(kernels::doppler_filter::make(backend,
                                             npulses,
                                             std::size_t(nrange) * channels,
                                             nfft,
                                             mti,
                                             window,
                                             fftshift,
                                             stream()))
{
    set_output_multiple(static_cast<int>(nrange));
    set_tag_propagation_policy(TPP_DONT);
}

void doppler_filter_impl::process_cpi(const cpi_io& io)
{
    d_kernel->run(io.in, io.out);
    add_item_tag(
        0, io.out_start, cpi_tag_key(), with_doppler_axis(io.dict, d_nfft, d_fftshift));
}

} // namespace gpuradar
} // namespace gr
