/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "backend_select.h"
#include "cpi_tag.h"
#include "pulse_doppler_processor_impl.h"
#include "waveform_message.h"
#include <gnuradio/io_signature.h>
#include <algorithm>

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
                              const std::string& backend,
                              unsigned int tap_every)
{
    constexpr const char* name = "pulse_doppler_processor";
    check_positive(name, "nrange", nrange);
    check_positive(name, "npulses", npulses);
    check_positive(name, "nfft", nfft);
    check_positive(name, "channels", channels);
    kernels::pulse_doppler_processor_params p;
    p.npulses = npulses;
    p.nrange = nrange;
    p.channels = channels;
    p.waveform = waveform_parameter(
        name, waveform, custom_waveform, bandwidth, pulse_width, samp_rate, up_chirp);
    p.range_window = kernels::window_spec::make(
        range_window, range_nbar, range_sll_db, range_beta, name);
    p.normalize = normalize;
    p.pc_method = kernels::pulse_compression::parse_method(method);
    p.nfft = nfft;
    p.mti = kernels::doppler_filter::parse_mti(mti);
    p.doppler_window = kernels::window_spec::make(
        doppler_window, doppler_nbar, doppler_sll_db, doppler_beta, name);
    p.fftshift = fftshift;
    p.env_mode = kernels::envelope::parse_mode(envelope_mode);
    p.db = db;
    const auto b = select_backend(backend, name);
    // The kernel checks the rest (npulses >= 2 or 3, nfft >= npulses, waveform length).
    return gnuradio::make_block_sptr<pulse_doppler_processor_impl>(
        p, samp_rate, b, tap_every);
}

pulse_doppler_processor_impl::pulse_doppler_processor_impl(
    const kernels::pulse_doppler_processor_params& p,
    double samp_rate,
    kernels::backend backend,
    unsigned tap_every)
    : gr::block("pulse_doppler_processor",
                stream_signature(backend, p.channels * p.nrange * sizeof(gr_complex)),
                stream_signature(backend, p.channels * p.nfft * sizeof(float))),
      gpu_stream_owner(backend, "pulse_doppler_processor"),
      d_npulses(p.npulses),
      d_nrange(p.nrange),
      d_nfft(p.nfft),
      d_channels(p.channels),
      d_fftshift(p.fftshift),
      d_samp_rate(samp_rate),
      d_backend(backend),
      d_kernel(kernels::pulse_doppler_processor::make(backend, p, stream())),
      d_sequencer(p.npulses, p.npulses, p.nrange),
      d_tap(tap_every,
            d_kernel->output_size(),
            backend,
            stream(),
            [this](const pmt::pmt_t& msg) { message_port_pub(map_port(), msg); })
{
    message_port_register_out(map_port());
    set_output_multiple(static_cast<int>(d_nrange));
    set_relative_rate(std::uint64_t(d_nrange), std::uint64_t(d_npulses));
    set_tag_propagation_policy(TPP_DONT);
    register_waveform_port(
        *this, d_samp_rate, d_logger, [this](const auto& w) { set_waveform(w); });
}

void pulse_doppler_processor_impl::set_waveform(const std::vector<gr_complex>& waveform)
{
    std::lock_guard<std::mutex> lock(d_kernel_mutex);
    d_kernel->set_waveform(waveform);
}

pmt::pmt_t pulse_doppler_processor_impl::tap_meta(const pmt::pmt_t& dict) const
{
    const auto& p = d_kernel->get_params();
    pmt::pmt_t m = pmt::make_dict();
    auto add = [&m](const char* k, const pmt::pmt_t& v) {
        m = pmt::dict_add(m, pmt::intern(k), v);
    };
    add("cpi", pmt::from_uint64(cpi_field(dict, "index", 0)));
    add("nrange", pmt::from_uint64(d_nrange));
    add("ndoppler", pmt::from_uint64(d_nfft));
    add("channels", pmt::from_uint64(d_channels));
    add("fs", pmt::from_double(cpi_double(dict, "fs", d_samp_rate)));
    add("prf", pmt::from_double(cpi_double(dict, "prf", 0.0)));
    add("fc", pmt::from_double(cpi_double(dict, "fc", 0.0)));
    add("fftshift", pmt::from_bool(d_fftshift));
    add("db", pmt::from_bool(p.db));
    add("envelope", pmt::string_to_symbol(kernels::envelope::to_string(p.env_mode)));
    add("r0_m", pmt::from_double(cpi_double(dict, "r0", 0.0)));
    double rx_time = 0.0;
    if (cpi_rx_time_seconds(dict, &rx_time))
        add("rx_time", pmt::from_double(rx_time));
    return m;
}

bool pulse_doppler_processor_impl::stop()
{
    d_tap.publish_ready(true); // the last tapped CPIs' copies
    return true;
}

void pulse_doppler_processor_impl::forecast(int noutput_items,
                                            gr_vector_int& ninput_items_required)
{
    ninput_items_required[0] = (noutput_items / static_cast<int>(d_nrange)) * d_npulses;
}

int pulse_doppler_processor_impl::general_work(int noutput_items,
                                               gr_vector_int& ninput_items,
                                               gr_vector_const_void_star& input_items,
                                               gr_vector_void_star& output_items)
{
    begin_work(true); // before any kernel touches the buffers; inputs per CPI below
    const auto* in = static_cast<const gr_complex*>(input_items[0]);
    auto* out = static_cast<float*>(output_items[0]);
    const std::size_t in_item = d_channels * d_nrange;
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
            wait_for_input(nitems_read(0) + consumed + d_npulses);
            {
                std::lock_guard<std::mutex> lock(d_kernel_mutex);
                float* map = out + std::size_t(cpi) * d_kernel->output_size();
                d_kernel->run(in + consumed * in_item, map);
                if (d_tap.due())
                    d_tap.capture(map, tap_meta(dict));
            }
            add_item_tag(0,
                         nitems_written(0) + std::uint64_t(cpi) * d_nrange,
                         cpi_tag_key(),
                         with_doppler_axis(dict, d_nfft, d_fftshift));
        });
    const int produced = r.cpis * static_cast<int>(d_nrange);
    finish_work(produced);
    d_tap.publish_ready(false);
    consume_each(static_cast<int>(r.consumed));
    return produced;
}

} // namespace gpuradar
} // namespace gr
