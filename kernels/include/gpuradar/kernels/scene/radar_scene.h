/* Pulsed-radar receive-stream simulator: transmit leakage, point-target echoes with
 * Doppler, stationary clutter and thermal noise, as one continuous complex stream (CPU;
 * used by the radar_scene_source block and by tests). */
#ifndef INCLUDED_GPURADAR_KERNELS_RADAR_SCENE_H
#define INCLUDED_GPURADAR_KERNELS_RADAR_SCENE_H

#include <gpuradar/kernels/array/array_geometry.h>
#include <gpuradar/kernels/common/backend.h>
#include <gpuradar/kernels/scene/complex_noise.h>
#include <gpuradar/kernels/scene/front_end.h>
#include <gpuradar/kernels/waveform/pulse_timing.h>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace gpuradar::kernels {

//! A point target. Range at time t: R(t) = range_m - velocity_mps * t (closing positive,
//! CONVENTIONS.md: its Doppler is f_d = 2 v fc / c > 0).
struct scene_target {
    double range_m = 0;      //!< range at t = 0 (m, > 0)
    double velocity_mps = 0; //!< radial velocity, closing positive (m/s)
    double snr_db = 0;       //!< per-sample SNR of the echo before compression (dB)
    //! Direction of arrival at an array (array_geometry.h's azimuth and elevation,
    //! degrees in [-90, 90]); no effect on a single element at the origin.
    double azimuth_deg = 0;
    double elevation_deg = 0;
};

/*!
 * Checks target i's direction: std::invalid_argument naming `azimuths_deg[i]` or
 * `elevations_deg[i]` (outside [-90, 90] or not finite), prefixed by `who`.
 */
void check_target_direction(const scene_target& t, std::size_t i, const char* who);

/*!
 * \brief The receive array of a simulator: one channel per element. Narrowband: a
 * target's echo reaches element c with the extra phase arrival_phase_rad(p_c, c0/fc,
 * azimuth) and the same envelope delay. Each channel multiplies everything it receives
 * (echoes, clutter, leakage) by its gain and phase error; its thermal noise is its own,
 * independent of the other channels', and not scaled. Clutter arrives from boresight
 * (azimuth 0); leakage is the direct path, the same in every channel but for the
 * channel's error.
 */
struct array_config {
    //! Element positions (m), one per channel; empty: one channel at the origin.
    std::vector<position_m> elements;
    std::vector<double> gain_db;   //!< per-channel gain error (dB); empty: 0 dB
    std::vector<double> phase_deg; //!< per-channel phase error (deg); empty: 0

    /*!
     * From block parameters: nchannels (>= 1) elements at the flat x, y, z list `xyz`
     * (m; 3 * nchannels numbers) or, when it is empty and nchannels > 1, a ULA of
     * spacing_wl wavelengths at the carrier fc; one channel without positions is the
     * single antenna (no elements). std::invalid_argument naming `nchannels`,
     * `element_positions_m`, `element_spacing_wl`, `fc`, `channel_gain_db` or
     * `channel_phase_deg`, prefixed by `who`.
     */
    static array_config make(unsigned int nchannels,
                             double spacing_wl,
                             const std::vector<double>& xyz,
                             double fc,
                             const std::vector<double>& gain_db,
                             const std::vector<double>& phase_deg,
                             const char* who);

    std::size_t nchannels() const { return elements.empty() ? 1 : elements.size(); }
    //! std::invalid_argument naming `channel_gain_db` / `channel_phase_deg` (size not
    //! 0 or nchannels, or not finite), prefixed by `who`.
    void validate(const char* who) const;
    //! Channel c's linear gain and phase error (rad).
    double gain(std::size_t c) const;
    double phase_rad(std::size_t c) const;
    //! The echo phase at channel c of a wave from (azimuth_deg, elevation_deg) (0
    //! without elements).
    double arrival_phase_rad(std::size_t c,
                             double fc,
                             double azimuth_deg,
                             double elevation_deg = 0.0) const;
};

/*!
 * \brief Where and with what phase the echo of a point target lands, as functions of the
 * stream sample n (time n / fs): delay(n) = delay_at_0 + delay_rate n samples (2 R / c),
 * phase(n) = phase0 + 2 pi cycles_per_sample n, i.e. exp(-j 4 pi fc R(t) / c) with
 * f_d = 2 v fc / c. Shared by radar_scene and radar_channel.
 */
struct echo_geometry {
    double delay_at_0 = 0;        //!< 2 R(0) fs / c (samples)
    double delay_rate = 0;        //!< -2 v / c (delay change per sample of time)
    double cycles_per_sample = 0; //!< f_d / fs
    double phase0 = 0;            //!< -4 pi fc R(0) / c reduced to (-2 pi, 0] (rad)
    static echo_geometry of(const scene_target& t, double fs, double fc);
};

