/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "doppler_filter_impl.h"
#include "backend_select.h"
#include "cpi_tag.h"
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
                                          const std::string& backend)
{
    constexpr const char* name = "doppler_filter";
    check_positive(name, "nrange", nrange);
    check_positive(name, "channels", channels);
    const auto m = kernels::doppler_filter::parse_mti(mti);
    const auto w = kernels::window_spec::make(window, nbar, sll_db, beta, name);
    const auto b = select_backend(backend, name);
    // npulses and nfft are checked by the kernel (npulses >= 2 or 3, nfft >= npulses).
    return gnuradio::make_block_sptr<doppler_filter_impl>(
        npulses, nrange, nfft, channels, m, w, fftshift, b);
}

doppler_filter_impl::doppler_filter_impl(unsigned int npulses,
                                         unsigned int nrange,
                                         unsigned int nfft,
                                         unsigned int channels,
                                         kernels::doppler_filter::mti_mode mti,
                                         const kernels::window_spec& window,
                                         bool fftshift,
                                         kernels::backend backend)
    : gr::block("doppler_filter",
                stream_signature(backend, std::size_t(channels) * npulses * sizeof(gr_complex)),
                stream_signature(backend, std::size_t(channels) * nfft * sizeof(gr_complex))),
      gpu_stream_owner(backend, "doppler_filter"),
      d_npulses(npulses),
      d_nrange(nrange),
      d_nfft(nfft),
      d_channels(channels),
      d_fftshift(fftshift),
      d_backend(backend),
      // One kernel call per CPI: rows = every channel of every range bin.
      d_kernel(kernels::doppler_filter::make(backend,
                                             npulses,
                                             std::size_t(nrange) * channels,
                                             nfft,
                                             mti,
                                             window,
                                             fftshift,
                                             stream())),
      d_sequencer(nrange, npulses, nrange)
{
    set_output_multiple(static_cast<int>(nrange));
    set_tag_propagation_policy(TPP_DONT);
}

void doppler_filter_impl::forecast(int noutput_items, gr_vector_int& ninput_items_required)
{
    ninput_items_required[0] = noutput_items;
}

int doppler_filter_impl::general_work(int noutput_items,
                                      gr_vector_int& ninput_items,
                                      gr_vector_const_void_star& input_items,
                                      gr_vector_void_star& output_items)
{
    begin_work(); // before any kernel touches the buffers
    const auto* in = static_cast<const gr_complex*>(input_items[0]);
    auto* out = static_cast<gr_complex*>(output_items[0]);
    const std::size_t in_item = std::size_t(d_channels) * d_npulses;
    const std::size_t out_item = std::size_t(d_channels) * d_nfft;
    const int ncpi = std::min(noutput_items, ninput_items[0]) / static_cast<int>(d_nrange);
    const auto r = run_whole_cpis(
        d_sequencer,
        nitems_read(0),
        ncpi,
        d_logger,
        "range bins",
        [this](std::vector<gr::tag_t>& t, std::uint64_t a, std::uint64_t b) {
            get_tags_in_range(t, 0, a, b, cpi_tag_key());
        },
        [&](std::uint64_t consumed, int cpi, const pmt::pmt_t& dict) {
            d_kernel->run(in + consumed * in_item,
                          out + std::size_t(cpi) * d_nrange * out_item);
            add_item_tag(0,
                         nitems_written(0) + std::uint64_t(cpi) * d_nrange,
                         cpi_tag_key(),
                         with_doppler_axis(dict, d_nfft, d_fftshift));
        });
    const int produced = r.cpis * static_cast<int>(d_nrange);
    finish_work(produced);
    consume_each(static_cast<int>(r.consumed));
    return produced;
}

} // namespace gpuradar
} // namespace gr
