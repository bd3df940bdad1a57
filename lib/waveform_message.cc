/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "waveform_message.h"
#include <gpuradar/kernels/pulse_doppler/pulse_compression.h>
#include <gpuradar/kernels/waveform/waveform.h>
#include <stdexcept>

namespace gr {
namespace gpuradar {

const pmt::pmt_t& waveform_port()
{
    static const pmt::pmt_t port = pmt::mp("waveform");
    return port;
}

void register_waveform_port(gr::basic_block& block,
                            double samp_rate,
                            gr::logger_ptr logger,
                            std::function<void(const std::vector<gr_complex>&)> apply)
{
    block.message_port_register_in(waveform_port());
    block.set_msg_handler(
        waveform_port(), [samp_rate, logger, apply](const pmt::pmt_t& msg) {
            try {
                apply(waveform_from_message(msg, samp_rate));
            } catch (const std::exception& e) {
                logger->error("{}; keeping the current waveform", e.what());
            }
        });
}

std::vector<gr_complex> waveform_from_message(const pmt::pmt_t& msg, double samp_rate)
{
    if (pmt::is_c32vector(msg))
        return pmt::c32vector_elements(msg);
    if (!pmt::is_dict(msg))
        throw std::invalid_argument(
            "waveform message must be a c32 vector or a dict with "
            "pulse_width and, for lfm, bandwidth (and up)");
    const auto number = [&](const char* key) {
        const auto v = pmt::dict_ref(msg, pmt::mp(key), pmt::PMT_NIL);
        // pmt::to_double throws pmt::wrong_type on a uint64, so each real kind by itself.
        if (pmt::is_real(v))
            return pmt::to_double(v);
        if (pmt::is_uint64(v))
            return static_cast<double>(pmt::to_uint64(v));
        if (pmt::is_integer(v))
            return static_cast<double>(pmt::to_long(v));
        throw std::invalid_argument(std::string("waveform message: '") + key +
                                    "' missing or not a real number");
    };
    const auto code_pmt = pmt::dict_ref(msg, pmt::mp("waveform"), pmt::mp("lfm"));
    if (!pmt::is_symbol(code_pmt))
        throw std::invalid_argument("waveform message: 'waveform' must be a code string "
                                    "(lfm, barker:N, frank:N, p4:N)");
    const std::string code = pmt::symbol_to_string(code_pmt);
    const auto up = pmt::dict_ref(msg, pmt::mp("up"), pmt::PMT_T);
    return ::gpuradar::kernels::make_waveform(code,
                                              code == "lfm" ? number("bandwidth") : 0.0,
                                              number("pulse_width"),
                                              samp_rate,
                                              pmt::is_true(up),
                                              "waveform message");
}

std::vector<gr_complex> waveform_parameter(const char* block,
                                           const std::string& waveform,
                                           const std::vector<gr_complex>& custom_waveform,
                                           double bandwidth,
                                           double pulse_width,
                                           double samp_rate,
                                           bool up_chirp)
{
    if (waveform == "custom")
        return custom_waveform;
    return ::gpuradar::kernels::make_waveform(
        waveform, bandwidth, pulse_width, samp_rate, up_chirp, block, "custom");
}

} // namespace gpuradar
} // namespace gr
