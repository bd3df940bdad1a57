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

namespace {

//! The envelope stage names its own parameter `mode`; this block's is envelope_mode.
kernels::envelope::mode parse_envelope_mode(const std::string& mode, const char* block)
{
    if (mode == "square_law" || mode == "linear")
        return kernels::envelope::parse_mode(mode);
    throw std::invalid_argument(
        std::string("gpuradar::") + block +
        ": envelope_mode must be one of square_law, linear (got '" + mode + "')");
}

} // namespace

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
                              unsigned int tap_every,
                              int device,
                              const std::string& input_type)
{
    params p;
    p.nrange = nrange;
    p.npulses = npulses;
    p.nfft = nfft;
    p.channels = channels;
    p.waveform = waveform;
    p.custom_waveform = custom_waveform;
    p.bandwidth = bandwidth;
    p.pulse_width = pulse_width;
    p.samp_rate = samp_rate;
    p.up_chirp = up_chirp;
    p.range_window = range_window;
    p.range_nbar = range_nbar;
    p.range_sll_db = range_sll_db;
    p.range_beta = range_beta;
    p.normalize = normalize;
    p.method = method;
    p.mti = mti;
    p.doppler_window = doppler_window;
    p.doppler_nbar = doppler_nbar;
    p.doppler_sll_db = doppler_sll_db;
    p.doppler_beta = doppler_beta;
    p.fftshift = fftshift;
    p.envelope_mode = envelope_mode;
    p.db = db;
    p.backend = backend;
    p.tap_every = tap_every;
    p.device = device;
    p.input_type = input_type;
    return make(p);
}

pulse_doppler_processor::sptr pulse_doppler_processor::make(const params& a)
{
    constexpr const char* name = "pulse_doppler_processor";
    check_positive(name, "nrange", a.nrange);
    check_positive(name, "npulses", a.npulses);
    check_positive(name, "nfft", a.nfft);
    check_positive(name, "channels", a.channels);
    kernels::pulse_doppler_processor_params p;
    p.npulses = a.npulses;
    p.nrange = a.nrange;
    p.channels = a.channels;
    p.waveform = waveform_parameter(name,
                                    a.waveform,
                                    a.custom_waveform,
                                    a.bandwidth,
                                    a.pulse_width,
                                    a.samp_rate,
                                    a.up_chirp);
    p.range_window = kernels::window_spec::make(
        a.range_window, a.range_nbar, a.range_sll_db, a.range_beta, name, "range_");
    p.normalize = a.normalize;
    p.pc_method = kernels::pulse_compression::parse_method(a.method);
    p.nfft = a.nfft;
    p.mti = kernels::doppler_filter::parse_mti(a.mti);
    p.doppler_window = kernels::window_spec::make(a.doppler_window,
                                                  a.doppler_nbar,
                                                  a.doppler_sll_db,
                                                  a.doppler_beta,
                                                  name,
                                                  "doppler_");
    p.fftshift = a.fftshift;
    p.env_mode = parse_envelope_mode(a.envelope_mode, name);
    p.db = a.db;
    p.input = kernels::parse_sample_format(a.input_type, name, "input_type");
    // The kernel's checks (npulses >= 2 or 3, nfft >= npulses, waveform length, the
    // Doppler map's size) and the items', before the io_signatures are made.
    kernels::pulse_doppler_processor::validate(p);
    check_item_size(
        name, { { "channels", a.channels }, { "nrange", a.nrange } }, sizeof(gr_complex));
    check_item_size(
        name, { { "channels", a.channels }, { "nfft", a.nfft } }, sizeof(float));
    const auto b = select_backend(a.backend, name);
    return make_block_on_device<pulse_doppler_processor_impl>(
        b, a.device, name, p, a.samp_rate, b, a.tap_every, a.device);
}

namespace {

//! Pulses in, each CPI's Doppler spectra out by range bin (every channel in each item).
cpi_framing framing(const kernels::pulse_doppler_processor_params& p)
{
    cpi_framing f;
    f.npulses = p.npulses;
    f.nrange = p.nrange;
    f.in = cpi_item::pulse;
    f.in_elements = p.channels * p.nrange * kernels::sample_bytes(p.input); // bytes
    f.out = cpi_item::range_bin;
    f.out_elements = p.channels * p.nfft;
    f.wait_per_cpi = true; // each CPI waits only for its own input
    return f;
}

} // namespace

