/* Transmit waveforms by name: the one definition of the codes that pulse_compression,
 * pulse_doppler_processor and pulse_tx_source accept (LFM chirp and phase codes). */
#ifndef INCLUDED_GPURADAR_KERNELS_WAVEFORM_H
#define INCLUDED_GPURADAR_KERNELS_WAVEFORM_H

#include <gpuradar/kernels/common/backend.h>
#include <cstddef>
#include <string>
#include <vector>

namespace gpuradar::kernels {

/*!
 * The waveform codes, as a user writes them:
 * - "lfm": linear-FM chirp over `bandwidth` for `pulse_width` (lfm_chirp; up or down);
 * - "barker:N": binary Barker code of length N in {2, 3, 4, 5, 7, 11, 13} (peak sidelobe
 *   1/N of the compressed peak);
 * - "frank:N": Frank polyphase code of length N = M^2 (M >= 2): chip p M + q has phase
 *   2 pi p q / M, p, q = 0 .. M-1;
 * - "p4:N": P4 polyphase code of length N >= 2: chip k has phase pi k^2 / N - pi k.
 * Phase codes ignore `bandwidth` and `up`: their bandwidth is about the chip rate.
 */
extern const char* const waveform_codes;

/*!
 * The longest pulse any waveform may have, in samples (2^24: 128 MiB of complex float, a
 * 1.7 s pulse at 10 MHz). Every length is checked against it before anything is
 * allocated, so a pulse-width typo is an error naming the parameter and the memory it
 * would need, not a multi-gigabyte allocation.
 */
constexpr std::size_t max_waveform_samples = std::size_t(1) << 24;

//! Throws std::invalid_argument naming `stage` and `param` (with the memory the pulse
//! would take) when `samples` (a real number, so that overflow cannot hide) exceeds
//! max_waveform_samples.
void check_waveform_length(double samples, const char* stage, const char* param);

//! Binary Barker code of length n (+1 / -1 chips). Throws std::invalid_argument naming
//! `stage` and "waveform" for a length without a Barker code.
std::vector<int> barker_code(std::size_t n, const char* stage = "waveform");
//! Frank code phases (rad) for length n = M^2; throws unless n is such a square, M >= 2.
std::vector<double> frank_phases(std::size_t n, const char* stage = "waveform");
//! P4 code phases (rad) for length n >= 2.
std::vector<double> p4_phases(std::size_t n, const char* stage = "waveform");

/*!
 * Samples per chip when `nchips` chips fill `pulse_width_s` at `sample_rate_hz`:
 * round(pulse_width_s * sample_rate_hz / nchips), at least 1. The chip rate is then
 * sample_rate_hz / samples_per_chip and the pulse lasts nchips * samples_per_chip
 * samples (the pulse width rounded to whole chips of whole samples). Throws
 * std::invalid_argument naming pulse_width when a chip would get less than half a sample.
 */
std::size_t samples_per_chip(std::size_t nchips,
                             double pulse_width_s,
                             double sample_rate_hz,
                             const char* stage = "waveform");

//! Each chip value (unit modulus: +-1, or exp(j phase)) held for samples_per_chip
//! samples (rectangular chips).
std::vector<cfloat> phase_coded_pulse(const std::vector<cfloat>& chips,
                                      double pulse_width_s,
                                      double sample_rate_hz,
                                      const char* stage = "waveform");

/*!
 * \brief The pulse named by `code` (waveform_codes), unit amplitude.
 *
 * \param code            "lfm", "barker:N", "frank:N" or "p4:N"
 * \param bandwidth_hz    LFM only: swept bandwidth (0 < B <= fs)
 * \param pulse_width_s   pulse duration (phase codes: rounded to whole samples per chip)
 * \param sample_rate_hz  fs > 0
 * \param up              LFM only: up-chirp
 * \param stage           block or stage name for error messages ("gpuradar::<stage>:
 * ...") \param other_codes     further codes the caller handles itself, listed in the
 * error for an unknown code (e.g. "custom") Throws std::invalid_argument naming
 * `waveform` (unknown code, bad length, with the allowed codes) or the numeric parameter.
 */
std::vector<cfloat> make_waveform(const std::string& code,
                                  double bandwidth_hz,
                                  double pulse_width_s,
                                  double sample_rate_hz,
                                  bool up = true,
                                  const char* stage = "waveform",
                                  const std::string& other_codes = "");

} // namespace gpuradar::kernels

#endif
