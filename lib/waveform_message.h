/* The `waveform` message of the pulse-compressing blocks (internal). */
#ifndef INCLUDED_GPURADAR_WAVEFORM_MESSAGE_H
#define INCLUDED_GPURADAR_WAVEFORM_MESSAGE_H

#include <gnuradio/basic_block.h>
#include <gnuradio/logger.h>
#include <gnuradio/types.h>
#include <pmt/pmt.h>
#include <functional>
#include <string>
#include <vector>

namespace gr {
namespace gpuradar {

//! The message port name, "waveform".
const pmt::pmt_t& waveform_port();

/*!
 * The waveform a `waveform` message asks for: a c32 vector as it is, or a dict with
 * `pulse_width` (s) and optionally `waveform` (a code, kernels/waveform.h; default
 * "lfm"), for lfm also `bandwidth` (Hz) and optionally `up` (default true: a bool, 0 or
 * 1, or the symbol "true" or "false"; anything else is refused): the pulse at
 * `samp_rate`. Throws std::invalid_argument saying what is wrong.
 */
std::vector<gr_complex> waveform_from_message(const pmt::pmt_t& msg, double samp_rate);

/*!
 * Registers the `waveform` input port of `block`: each message's waveform
 * (waveform_from_message at samp_rate) goes to `apply`; a bad message, or a waveform that
 * `apply` rejects (throws), is counted, logged on `logger` (with the count; a run of bad
 * messages through a log_limiter) and the current waveform kept (a message handler never
 * throws).
 */
void register_waveform_port(gr::basic_block& block,
                            double samp_rate,
                            gr::logger_ptr logger,
                            std::function<void(const std::vector<gr_complex>&)> apply);

/*!
 * The waveform parameter of a block: "custom" gives custom_waveform, any other code
 * (lfm, barker:N, frank:N, p4:N) kernels::make_waveform. std::invalid_argument naming
 * the block and the parameter (an unknown code: with the list of allowed ones; samp_rate
 * <= 0 or not finite, whatever the waveform).
 */
std::vector<gr_complex> waveform_parameter(const char* block,
                                           const std::string& waveform,
                                           const std::vector<gr_complex>& custom_waveform,
                                           double bandwidth,
                                           double pulse_width,
                                           double samp_rate,
                                           bool up_chirp);

} // namespace gpuradar
} // namespace gr

#endif