pulse_doppler_processor_impl::pulse_doppler_processor_impl(
    const kernels::pulse_doppler_processor_params& p,
    double samp_rate,
    kernels::backend backend,
    unsigned tap_every,
    int device)
    : gr::block("pulse_doppler_processor",
                stream_signature(backend,
                                 p.channels * p.nrange * kernels::sample_bytes(p.input)),
                stream_signature(backend, p.channels * p.nfft * sizeof(float))),
      cpi_block("pulse_doppler_processor", backend, device, framing(p)),
      d_npulses(p.npulses),
      d_nrange(p.nrange),
      d_nfft(p.nfft),
      d_channels(p.channels),
      d_fftshift(p.fftshift),
      d_samp_rate(samp_rate),
      d_kernel(kernels::pulse_doppler_processor::make(backend, p, stream())),
      d_changes(p,
                [this](const kernels::pulse_doppler_processor_params& q) {
                    const device_guard on(*this); // a setter's thread
                    return kernels::pulse_doppler_processor::make(d_backend, q, stream());
                }),
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
    d_changes.change(
        [&](auto& p) { p.waveform.assign(waveform.begin(), waveform.end()); });
}

void pulse_doppler_processor_impl::set_mti(const std::string& mti)
{
    d_changes.change([&](auto& p) { p.mti = kernels::doppler_filter::parse_mti(mti); });
}

void pulse_doppler_processor_impl::set_window(
    kernels::window_spec kernels::pulse_doppler_processor_params::*which,
    const std::string& window,
    int nbar,
    double sll_db,
    double beta,
    const char* prefix)
{
    d_changes.change([&](auto& p) {
        p.*which = kernels::window_spec::make(
            window, nbar, sll_db, beta, "pulse_doppler_processor", prefix);
    });
}

void pulse_doppler_processor_impl::set_range_window(const std::string& window,
                                                    int nbar,
                                                    double sll_db,
                                                    double beta)
{
    set_window(&kernels::pulse_doppler_processor_params::range_window,
               window,
               nbar,
               sll_db,
               beta,
               "range_");
}

void pulse_doppler_processor_impl::set_doppler_window(const std::string& window,
                                                      int nbar,
                                                      double sll_db,
                                                      double beta)
{
    set_window(&kernels::pulse_doppler_processor_params::doppler_window,
               window,
               nbar,
               sll_db,
               beta,
               "doppler_");
}

void pulse_doppler_processor_impl::set_db(bool db)
{
    d_changes.change([&](auto& p) { p.db = db; });
}

std::string pulse_doppler_processor_impl::implementation() const
{
    std::lock_guard<std::mutex> lock(d_kernel_mutex);
    return d_kernel->implementation();
}

void pulse_doppler_processor_impl::apply_pending_change()
{
    std::unique_ptr<kernels::pulse_doppler_processor> next;
    kernels::pulse_doppler_processor_params p;
    if (!d_changes.take(next, p))
        return;
    // The old object's kernels may still run on the stream: let them finish before it
    // frees its workspaces.
    synchronize_stream();
    std::lock_guard<std::mutex> lock(d_kernel_mutex);
    d_kernel = std::move(next);
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
    if (cpi_has(dict, "nonfinite_samples"))
        add("nonfinite_samples",
            pmt::from_uint64(cpi_field(dict, "nonfinite_samples", 0)));
    // The framer's other per-CPI receiver facts, where it gave them, as it gave them.
    for (const char* k : { "clamped_samples",
                           "saturated_samples",
                           "clock_slip_samples",
                           "clock_offset_ppm",
                           "iq_gain_db",
                           "iq_phase_deg",
                           "iq_corrected" })
        if (cpi_has(dict, k))
            add(k, pmt::dict_ref(dict, pmt::intern(k), pmt::PMT_NIL));
    return m;
}

bool pulse_doppler_processor_impl::stop()
{
    d_tap.publish_ready(true); // the last tapped CPIs' copies
    return true;
}

void pulse_doppler_processor_impl::process_cpi(const cpi_io& io)
{
    apply_pending_change();
    d_kernel->run_samples(io.in, io.out); // in the input_type's format
    if (d_tap.due())
        d_tap.capture(io.out, tap_meta(io.dict));
    add_item_tag(
        0, io.out_start, cpi_tag_key(), with_doppler_axis(io.dict, d_nfft, d_fftshift));
}

void pulse_doppler_processor_impl::after_work() { d_tap.publish_ready(false); }

} // namespace gpuradar
} // namespace gr
