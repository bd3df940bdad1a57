/* Radar propagation channel for a transmit stream: delayed, Doppler-shifted echoes of
 * point targets, optional transmit leakage and thermal noise (CPU; used by the
 * radar_channel block to close the transmit -> receive loop without hardware). */
#ifndef INCLUDED_GPURADAR_KERNELS_RADAR_CHANNEL_H
#define INCLUDED_GPURADAR_KERNELS_RADAR_CHANNEL_H

#include <gpuradar/kernels/common/backend.h>
#include <gpuradar/kernels/scene/complex_noise.h>
#include <gpuradar/kernels/scene/front_end.h>
#include <gpuradar/kernels/scene/radar_scene.h>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpuradar::kernels {

//! The channel (radar_channel block parameters; SI units).
struct channel_config {
    double fs = 0; //!< sample rate (Hz, > 0)
    double fc = 0; //!< carrier (Hz, > 0): sets the Doppler
    //! Targets; snr_db is the per-sample SNR of the echo when the input has power
    //! tx_power.
    std::vector<scene_target> targets;
    double tx_power = 1.0;    //!< mean |x|^2 of the transmitted pulse samples (> 0)
    double noise_power = 1.0; //!< thermal noise power per complex sample (>= 0)
    //! Amplitude gain of the direct transmit -> receive path (0: none), delay
    //! system_delay samples (no Doppler).
    double leakage_amplitude = 0.0;
    //! Fixed delay of the whole receive path (samples): the hardware's transmit ->
    //! receive latency that a real system calibrates with the leakage (0: none).
    std::uint64_t system_delay = 0;
    std::uint64_t seed = 1; //!< noise generator seed
    //! Receive channels (radar_scene.h's array_config; default: one, no array phase).
    //! Targets' azimuth_deg set their echoes' array phase.
    array_config array;
    //! Receiver impairments applied to every output after the channel (front_end.h;
    //! default: none). Its phase noise draws from its own generator, seeded from seed.
    front_end_config front_end;
    /*!
     * Receive sample-clock offset (ppm, in [0, max_clock_offset_ppm]; 0: none): the
     * receiver samples at fs_rx = fs (1 + ppm 1e-6) while the transmit stream keeps fs,
     * so output sample m is taken at transmit time tau(m) = m / (1 + ppm 1e-6) (in input
     * samples) and a pulse transmitted at input sample n arrives n ppm 1e-6 samples late,
     * as radar_scene's clock_offset_ppm does. Not negative: a slower receive clock would
     * need transmit samples the channel has not received yet (one output per input). The
     * pulse shape is not resampled (a few ppm of stretch).
     */
    double clock_offset_ppm = 0.0;
};

/*!
 * \brief y = noise + leakage x[n - s] + sum_i a_i x[n - s - D_i(n)] exp(j phi_i(n)).
 *
 * x is the transmit stream as a timeline (sample n at time n / fs; zeros between
 * pulses), s = system_delay, D_i(n) = round(2 R_i(n / fs) fs / c) with R_i(t) = range -
 * velocity t (closing positive; no echo once R_i <= 0), phi_i from echo_geometry (the
 * same phase as radar_scene: f_d = 2 v fc / c), a_i = radar_scene::echo_amplitude(snr_i,
 * noise_power, tx_power). Samples before the stream start count as zeros. State
 * (history of x, noise generator, sample count) carries across process() calls, so the
 * output does not depend on how the stream is cut into calls.
 *
 * With an array, channel c's output is y with echo i rotated by the array phase of its
 * azimuth, the leakage and echoes scaled by the channel's gain and phase error, and the
 * channel's own noise (channel 0's is the single-channel output's generator).
 *
 * Then the receiver: config().front_end's impairments (phase noise common to the
 * outputs, I/Q imbalance, DC offset, ADC) on every output.
 *
 * Clock offset (channel_config::clock_offset_ppm, e): output sample m reads the input
 * timeline at tau(m) = m / (1 + e): the echo takes x[round(tau(m) - s - D_i(tau))], the
 * leakage x[round(tau(m)) - s], the Doppler phase runs at f_d per receive sample of
 * 1 / fs_rx. Without an offset tau(m) = m exactly (the stream to the bit).
 */
class radar_channel
{
public:
    static constexpr const char* stage = "radar_channel";

    //! Validates (std::invalid_argument "gpuradar::radar_channel: <param> ...").
    explicit radar_channel(channel_config cfg);

    //! Writes n output samples for the next n input samples (in and out may not overlap;
    //! one channel only: std::logic_error otherwise).
    void process(const cfloat* in, cfloat* out, std::size_t n);
    //! The same for every channel: out[c] for c < nchannels().
    void process(const cfloat* in, cfloat* const* out, std::size_t n);
    std::size_t nchannels() const { return d_cfg.array.nchannels(); }

    std::uint64_t position() const { return d_pos; }
    const channel_config& config() const { return d_cfg; }
    //! a_i, the linear echo amplitude of target i.
    double amplitude(std::size_t i) const { return d_amplitude.at(i); }
    //! Rail values clipped by the ADC so far (front_end::clipped()).
    std::uint64_t clipped() const { return d_front_end.clipped(); }
    //! The input-timeline position of output sample m: m / (1 + ppm 1e-6) (input
    //! samples; m itself without a clock offset).
    double tx_index(std::uint64_t m) const;

private:
    //! Input sample at absolute index i (zero before the stream start).
    cfloat input_at(std::int64_t i) const;
    void add_echo(cfloat* out, std::size_t n, std::size_t target, std::size_t c) const;
    void add_leakage(cfloat* out, std::size_t n, std::size_t c) const;
    void trim_history();

    channel_config d_cfg;
    std::vector<echo_geometry> d_geometry;
    std::vector<double> d_amplitude;
    complex_noise d_noise;
    std::vector<complex_noise> d_channel_noise; //!< channels 1 .. nchannels - 1
    front_end d_front_end;
    std::vector<cfloat> d_hist; //!< input samples [d_hist_begin, d_pos + pending)
    std::uint64_t d_hist_begin = 0;
    std::uint64_t d_pos = 0;
};

} // namespace gpuradar::kernels

#endif