//! The scene (radar_scene_source block parameters; SI units).
struct scene_config {
    double fs = 0;  //!< sample rate (Hz, > 0)
    double fc = 0;  //!< carrier (Hz, > 0): sets the Doppler
    double prf = 0; //!< pulse repetition frequency (Hz); PRI = fs / prf samples, any real
    std::vector<cfloat> waveform; //!< transmitted pulse, 1 <= L <= PRI samples
    std::vector<scene_target> targets;
    //! Thermal noise power per complex sample (>= 0). SNRs and the clutter-to-noise ratio
    //! refer to it, or to a power of 1 when it is 0 (a noise-free scene).
    double noise_power = 1.0;
    //! Amplitude of the transmit pulse leaking into the receiver at each pulse start
    //! (0: none). Its |x|^2 is what the framer's threshold trigger sees.
    double leakage_amplitude = 0.0;
    //! Delay of the leakage after the pulse start (receive samples, < PRI - waveform
    //! length + 1): the short path of an antenna reflection or a circulator (0: at the
    //! pulse start, range zero).
    std::uint64_t leakage_delay = 0;
    //! Stationary clutter: independent complex Gaussian reflectivity in every sample-wide
    //! range cell of [clutter_start_m, clutter_stop_m] (none when stop <= start), fixed
    //! in time (zero Doppler); clutter_cnr_db is its per-sample power over the noise
    //! power.
    double clutter_cnr_db = 0.0;
    double clutter_start_m = 0.0;
    double clutter_stop_m = 0.0;
    std::uint64_t seed = 1; //!< noise, clutter and phase-noise generator seed
    array_config array;     //!< receive channels (default: one element at the origin)
    //! Receiver impairments applied to every channel after the scene (front_end.h;
    //! default: none).
    front_end_config front_end;
    /*!
     * Receive sample-clock offset (ppm, |ppm| <= max_clock_offset_ppm): the receiver
     * samples at fs_rx = fs (1 + ppm 1e-6) while the radar's timing (PRI, delays,
     * Doppler) runs on true time, so in receive samples pulse k starts at
     * pulse_timing(fs_rx / prf).pulse_start(k) and its echoes are 2 R fs_rx / c samples
     * late: pulse k lands k PRI ppm 1e-6 samples later than on a perfect clock (PRI in
     * samples). The pulse shape itself is not resampled (a few ppm of stretch). 0: none.
     */
    double clock_offset_ppm = 0.0;
};

//! The largest receive clock offset the scene accepts (ppm): far beyond any crystal, and
//! small enough that the pulse shape's unresampled stretch stays negligible.
constexpr double max_clock_offset_ppm = 1000.0;

//! The truth of one target at one pulse.
struct target_truth {
    std::size_t target = 0;
    std::uint64_t pulse = 0;  //!< pulse number k from the start of the stream
    std::uint64_t sample = 0; //!< stream sample where pulse k is transmitted
    double time_s = 0;        //!< sample / fs_rx (true time of that receive sample)
    double range_m = 0;       //!< R(time_s)
    double velocity_mps = 0;  //!< closing positive
    double doppler_hz = 0;    //!< 2 v fc / c
    double delay_samples = 0; //!< 2 R fs_rx / c (the echo starts round(delay) samples
                              //!< after the pulse start)
    double snr_db = 0;
    double amplitude = 0;     //!< echo amplitude (linear)
    double azimuth_deg = 0;   //!< direction of arrival (array_geometry.h)
    double elevation_deg = 0; //!< direction of arrival (array_geometry.h)
};

/*!
 * \brief The receive stream of a pulsed radar, sample by sample, continuous across calls.
 *
 * Pulse k is transmitted at sample p_k = pulse_timing(fs/prf).pulse_start(k) (drift-free
 * for fractional PRIs). Sample n of the stream (time t = n / fs) is
 *
 *   x[n] = w[n] + leakage * s[n - p_k - leakage_delay]
 *        + sum_targets a_i * s[n - p_k - d_ik] * exp(j (phi_i + 2 pi f_di t))
 *        + sum_k c[n - p_k - d_c]
 *
 * with s the waveform (zero outside 0..L-1), d_ik = round(2 R_i(p_k/fs) fs / c) (the echo
 * of pulse k of a moving target walks in range at sample resolution), f_di = 2 v_i fc /
 * c, phi_i = -4 pi fc R_i(0) / c (so the phase is exp(-j 4 pi fc R_i(t) / c), continuous
 * across pulses), a_i = sqrt(P 10^(snr_i/10) / mean|s|^2), c the clutter return (the
 * waveform convolved with the fixed reflectivity, starting at the clutter's first cell
 * d_c), and w complex white Gaussian noise of power noise_power. Echoes later than one
 * PRI (range-ambiguous) land in later pulses, as they would. P is noise_power, or 1 when
 * that is 0.
 *
 * With an array (config().array, more than one channel) every channel c is this stream
 * with the echo of target i rotated by the array phase of its azimuth and everything but
 * the noise scaled by the channel's gain and phase error (array_config); channel c's
 * noise comes from its own generator (channel 0's is the single-channel stream's).
 *
 * Then the receiver: config().front_end's impairments (phase noise common to the
 * channels, I/Q imbalance, DC offset, ADC) on every channel, and the clock offset
 * (scene_config::clock_offset_ppm) in the timing above, with fs replaced by fs_rx.
 */
