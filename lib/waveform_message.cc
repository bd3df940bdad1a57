/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "log_limiter.h"
#include "waveform_message.h"
#include <gpuradar/kernels/pulse_doppler/pulse_compression.h>
#include <gpuradar/kernels/waveform/waveform.h>
#include <cmath>
#include <cstdint>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>

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
    // The handler runs on the block's message thread only: its counts need no lock.
    struct bad_count {
        std::uint64_t total = 0;
        log_limiter log;
    };
    auto bad = std::make_shared<bad_count>();
    block.set_msg_handler(
        waveform_port(), [samp_rate, logger, apply, bad](const pmt::pmt_t& msg) {
            try {
                apply(waveform_from_message(msg, samp_rate));
            } catch (const std::exception& e) {
                ++bad->total;
                if (!bad->log.count())
                    return;
                logger->error("{}; keeping the current waveform ({} bad waveform "
                              "messages so far{})",
                              e.what(),
                              bad->total,
                              bad->log.quiet_note());
            }
        });
}

namespace {
/*!
 * The `up` field of a waveform dict: absent is an up-chirp; a bool, the integers 0 and 1,
 * or the symbols "true" and "false" (what a GRC message edit box or another tool sends).
 * Anything else is refused: pmt::is_true() would take the symbol "false" or a 0 as true.
 */
bool up_chirp(const pmt::pmt_t& msg)
{
    const auto key = pmt::mp("up");
    if (!pmt::dict_has_key(msg, key))
        return true;
    const auto up = pmt::dict_ref(msg, key, pmt::PMT_NIL);
    if (pmt::is_bool(up))
        return pmt::to_bool(up);
    if (pmt::is_uint64(up) && pmt::to_uint64(up) <= 1)
        return pmt::to_uint64(up) == 1;
    if (pmt::is_integer(up) && (pmt::to_long(up) == 0 || pmt::to_long(up) == 1))
        return pmt::to_long(up) == 1;
    if (pmt::is_symbol(up) &&
        (pmt::symbol_to_string(up) == "true" || pmt::symbol_to_string(up) == "false"))
        return pmt::symbol_to_string(up) == "true";
    std::string got = pmt::write_string(up);
    constexpr std::size_t max_shown = 40; // a vector's text can be any length
    if (got.size() > max_shown)
        got = got.substr(0, max_shown) + "...";
    throw std::invalid_argument("waveform message: 'up' must be true or false (a bool, "
                                "0 or 1, or the symbol \"true\" or \"false\"; got " +
                                got + ")");
}
} // namespace

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
    return ::gpuradar::kernels::make_waveform(code,
                                              code == "lfm" ? number("bandwidth") : 0.0,
                                              number("pulse_width"),
                                              samp_rate,
                                              up_chirp(msg),
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
    // Checked for a custom waveform too: the waveform message port makes its pulses at
    // samp_rate, and the cpi tag's fs falls back to it.
    if (!(samp_rate > 0.0) || !std::isfinite(samp_rate)) {
        std::ostringstream m;
        m << "gpuradar::" << block << ": samp_rate must be > 0 and finite (Hz) (got "
          << samp_rate << ")";
        throw std::invalid_argument(m.str());
    }
    if (waveform == "custom")
        return custom_waveform;
    return ::gpuradar::kernels::make_waveform(
        waveform, bandwidth, pulse_width, samp_rate, up_chirp, block, "custom");
}

} // namespace gpuradar
} // namespace gr
