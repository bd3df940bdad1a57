/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef INCLUDED_GPURADAR_RADAR_CHANNEL_H
#define INCLUDED_GPURADAR_RADAR_CHANNEL_H

#include <gnuradio/gpuradar/api.h>
#include <gnuradio/sync_block.h>
#include <cstdint>
#include <string>
#include <vector>

namespace gr {
namespace gpuradar {

/*!
 * \brief Radar propagation channel: the transmit stream in, what the receiver sees out.
 * \ingroup gpuradar
 *
 * In: the transmit timeline (gr_complex at samp_rate; pulse_tx_source in cpi burst mode,
 * or any continuous stream). Out, sample n:
 *
 *   y[n] = noise + leakage x[n - s] + sum_i a_i x[n - s - D_i(n)] exp(-j 4 pi fc
 * R_i(t)/c)
 *
 * t = n / fs, R_i(t) = ranges[i] - velocities[i] t (closing positive), D_i = round(2 R_i
 * fs / c), s = system_delay, a_i from the per-sample SNR of the echo for an input of
 * power tx_power: a_i^2 tx_power = noise_power 10^(snr/10) (noise_power 1 when 0), the
 * same model and target lists as radar_scene_source (kernels/radar_channel.h).
 *
 * Tags: each `tx_time` tag becomes an `rx_time` tag on the same sample (a receiver
 * sharing the transmitter's clock stamps that time there), so pulse_framer with
 * trigger = rx_time anchors on the first burst; other tags are not passed on.
 *
 * Receive array (nchannels > 1): one output per channel, with the array phase of each
 * target's azimuth, per-channel gain/phase errors and independent noise, exactly as in
 * radar_scene_source (kernels/radar_channel.h); rx_time goes on every output.
 *
 * Receiver front end (off by default): DC offset, I/Q imbalance, LO phase noise and an
 * ADC with clipping, as radar_scene_source's (kernels/scene/front_end.h). The channel
 * has no sample-clock offset (radar_scene_source has).
 */
class GPURADAR_API radar_channel : virtual public gr::sync_block
{
public:
    typedef std::shared_ptr<radar_channel> sptr;

    /*!
     * \param samp_rate          sample rate (Hz, > 0)
     * \param fc                 carrier (Hz, > 0): sets the Doppler
     * \param ranges             target ranges at t = 0 (m, > 0), one per target
     * \param velocities         radial velocities (m/s, closing positive), one per target
     * \param amplitudes         per-sample echo SNR (dB) or RCS (m^2), one per target
     * \param amplitude_unit     "snr_db" or "rcs_m2"
     * \param radar_constant_db  rcs_m2 only: SNR (dB) of 1 m^2 at 1 m (the default 200
     *                           puts 1 m^2 at 10 km at 40 dB per sample)
     * \param tx_power           mean |x|^2 of the input's pulse samples (> 0;
     *                           pulse_tx_source: amplitude^2, so the default is its
     *                           default amplitude 0.5 squared)
     * \param noise_power        noise power per complex sample (>= 0)
     * \param leakage_amplitude  gain of the direct transmit -> receive path (>= 0)
     * \param system_delay       fixed receive-path delay (samples) of leakage and echoes
     * \param seed               noise seed
     * \param azimuths_deg       target angles of arrival (deg in [-90, 90]), one per
     *                           target; empty: all at boresight
     * \param nchannels          receive channels = outputs (>= 1)
     * \param element_spacing_wl ULA spacing (wavelengths, > 0) when element_positions_m
     *                           is empty
     * \param element_positions_m x, y, z per channel (m), 3 * nchannels numbers
     * \param channel_gain_db    per-channel gain error (dB), one per channel or empty
     * \param channel_phase_deg  per-channel phase error (deg), one per channel or empty
     * \param elevations_deg     target elevations (degrees in [-90, 90], positive towards
     *                           +z), one per target; empty: all at 0 (a planar array in
     *                           the x-z plane sees them, a linear one on x only through
     *                           cos(elevation))
     * \param dc_offset_i, dc_offset_q, iq_gain_db, iq_phase_deg  the receiver front end
     *                           (each off by default): as radar_scene_source::make's
     *                           parameters of the same names, one model
     *                           (kernels/scene/front_end.h); radar_scene_source.h has
     *                           its equations and allowed ranges
     * \param phase_noise_linewidth_hz, adc_bits, adc_full_scale  likewise; the ADC's
     *                           clipped rail values are counted by adc_clipped()
     * \param clock_offset_ppm  receive sample-clock offset (ppm, in [0, 1000]; 0: none):
     *                           the receiver samples at fs (1 + ppm 1e-6) against the
     *                           input's fs, so the pulse transmitted at input sample n
     *                           arrives n ppm 1e-6 samples late (delays, leakage and
     *                           Doppler in receive samples; see the kernel's
     *                           radar_channel.h). rx_time tags stay on their sample and
     *                           carry that
     *                           sample's true time (the transmitter's time base, as with
     *                           a common time reference and a free-running sample
     *                           clock), from which pulse_framer measures the drift
     * Throws std::invalid_argument naming the parameter or the target entry
     * ("ranges[2]", "velocities": one entry per target).
     */
    static sptr make(double samp_rate,
                     double fc,
                     const std::vector<double>& ranges = {},
                     const std::vector<double>& velocities = {},
                     const std::vector<double>& amplitudes = {},
                     const std::string& amplitude_unit = "snr_db",
                     double radar_constant_db = 200.0,
                     double tx_power = 0.25,
                     double noise_power = 1.0,
                     double leakage_amplitude = 0.0,
                     unsigned int system_delay = 0,
                     std::uint64_t seed = 1,
                     const std::vector<double>& azimuths_deg = {},
                     unsigned int nchannels = 1,
                     double element_spacing_wl = 0.5,
                     const std::vector<double>& element_positions_m = {},
                     const std::vector<double>& channel_gain_db = {},
                     const std::vector<double>& channel_phase_deg = {},
                     const std::vector<double>& elevations_deg = {},
                     double dc_offset_i = 0.0,
                     double dc_offset_q = 0.0,
                     double iq_gain_db = 0.0,
                     double iq_phase_deg = 0.0,
                     double phase_noise_linewidth_hz = 0.0,
                     unsigned int adc_bits = 0,
                     double adc_full_scale = 1.0,
                     double clock_offset_ppm = 0.0);

    //! Linear echo amplitude a_i of each target.
    virtual std::vector<double> echo_amplitudes() const = 0;
    //! I and Q values the ADC clipped so far, all outputs (a sample clipped on both
    //! rails counts twice; 0 without an ADC).
    virtual std::uint64_t adc_clipped() const = 0;
};

} // namespace gpuradar
} // namespace gr

#endif