class radar_scene
{
public:
    static constexpr const char* stage = "radar_scene_source";

    //! Validates (std::invalid_argument "gpuradar::radar_scene_source: <param> ...").
    explicit radar_scene(scene_config cfg);

    /*!
     * Continues `previous`'s stream with this scene's configuration: the same stream
     * position and noise generator state (a change of targets or noise level made
     * between two pulses, without restarting the stream).
     */
    void continue_from(const radar_scene& previous);
    //! Writes the next n samples of the stream (one channel only: std::logic_error
    //! otherwise).
    void generate(cfloat* out, std::size_t n);
    //! Writes the next n samples of every channel: out[c] for c < nchannels().
    void generate(cfloat* const* out, std::size_t n);
    std::size_t nchannels() const { return d_cfg.array.nchannels(); }

    //! Samples generated so far (the stream offset of the next sample).
    std::uint64_t position() const { return d_pos; }
    const pulse_timing& timing() const { return d_timing; }
    const scene_config& config() const { return d_cfg; }
    //! fs_rx / prf: the PRI in receive samples (fs / prf without a clock offset).
    double pri_samples() const { return d_timing.pri(); }
    //! Rail values clipped by the ADC so far (front_end::clipped()).
    std::uint64_t clipped() const { return d_front_end.clipped(); }
    std::size_t waveform_length() const { return d_cfg.waveform.size(); }

    //! Truth of target i at pulse k.
    target_truth truth(std::size_t i, std::uint64_t k) const;

    /*!
     * Targets from parallel lists (what GRC and Python pass): one entry per target in
     * each. amplitude_unit "snr_db": amplitudes are per-sample SNRs (dB); "rcs_m2":
     * radar cross sections (m^2, > 0), converted with snr_from_rcs at the initial range.
     * Throws std::invalid_argument naming the list and the entry, e.g.
     * "gpuradar::radar_scene_source: ranges[2] must be > 0 and finite (m) (got -5)"
     * (`who` replaces radar_scene_source: the block whose parameters these are).
     */
    static std::vector<scene_target>
    make_targets(const std::vector<double>& ranges_m,
                 const std::vector<double>& velocities_mps,
                 const std::vector<double>& amplitudes,
                 const std::string& amplitude_unit,
                 double radar_constant_db,
                 const char* who = stage);

    /*!
     * Per-sample SNR (dB) of a target of RCS sigma (m^2) at range R (m) by the radar
     * equation folded into one constant: SNR = K + 10 log10(sigma) - 40 log10(R), where
     * K = radar_constant_db = 10 log10(Pt G^2 lambda^2 / ((4 pi)^3 k T0 B F L)) is the
     * SNR of a 1 m^2 target at 1 m.
     */
    /*!
     * Amplitude a of an echo a s[n] whose per-sample SNR is snr_db: a^2 signal_power =
     * P 10^(snr_db/10), P = noise_power, or 1 when that is 0 (a noise-free scene);
     * signal_power = mean |s|^2 of the transmitted samples.
     */
    static double echo_amplitude(double snr_db, double noise_power, double signal_power);

    static double snr_from_rcs(double rcs_m2, double range_m, double radar_constant_db);

    /*!
     * Sets each target's azimuth_deg and elevation_deg from parallel lists: an empty
     * list leaves every target at 0 in that angle; otherwise one entry per target, else
     * std::invalid_argument naming `azimuths_deg` / `elevations_deg` (the range of each
     * is checked with the scene).
     */
    static void set_directions(std::vector<scene_target>& targets,
                               const std::vector<double>& azimuths_deg,
                               const std::vector<double>& elevations_deg = {},
                               const char* who = stage);

private:
    void add_pulses(cfloat* out,
                    std::uint64_t n0,
                    std::size_t n,
                    const cfloat* sig,
                    std::size_t len,
                    double gain,
                    double delay_at_0,
                    double delay_rate,
                    double cycles_per_sample,
                    double phase0) const;
    std::int64_t delay_of(double delay_at_0, double delay_rate, std::uint64_t k) const;
    //! Channel c's next n samples (its noise from `noise`), without advancing.
    void
    render_channel(cfloat* out, std::size_t n, std::size_t c, complex_noise& noise) const;

    scene_config d_cfg;
    pulse_timing d_timing;
    double d_ref_power;              // P
    double d_wave_power;             // mean |s|^2
    std::vector<double> d_amplitude; // a_i
    std::vector<cfloat> d_clutter;   // clutter return, starting at d_clutter_delay
    std::uint64_t d_clutter_delay = 0;
    std::uint64_t d_pos = 0;
    double d_fs_rx = 0; //!< receive sample rate, fs (1 + clock_offset_ppm 1e-6)
    complex_noise d_noise;
    front_end d_front_end;
    std::vector<complex_noise> d_channel_noise; //!< channels 1 .. nchannels - 1
};

} // namespace gpuradar::kernels

#endif
