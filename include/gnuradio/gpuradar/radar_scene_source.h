/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef INCLUDED_GPURADAR_RADAR_SCENE_SOURCE_H
#define INCLUDED_GPURADAR_RADAR_SCENE_SOURCE_H

#include <gnuradio/gpuradar/api.h>
#include <gnuradio/sync_block.h>
#include <cstdint>
#include <string>
#include <vector>

namespace gr {
namespace gpuradar {

/*!
 * \brief Simulated receive stream of a pulsed radar (a source, like an SDR).
 * \ingroup gpuradar
 *
 * Out: gr_complex samples at fs, continuous. Pulse k is transmitted at sample
 * floor(k fs/prf + 1/2) (drift-free for fractional PRIs). Each sample is
 *
 *   x[n] = noise + leakage s[n - p_k - leakage_delay]
 *          + sum_i a_i s[n - p_k - d_ik] exp(-j 4 pi fc R_i(t)/c)
 *          + stationary clutter,
 *
 * t = n / fs, R_i(t) = ranges[i] - velocities[i] t (closing positive), d_ik =
 * round(2 R_i(p_k/fs) fs / c) (the echo starts d_ik samples after the pulse start, walks
 * in range with the target, and lands in a later pulse when beyond c/(2 prf)); the phase
 * makes the Doppler f_d = 2 v fc / c continuous across pulses. Amplitudes: per-sample SNR
 * a_i^2 mean|s|^2 / P = 10^(snr/10), P = noise_power (or 1 when 0). See
 * kernels/radar_scene.h for the exact model.
 *
 * Tags on sample 0, as UHD sets them: rx_time (start_time as (uint64 secs, double frac)),
 * rx_rate (fs), rx_freq (fc), so a pulse_framer with trigger=rx_time anchors on pulse 0.
 *
 * Message port `truth`: one dict per target at pulse 0 and every `truth_every` pulses
 * (0: pulse 0 only): target, pulse, sample, time_s, rx_time, range_m, velocity_mps,
 * doppler_hz, delay_samples, snr_db, amplitude, fs, fc, prf.
 * gnuradio.gpuradar.scene_truth records them and writes JSON.
 *
 * paced = false: as fast as the flowgraph takes samples; true: at fs in real time, like a
 * hardware source (output in chunks of at most 10 ms).
 *
 * Receive array (nchannels > 1): one output per channel, like a multi-channel SDR. The
 * elements are a ULA of element_spacing_wl wavelengths on the x axis, or
 * element_positions_m; target i's echo reaches channel c with the extra phase
 * 2 pi p_c . u(azimuths_deg[i], elevations_deg[i]) / lambda (kernels/array_geometry.h:
 * u = (sin az cos el, cos az cos el, sin el), boresight +y), every signal of channel c is
 * scaled by 10^(channel_gain_db[c]/20) and rotated by channel_phase_deg[c], and each
 * channel has its own noise. Clutter arrives from boresight. The truth messages carry
 * azimuth_deg and elevation_deg. With the defaults (one channel, no errors) the stream is
 * that of a single antenna.
 *
 * Receiver (each off by default): the stream above, on every channel, goes through LO
 * phase noise (one LO for all channels), I/Q imbalance, a DC offset and an ADC that
 * quantises and clips each rail at adc_full_scale (kernels/scene/front_end.h); with
 * clock_offset_ppm the receiver samples at fs (1 + ppm 1e-6) and the pulses walk
 * (pri_samples() is then the PRI in receive samples). Transmit leakage at range 0 is
 * leakage_amplitude (absolute, sample units).
 */
class GPURADAR_API radar_scene_source : virtual public gr::sync_block
{
public:
    typedef std::shared_ptr<radar_scene_source> sptr;

