/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "pulse_doppler_processor_impl.h"
#include "backend_select.h"
#include <gnuradio/io_signature.h>

namespace gr {
namespace gpuradar {

pulse_doppler_processor::sptr
pulse_doppler_processor::make(unsigned int nrange,
                              unsigned int npulses,
                              unsigned int nfft,
                              unsigned int channels,
                              const std::string& waveform,
                              const std::vector<gr_complex>& custom_waveform,
                              double bandwidth,
                              double pulse_width,
                              double samp_rate,
                              bool up_chirp,
                              const std::string& range_window,
                              int range_nbar,
                              double range_sll_db,
                              double range_beta,
                              bool normalize,
                              const std::string& method,
                              const std::string& mti,
                              const std::string& doppler_window,
                              int doppler_nbar,
                              double doppler_sll_db,
                              double doppler_beta,
                              bool fftshift,
                              const std::string& envelope_mode,
                              bool db,
                              const std::string& backend)
{
    // One backend for all four blocks, so that "auto" cannot split the chain.
    const std::string b = kernels::to_string(select_backend(backend, "pulse_doppler_processor"));
    // Each block validates its own parameters, naming them, before anything runs.
    auto pc = pulse_compression::make(nrange,
                                      npulses,
                                      channels,
                                      waveform,
                                      custom_waveform,
                                      bandwidth,
                                      pulse_width,
                                      samp_rate,
                                      up_chirp,
                                      range_window,
                                      range_nbar,
                                      range_sll_db,
                                      range_beta,
                                      normalize,
                                      method,
                                      b);
    auto ct = corner_turn::make(npulses, nrange, channels, b);
    auto df = doppler_filter::make(npulses,
                                   nrange,
                                   nfft,
                                   channels,
                                   mti,
                                   doppler_window,
                                   doppler_nbar,
                                   doppler_sll_db,
                                   doppler_beta,
                                   fftshift,
                                   b);
    auto env = envelope::make(channels * nfft, envelope_mode, db, b);
    return gnuradio::make_block_sptr<pulse_doppler_processor_impl>(
        pc,
        ct,
        df,
        env,
        std::size_t(channels) * nrange * sizeof(gr_complex),
        std::size_t(channels) * nfft * sizeof(float));
}

pulse_doppler_processor_impl::pulse_doppler_processor_impl(pulse_compression::sptr pc,
                                                           corner_turn::sptr ct,
                                                           doppler_filter::sptr df,
                                                           envelope::sptr env,
                                                           std::size_t in_itemsize,
                                                           std::size_t out_itemsize)
    : gr::hier_block2("pulse_doppler_processor",
                      gr::io_signature::make(1, 1, in_itemsize),
                      gr::io_signature::make(1, 1, out_itemsize)),
      d_pc(pc),
      d_ct(ct),
      d_df(df),
      d_env(env)
{
    connect(self(), 0, d_pc, 0);
    connect(d_pc, 0, d_ct, 0);
    connect(d_ct, 0, d_df, 0);
    connect(d_df, 0, d_env, 0);
    connect(d_env, 0, self(), 0);
    message_port_register_hier_in(pmt::mp("waveform"));
    msg_connect(self(), pmt::mp("waveform"), d_pc, pmt::mp("waveform"));
}

void pulse_doppler_processor_impl::set_waveform(const std::vector<gr_complex>& waveform)
{
    d_pc->set_waveform(waveform);
}

std::uint64_t pulse_doppler_processor_impl::dropped_cpis() const
{
    return d_pc->dropped_cpis() + d_ct->dropped_cpis() + d_df->dropped_cpis();
}

} // namespace gpuradar
} // namespace gr
