/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef INCLUDED_GPURADAR_PULSE_TX_SOURCE_H
#define INCLUDED_GPURADAR_PULSE_TX_SOURCE_H

#include <gnuradio/gpuradar/api.h>
#include <gnuradio/sync_block.h>
#include <cstdint>
#include <string>
#include <vector>

namespace gr {
namespace gpuradar {

/*!
 * \brief Transmit waveform as timed bursts at the PRF, tagged for a UHD sink.
 * \ingroup gpuradar
 *
 * Out: gr_complex samples at samp_rate. Pulse k starts floor(k fs/prf + 1/2) samples
 * after pulse 0 on the transmit timeline (the schedule of pulse_framer and
 * radar_scene_source). The pulse is `amplitude` times the waveform named by `waveform`
 * (the same codes as pulse_compression: lfm, barker:N, frank:N, p4:N, custom).
 *
 * Bursts (burst_mode):
 * - "cpi": one burst per CPI of npulses PRIs, zeros between the pulses: the stream is the
 *   transmit timeline (what radar_channel and a continuous sink need);
 * - "pulse": one burst per pulse, only its samples (the host sends duty-cycle x fs
 *   samples per second; the device places each burst at its tx_time).
 * Each burst carries UHD's tags: `tx_sob` (PMT true) on its first sample, `tx_eob` (PMT
 * true) on its last, and, when start_time > 0, `tx_time` on its first sample: a tuple
 * (uint64 whole seconds, double fractional seconds) = start_time + (timeline sample of
 * the burst) / fs. start_time = 0: no tx_time tags, the device sends each burst as soon
 * as it arrives (cpi mode only: untimed pulse bursts would leave back to back).
 *
 * nbursts > 0: the source ends after that many bursts (the flowgraph finishes once the
 * sink has sent the last one); 0: endless.
 */
class GPURADAR_API pulse_tx_source : virtual public gr::sync_block
{
public:
    typedef std::shared_ptr<pulse_tx_source> sptr;

    /*!
     * \param waveform        lfm, barker:N, frank:N, p4:N or custom
     *                        (kernels/waveform.h)
     * \param custom_waveform the pulse when waveform is "custom"
     * \param bandwidth       LFM swept bandwidth (Hz)
     * \param pulse_width     pulse duration (s); phase codes: samples per chip =
     *                        round(pulse_width samp_rate / N)
     * \param samp_rate       sample rate (Hz, > 0)
     * \param up_chirp        LFM direction
     * \param prf             pulse repetition frequency (Hz): the pulse must fit in the
     *                        PRI, fs / prf >= pulse length
     * \param amplitude       peak amplitude of the pulse, (0, 1] (UHD's full scale is 1)
     * \param burst_mode      "cpi" or "pulse"
     * \param npulses         pulses per burst in cpi mode (>= 1)
     * \param nbursts         bursts to send, 0 = endless
     * \param start_time      tx_time of pulse 0 (s); 0: no tx_time tags
     * \param time_reference  "device": start_time is on the device clock as the flowgraph
     *                        set it (e.g. set_time_now(0) or set_time_unknown_pps(0)),
     *                        not checkable here; "host": start_time is a UNIX time
     * (device clock set from the PC clock) and must lie in the future Throws
     * std::invalid_argument naming the parameter.
     */
    static sptr make(const std::string& waveform,
                     const std::vector<gr_complex>& custom_waveform,
                     double bandwidth,
                     double pulse_width,
                     double samp_rate,
                     bool up_chirp,
                     double prf,
                     double amplitude = 0.5,
                     const std::string& burst_mode = "cpi",
                     unsigned int npulses = 64,
                     std::uint64_t nbursts = 0,
                     double start_time = 0.0,
                     const std::string& time_reference = "device");

    //! The transmitted pulse (amplitude included): what the matched filter needs.
    virtual std::vector<gr_complex> pulse() const = 0;
    //! samp_rate / prf (samples, may be fractional).
    virtual double pri_samples() const = 0;
    //! Bursts started so far.
    virtual std::uint64_t bursts_sent() const = 0;
};

} // namespace gpuradar
} // namespace gr

#endif
