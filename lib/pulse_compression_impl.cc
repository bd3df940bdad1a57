/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "backend_select.h"
#include "cpi_tag.h"
#include "pulse_compression_impl.h"
#include "waveform_message.h"
#include <gnuradio/io_signature.h>
#include <algorithm>

namespace gr {
namespace gpuradar {


pulse_compression::sptr
pulse_compression::make(unsigned int nrange,
                        unsigned int npulses,
                        unsigned int channels,
                        const std::string& waveform,
                        const std::vector<gr_complex>& custom_waveform,
                        double bandwidth,
                        double pulse_width,
                        double samp_rate,
                        bool up_chirp,
                        const std::string& window,
                        int nbar,
                        double sll_db,
                        double beta,
                        bool normalize,
                        const std::string& method,
                        const std::string& backend,
                        int device,
                        const std::string& input_type)
{
    constexpr const char* name = "pulse_compression";
    check_positive(name, "nrange", nrange);
    check_positive(name, "npulses", npulses);
    check_positive(name, "channels", channels);
    const auto s = waveform_parameter(
        name, waveform, custom_waveform, bandwidth, pulse_width, samp_rate, up_chirp);
    const auto w = kernels::window_spec::make(window, nbar, sll_db, beta, name);
    const auto m = kernels::pulse_compression::parse_method(method);
    const auto in = kernels::parse_sample_format(input_type, name, "input_type");
    kernels::check_buffer_size(
        name,
        { { "npulses", npulses }, { "nrange", nrange }, { "channels", channels } },
        sizeof(gr_complex),
        "the CPI");
    check_item_size(
        name, { { "channels", channels }, { "nrange", nrange } }, sizeof(gr_complex));
    const auto b = select_backend(backend, name);
    return make_block_on_device<pulse_compression_impl>(b,
                                                        device,
                                                        name,
                                                        nrange,
                                                        npulses,
                                                        channels,
                                                        s,
                                                        samp_rate,
                                                        w,
                                                        normalize,
                                                        m,
                                                        b,
                                                        device,
                                                        in);
}

namespace {

//! Pulses in (counted in bytes: the input type's samples), the compressed pulses out
//! (every channel in each item).
cpi_framing framing(unsigned npulses,
                    unsigned nrange,
                    unsigned channels,
                    kernels::sample_format input)
{
    cpi_framing f;
    f.npulses = npulses;
    f.nrange = nrange;
    f.in = cpi_item::pulse;
    f.in_elements = std::size_t(channels) * nrange * kernels::sample_bytes(input);
    f.out = cpi_item::pulse;
    f.out_elements = std::size_t(channels) * nrange;
    return f;
}

} // namespace

pulse_compression_impl::pulse_compression_impl(unsigned int nrange,
                                               unsigned int npulses,
                                               unsigned int channels,
                                               const std::vector<gr_complex>& waveform,
                                               double samp_rate,
                                               const kernels::window_spec& window,
                                               bool normalize,
                                               kernels::pulse_compression::method method,
                                               kernels::backend backend,
                                               int device,
                                               kernels::sample_format input)
    : gr::block(
          "pulse_compression",
          stream_signature(backend,
                           std::size_t(channels) * nrange * kernels::sample_bytes(input)),
          stream_signature(backend, std::size_t(channels) * nrange * sizeof(gr_complex))),
      cpi_block("pulse_compression",
                backend,
                device,
                framing(npulses, nrange, channels, input)),
      d_npulses(npulses),
      d_samp_rate(samp_rate),
      // One kernel call per CPI: rows = every channel of every pulse of the CPI.
      d_kernel(kernels::pulse_compression::make(backend,
                                                nrange,
                                                std::size_t(npulses) * channels,
                                                waveform,
                                                window,
                                                normalize,
                                                method,
                                                stream(),
                                                0,
                                                input)),
      d_waveform(waveform)
{
    set_output_multiple(static_cast<int>(npulses));
    // Tags are re-emitted per CPI (partial CPIs shift the output against the input).
    set_tag_propagation_policy(TPP_DONT);
    register_waveform_port(
        *this, d_samp_rate, d_logger, [this](const auto& w) { set_waveform(w); });
}

void pulse_compression_impl::set_waveform(const std::vector<gr_complex>& waveform)
{
    // Between CPIs: work() holds the lock for each CPI it compresses. Throws (and keeps
    // the old waveform) on a bad one.
    std::lock_guard<std::mutex> lock(d_kernel_mutex);
    const device_guard on(*this); // a setter's thread
    d_kernel->set_waveform(waveform);
    d_waveform = waveform;
}

std::vector<gr_complex> pulse_compression_impl::waveform() const
{
    std::lock_guard<std::mutex> lock(d_kernel_mutex);
    return d_waveform;
}

std::string pulse_compression_impl::method() const
{
    return kernels::pulse_compression::to_string(d_kernel->resolved_method());
}

unsigned int pulse_compression_impl::fft_length() const
{
    return static_cast<unsigned int>(d_kernel->fft_length());
}

void pulse_compression_impl::process_cpi(const cpi_io& io)
{
    {
        std::lock_guard<std::mutex> lock(d_kernel_mutex); // waveform changes wait
        d_kernel->run_samples(io.in, io.out);             // in the input_type's format
    }
    add_item_tag(0, io.out_start, cpi_tag_key(), io.dict);
    // Other tags keep their pulse (the output is shifted by discarded pulses).
    std::vector<gr::tag_t> others;
    get_tags_in_range(others, 0, io.in_start, io.in_start + d_npulses);
    for (auto& t : others) {
        if (pmt::eqv(t.key, cpi_tag_key()))
            continue;
        t.offset = io.out_start + (t.offset - io.in_start);
        add_item_tag(0, t);
    }
}

} // namespace gpuradar
} // namespace gr
