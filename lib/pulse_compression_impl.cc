/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "pulse_compression_impl.h"
#include "backend_select.h"
#include "cpi_tag.h"
#include <gnuradio/io_signature.h>
#include <algorithm>
#include <stdexcept>

namespace gr {
namespace gpuradar {

namespace {

const pmt::pmt_t& waveform_port()
{
    static const pmt::pmt_t port = pmt::mp("waveform");
    return port;
}

std::vector<gr_complex> lfm_or_custom(const std::string& waveform,
                                      const std::vector<gr_complex>& custom_waveform,
                                      double bandwidth,
                                      double pulse_width,
                                      double samp_rate,
                                      bool up_chirp)
{
    if (waveform == "custom")
        return custom_waveform;
    if (waveform != "lfm")
        throw std::invalid_argument(
            "gpuradar::pulse_compression: waveform must be one of lfm, custom (got '" +
            waveform + "')");
    try {
        return kernels::lfm_chirp(bandwidth, pulse_width, samp_rate, up_chirp);
    } catch (const std::invalid_argument& e) {
        // Name the block as well as the chirp parameter.
        throw std::invalid_argument(std::string("gpuradar::pulse_compression (lfm): ") +
                                    e.what());
    }
}

} // namespace

pulse_compression::sptr pulse_compression::make(unsigned int nrange,
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
                                                const std::string& backend)
{
    constexpr const char* name = "pulse_compression";
    check_positive(name, "nrange", nrange);
    check_positive(name, "npulses", npulses);
    check_positive(name, "channels", channels);
    const auto s =
        lfm_or_custom(waveform, custom_waveform, bandwidth, pulse_width, samp_rate, up_chirp);
    const auto w = kernels::window_spec::make(window, nbar, sll_db, beta, name);
    const auto m = kernels::pulse_compression::parse_method(method);
    const auto b = select_backend(backend, name);
    return gnuradio::make_block_sptr<pulse_compression_impl>(
        nrange, npulses, channels, s, samp_rate, w, normalize, m, b);
}

pulse_compression_impl::pulse_compression_impl(unsigned int nrange,
                                               unsigned int npulses,
                                               unsigned int channels,
                                               const std::vector<gr_complex>& waveform,
                                               double samp_rate,
                                               const kernels::window_spec& window,
                                               bool normalize,
                                               kernels::pulse_compression::method method,
                                               kernels::backend backend)
    : gr::block("pulse_compression",
                stream_signature(backend, std::size_t(channels) * nrange * sizeof(gr_complex)),
                stream_signature(backend, std::size_t(channels) * nrange * sizeof(gr_complex))),
      gpu_stream_owner(backend, "pulse_compression"),
      d_nrange(nrange),
      d_npulses(npulses),
      d_channels(channels),
      d_samp_rate(samp_rate),
      d_backend(backend),
      // One kernel call per CPI: rows = every channel of every pulse of the CPI.
      d_kernel(kernels::pulse_compression::make(backend,
                                                nrange,
                                                std::size_t(npulses) * channels,
                                                waveform,
                                                window,
                                                normalize,
                                                method,
                                                stream())),
      d_sequencer(npulses, npulses, nrange),
      d_waveform(waveform)
{
    set_output_multiple(static_cast<int>(npulses));
    // Tags are re-emitted per CPI (partial CPIs shift the output against the input).
    set_tag_propagation_policy(TPP_DONT);
    message_port_register_in(waveform_port());
    set_msg_handler(waveform_port(),
                    [this](const pmt::pmt_t& msg) { handle_waveform_message(msg); });
}

void pulse_compression_impl::set_waveform(const std::vector<gr_complex>& waveform)
{
    d_kernel->check_waveform(waveform); // throws before anything changes
    std::lock_guard<std::mutex> lock(d_waveform_mutex);
    d_pending = waveform;
    d_waveform = waveform;
}

std::vector<gr_complex> pulse_compression_impl::waveform() const
{
    std::lock_guard<std::mutex> lock(d_waveform_mutex);
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

void pulse_compression_impl::handle_waveform_message(const pmt::pmt_t& msg)
{
    try {
        if (pmt::is_c32vector(msg)) {
            set_waveform(pmt::c32vector_elements(msg));
        } else if (pmt::is_dict(msg)) {
            const auto get = [&](const char* key) {
                const auto v = pmt::dict_ref(msg, pmt::mp(key), pmt::PMT_NIL);
                if (!pmt::is_number(v))
                    throw std::invalid_argument(std::string("waveform message: '") + key +
                                                "' missing or not a number");
                return pmt::to_double(v);
            };
            const auto up = pmt::dict_ref(msg, pmt::mp("up"), pmt::PMT_T);
            set_waveform(kernels::lfm_chirp(
                get("bandwidth"), get("pulse_width"), d_samp_rate, pmt::is_true(up)));
        } else {
            throw std::invalid_argument(
                "waveform message must be a c32 vector or a dict with bandwidth, "
                "pulse_width (and up)");
        }
    } catch (const std::invalid_argument& e) {
        d_logger->error("{}; keeping the current waveform", e.what());
    }
}

void pulse_compression_impl::apply_pending_waveform()
{
    std::optional<std::vector<gr_complex>> pending;
    {
        std::lock_guard<std::mutex> lock(d_waveform_mutex);
        pending.swap(d_pending);
    }
    if (!pending)
        return;
    try {
        d_kernel->set_waveform(*pending);
    } catch (const std::exception& e) {
        // Checked when it arrived; a failure here is a device error. Never throw in work.
        d_logger->error("waveform change failed ({}); keeping the previous one", e.what());
    }
}

void pulse_compression_impl::forecast(int noutput_items, gr_vector_int& ninput_items_required)
{
    ninput_items_required[0] = noutput_items;
}

int pulse_compression_impl::general_work(int noutput_items,
                                         gr_vector_int& ninput_items,
                                         gr_vector_const_void_star& input_items,
                                         gr_vector_void_star& output_items)
{
    const auto* in = static_cast<const gr_complex*>(input_items[0]);
    auto* out = static_cast<gr_complex*>(output_items[0]);
    const std::size_t item = std::size_t(d_channels) * d_nrange;
    const int ncpi = std::min(noutput_items, ninput_items[0]) / static_cast<int>(d_npulses);
    const std::uint64_t read0 = nitems_read(0);
    const std::uint64_t written0 = nitems_written(0);

    int done = 0;
    std::uint64_t consumed = 0;
    while (done < ncpi) {
        const std::uint64_t start = read0 + consumed;
        std::vector<gr::tag_t> cpi_tags;
        get_tags_in_range(cpi_tags, 0, start, start + d_npulses, cpi_tag_key());
        const auto s = d_sequencer.next(start, std::move(cpi_tags));
        if (s.drop) {
            d_logger->warn("discarded {} pulses of a CPI: {} ({} CPIs dropped so far)",
                           s.drop,
                           s.reason,
                           d_sequencer.dropped());
            consumed += s.drop;
            break;
        }
        apply_pending_waveform(); // a CPI boundary
        const std::uint64_t out_start = written0 + std::uint64_t(done) * d_npulses;
        d_kernel->run(in + consumed * item, out + std::size_t(done) * d_npulses * item);
        add_item_tag(0, out_start, cpi_tag_key(), s.dict);
        std::vector<gr::tag_t> others;
        get_tags_in_range(others, 0, start, start + d_npulses);
        for (auto& t : others) {
            if (pmt::eqv(t.key, cpi_tag_key()))
                continue;
            t.offset = out_start + (t.offset - start);
            add_item_tag(0, t);
        }
        consumed += d_npulses;
        ++done;
    }
    finish_work();
    consume_each(static_cast<int>(consumed));
    return done * static_cast<int>(d_npulses);
}

} // namespace gpuradar
} // namespace gr