    /*!
     * \param fs                 sample rate (Hz, > 0)
     * \param fc                 carrier (Hz, > 0)
     * \param prf                pulse repetition frequency (Hz, > 0, <= fs / pulse
     *                           length)
     * \param bandwidth          LFM swept bandwidth (Hz, 0 < B <= fs), when waveform is
     *                           empty
     * \param pulse_width        LFM pulse duration (s, >= 1 sample), when waveform is
     *                           empty
     * \param waveform           transmitted pulse; empty: an LFM up-chirp (bandwidth,
     *                           pulse_width), kernels::lfm_chirp
     * \param ranges             target ranges at t = 0 (m, > 0), one per target
     * \param velocities         radial velocities (m/s, closing positive), one per target
     * \param amplitudes         per-sample SNR (dB) or RCS (m^2), one per target
     * \param amplitude_unit     "snr_db" or "rcs_m2"
     * \param radar_constant_db  rcs_m2 only: SNR (dB) of 1 m^2 at 1 m; SNR = K + 10 log10
     *                           RCS - 40 log10 R at the initial range
     * \param noise_power        thermal noise power per complex sample (>= 0)
     * \param leakage_amplitude  amplitude of the transmit pulse at each pulse start
     *                           (>= 0)
     * \param clutter_cnr_db     clutter-to-noise ratio per sample (dB)
     * \param clutter_start_m    clutter extent start (m, >= 0)
     * \param clutter_stop_m     clutter extent end (m); no clutter when <=
     *                           clutter_start_m
     * \param paced              true: real time at fs; false: free-running
     * \param truth_every        truth messages every this many pulses (0: pulse 0 only)
     * \param start_time         rx_time of sample 0 (s, >= 0)
     * \param seed               noise and clutter seed
     * \param azimuths_deg       target angles of arrival (degrees in [-90, 90]), one per
     *                           target; empty: all at boresight
     * \param nchannels          receive channels = outputs (>= 1)
     * \param element_spacing_wl ULA spacing in wavelengths (> 0), when
     *                           element_positions_m is empty
     * \param element_positions_m x, y, z per channel (m): 3 * nchannels numbers; empty:
     *                           the ULA
     * \param channel_gain_db    per-channel gain error (dB), one per channel or empty
     * \param channel_phase_deg  per-channel phase error (deg), one per channel or empty
     * \param elevations_deg     target elevations (degrees in [-90, 90], positive towards
     *                           +z), one per target; empty: all at 0 (a planar array in
     *                           the x-z plane sees them, a linear one on x only through
     *                           cos(elevation))
     * Receiver front end (each off by default; kernels/scene/front_end.h, in this order):
     * \param dc_offset_i, dc_offset_q  DC offset added to I and Q (absolute, sample
     *                           units: with adc_full_scale 1, a fraction of full scale)
     * \param iq_gain_db        Q-branch gain relative to I (dB, finite)
     * \param iq_phase_deg      Q-branch LO phase error (degrees, in (-90, 90)): Re y =
     *                           Re x, Im y = g (Im x cos p - Re x sin p), i.e. y = mu x +
     *                           nu conj(x), mu = (1 + g e^-jp) / 2,
     *                           nu = (1 - g e^jp) / 2, image rejection |nu|^2 / |mu|^2
     * \param phase_noise_linewidth_hz  receive LO phase noise, a Wiener process of this
     *                           3 dB linewidth (Hz, in [0, fs / 2)): phase steps of
     *                           variance 2 pi linewidth / fs, Lorentzian spectrum; one
     *                           LO for all channels; seeded from seed
     * \param adc_bits          ADC bits per rail (0: no ADC; 1 .. 32): codes
     *                           round(u / D) clamped to [-2^(b-1), 2^(b-1) - 1], D =
     *                           2 adc_full_scale / 2^b; quantisation noise
     *                           adc_full_scale^2 / (3 4^b) per rail
     * \param adc_full_scale    ADC full scale per rail (> 0, sample units); I and Q
     *                           clip separately, counted by adc_clipped()
     * \param clock_offset_ppm  receive sample clock offset (ppm, |ppm| <= 1000): the
     *                           receiver samples at fs (1 + ppm 1e-6), so pulse k lands
     *                           k PRI ppm 1e-6 samples later than on a perfect clock
     *                           (its delays and Doppler in receive samples too)
     * \param leakage_delay     delay of the transmit leakage after each pulse start
     *                           (samples, <= floor(PRI) - pulse length; 0: range zero)
     * Throws std::invalid_argument naming the parameter, or the malformed target entry
     * (e.g. "ranges[2]").
     */
    static sptr make(double fs,
                     double fc,
                     double prf,
                     double bandwidth,
                     double pulse_width,
                     const std::vector<gr_complex>& waveform = {},
                     const std::vector<double>& ranges = {},
                     const std::vector<double>& velocities = {},
                     const std::vector<double>& amplitudes = {},
                     const std::string& amplitude_unit = "snr_db",
                     double radar_constant_db = 200.0,
                     double noise_power = 1.0,
                     double leakage_amplitude = 0.0,
                     double clutter_cnr_db = 20.0,
                     double clutter_start_m = 0.0,
                     double clutter_stop_m = 0.0,
                     bool paced = false,
                     unsigned int truth_every = 0,
                     double start_time = 0.0,
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
                     double clock_offset_ppm = 0.0,
                     unsigned int leakage_delay = 0);

    /*!
     * Live control (GRC callbacks). Each setter checks its values as make() does
     * (std::invalid_argument naming the parameter or the target entry; the old values
     * stay) and the change takes effect at the next pulse start: no pulse interval mixes
     * two scenes (echoes still in flight from earlier pulses come from the new targets).
     * The stream, its noise generator and the clutter continue; SNRs and the
     * clutter-to-noise ratio keep referring to the (new) noise power.
     */
    //! New target lists, as in make() (amplitude_unit and radar_constant_db as made;
    //! azimuths_deg / elevations_deg empty: every target at 0 in that angle).
    virtual void set_targets(const std::vector<double>& ranges,
                             const std::vector<double>& velocities,
                             const std::vector<double>& amplitudes,
                             const std::vector<double>& azimuths_deg = {},
                             const std::vector<double>& elevations_deg = {}) = 0;
    //! Thermal noise power per complex sample (>= 0).
    virtual void set_noise_power(double noise_power) = 0;

    //! The transmitted pulse (for the matched filter downstream).
    virtual std::vector<gr_complex> waveform() const = 0;
    //! fs (1 + clock_offset_ppm 1e-6) / prf: the PRI in receive samples (may be
    //! fractional).
    virtual double pri_samples() const = 0;
    //! Per-sample SNR (dB) of each target (after the RCS conversion, when used).
    virtual std::vector<double> snr_db() const = 0;
    //! I and Q values the ADC clipped so far, all channels (a sample clipped on both
    //! rails counts twice; 0 without an ADC).
    virtual std::uint64_t adc_clipped() const = 0;
};

} // namespace gpuradar
} // namespace gr

#endif
