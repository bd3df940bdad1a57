/* Receiver front-end impairments for the simulators (radar_scene, radar_channel): phase
 * noise, I/Q imbalance, DC offset and the ADC (quantisation and clipping), CPU. */
#ifndef INCLUDED_GPURADAR_KERNELS_FRONT_END_H
#define INCLUDED_GPURADAR_KERNELS_FRONT_END_H

#include <gpuradar/kernels/common/backend.h>
#include <gpuradar/kernels/scene/complex_noise.h>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpuradar::kernels {

/*!
 * \brief A receiver's analogue front end and ADC (block parameters; each off by default).
 *
 * Sample units: the simulators' (noise_power is the thermal power per complex sample);
 * with the ADC on, adc_full_scale is the amplitude of each rail's largest code, so a
 * receiver whose full scale is 1.0 (the module's sc16/sc8 convention) has
 * adc_full_scale = 1.
 */
struct front_end_config {
    //! DC offset added after the mixer (absolute, in sample units, each rail).
    double dc_offset_i = 0.0;
    double dc_offset_q = 0.0;
    //! I/Q imbalance: Q-branch gain relative to I (dB, finite) and the Q branch's LO
    //! phase error (degrees, in (-90, 90)).
    double iq_gain_db = 0.0;
    double iq_phase_deg = 0.0;
    //! Receive LO phase noise: Wiener process of this 3 dB (full) linewidth (Hz, >= 0,
    //! < fs / 2; 0: none).
    double phase_noise_linewidth_hz = 0.0;
    //! ADC: bits per rail (0: no ADC, no quantisation and no clipping; else 1 .. 32)
    //! and full scale (amplitude per rail, > 0 and finite).
    unsigned int adc_bits = 0;
    double adc_full_scale = 1.0;

    //! true when any impairment is on (apply() then changes the samples).
    bool active() const;
    /*!
     * std::invalid_argument "gpuradar::<who>: <param> must be ... (got ...)" naming
     * dc_offset_i, dc_offset_q, iq_gain_db, iq_phase_deg, phase_noise_linewidth_hz (fs
     * the sample rate, Hz), adc_bits or adc_full_scale.
     */
    void validate(double fs, const char* who) const;
};

/*!
 * \brief Applies front_end_config to a stream of one or more receive channels, in the
 * order of a direct-conversion receiver:
 *
 *   z[n] = x[n] exp(j phi[n])                       (LO phase noise)
 *   v[n] = mu z[n] + nu conj(z[n]) + (dc_i + j dc_q) (I/Q imbalance, DC offset)
 *   y[n] = ADC(Re v[n]) + j ADC(Im v[n])
 *
 * Phase noise: phi[n] = phi[n-1] + e[n], e[n] ~ N(0, 2 pi linewidth / fs) independent, so
 * Var(phi[n+m] - phi[n]) = 2 pi linewidth m / fs: a Wiener process, whose carrier has
 * the Lorentzian PSD S(f) = (linewidth / (2 pi)) / ((linewidth / 2)^2 + f^2) of 3 dB
 * full width `linewidth`, i.e. L(f) = linewidth / (2 pi f^2) (one-sided SSB, rad^2/Hz)
 * far from the carrier. phi[-1] = 0; deterministic from the seed. One LO feeds every
 * channel: all channels rotate by the same phi[n] (the array's phase differences keep).
 *
 * I/Q imbalance: the Q branch has gain g = 10^(iq_gain_db / 20) and LO phase error
 * p = iq_phase_deg: Re v = Re z, Im v = g (Im z cos p - Re z sin p), i.e.
 * mu = (1 + g e^{-jp}) / 2, nu = (1 - g e^{jp}) / 2. A tone exp(j w n) gets an image at
 * -w of power ratio IRR = |nu|^2 / |mu|^2
 *                      = (1 - 2 g cos p + g^2) / (1 + 2 g cos p + g^2).
 *
 * ADC (adc_bits = b >= 1, full scale F): step D = 2 F / 2^b, code q = round(u / D)
 * (half away from zero) clamped to [-2^(b-1), 2^(b-1) - 1], output q D. Over the
 * unclipped range the error is uniform: power D^2/12 = F^2 / (3 4^b) per rail. A rail
 * whose code was clamped is counted in clipped() (I and Q separately: a sample clipped on
 * both rails counts twice). Non-finite values: NaN stays NaN (not counted), +-inf clips.
 *
 * With every impairment off apply() returns at once: the samples are untouched (the
 * simulators' outputs to the bit).
 */
class front_end
{
public:
    //! Validates (std::invalid_argument prefixed by `who`). seed: the phase noise's.
    front_end(const front_end_config& cfg,
              double fs,
              std::uint64_t seed,
              const char* who);

    //! Impairs the next n samples of each of nch channels, in place: out[c][0..n).
    void apply(cfloat* const* out, std::size_t nch, std::size_t n);
    void apply(cfloat* out, std::size_t n) { apply(&out, 1, n); }

    //! Rail values clamped by the ADC so far (see above).
    std::uint64_t clipped() const { return d_clipped; }
    const front_end_config& config() const { return d_cfg; }
    //! The I/Q model's coefficients (mu = 1, nu = 0 without imbalance).
    std::complex<double> mu() const { return d_mu; }
    std::complex<double> nu() const { return d_nu; }

private:
    front_end_config d_cfg;
    std::complex<double> d_mu{ 1.0, 0.0 }, d_nu{ 0.0, 0.0 };
    double d_step_var = 0.0; //!< variance of a phase-noise step (rad^2)
    double d_phase = 0.0;    //!< phi of the last sample
    complex_noise d_noise;   //!< phase-noise steps (real parts of its draws)
    std::vector<cfloat> d_draws;
    std::vector<double> d_phi;
    std::uint64_t d_clipped = 0;
};

} // namespace gpuradar::kernels

#endif
