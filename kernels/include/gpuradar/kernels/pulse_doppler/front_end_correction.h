/* Receiver front-end corrections of a framed CPI: DC removal, transmit-leakage
 * suppression and blind I/Q imbalance correction (pulse_framer's options). */
#ifndef INCLUDED_GPURADAR_KERNELS_FRONT_END_CORRECTION_H
#define INCLUDED_GPURADAR_KERNELS_FRONT_END_CORRECTION_H

#include <gpuradar/kernels/common/backend.h>
#include <gpuradar/kernels/common/cuda_resources.h>
#include <cstddef>
#include <memory>
#include <string>

namespace gpuradar::kernels {

//! DC removal: none, each pulse's own mean, or a running mean over pulses.
enum class dc_removal { off, pulse, running };
//! Leakage suppression: none, subtract a slowly updated mean pulse, or blank a gate.
enum class leakage_suppression { off, mean_pulse, blank };

//! Parse "off" | "pulse" | "running"; std::invalid_argument naming `dc_removal`.
dc_removal parse_dc_removal(const std::string& name, const char* who);
//! Parse "off" | "mean_pulse" | "blank"; std::invalid_argument naming `leakage`.
leakage_suppression parse_leakage(const std::string& name, const char* who);
const char* to_string(dc_removal m);
const char* to_string(leakage_suppression m);

/*!
 * The corrections' settings (pulse_framer parameters; all off by default). Units: pulses
 * and samples of the CPI, npulses x nrange complex samples, pulse-major.
 */
struct front_end_correction_config {
    std::size_t npulses = 1; //!< pulses per CPI (>= 1)
    std::size_t nrange = 1;  //!< samples per pulse (>= 1)
    dc_removal dc = dc_removal::off;
    //! Running mean's time constant (pulses, >= 1, finite): d_k = d_{k-1} + (m_k -
    //! d_{k-1}) / tau with m_k pulse k's mean, so a DC step is followed with the
    //! e-folding time of tau pulses; 1 is the per-pulse mean.
    double dc_time_constant = 16.0;
    bool iq = false; //!< blind I/Q imbalance estimation and correction per CPI
    leakage_suppression leakage = leakage_suppression::off;
    //! mean_pulse: weight of the newest CPI's mean pulse, in (0, 1]:
    //! M_n = M_{n-1} + alpha (mean pulse of CPI n - M_{n-1}), M_0 = the first CPI's.
    double leakage_alpha = 0.1;
    //! blank: samples [0, leakage_gate) of every pulse are written as 0 (1 .. nrange).
    std::size_t leakage_gate = 0;

    //! true when any correction is on.
    bool active() const
    {
        return dc != dc_removal::off || iq || leakage != leakage_suppression::off;
    }
    /*!
     * std::invalid_argument "gpuradar::<who>: <param> must be ... (got ...)" naming
     * npulses, nrange, dc_time_constant, leakage_alpha or leakage_gate (each checked
     * only when its mode uses it).
     */
    void validate(const char* who) const;
};

//! The blind I/Q estimate of one CPI, in front_end.h's receiver model (Q-branch gain g
//! and LO phase error p: Im v = g (Im z cos p - Re z sin p)).
struct iq_estimate {
    bool estimated = false; //!< the I/Q correction is on
    bool corrected = false; //!< the estimate was usable and the CPI was corrected
    //! The statistics admit no estimate (non-finite, a rail without power, the rails
    //! collinear): gain_db and phase_deg are 0. Otherwise an uncorrected CPI's estimate
    //! was beyond iq_max_gain_db / iq_max_phase_deg.
    bool degenerate = false;
    double gain_db = 0;   //!< 20 log10 g = 10 log10(E[Q^2] / E[I^2])
    double phase_deg = 0; //!< p = -asin(E[IQ] / sqrt(E[I^2] E[Q^2])) (degrees)
};

//! An estimate beyond these is taken as a CPI that is not circular (a real-valued
//! signal, a single strong non-rotating component), not as a receiver that bad: a
//! direct-conversion SDR's imbalance is a fraction of a dB and a few degrees, so the
//! CPI is left uncorrected instead of being distorted by a wrong matrix.
constexpr double iq_max_gain_db = 6.0;
constexpr double iq_max_phase_deg = 30.0;

//! The I/Q part of a CPI's correction as the copy applies it: Q' = a I + b Q when ok.
struct front_end_iq_map {
    float a = 0.0f, b = 1.0f;
    int ok = 0;
};

/*!
 * The correction of the CPI last passed to front_end_correction::estimate(), as
 * framer_copy::copy_finite applies it to sample (p, r) of the screened CPI x:
 * y = 0 for r < gate; else y = x - dc[p] - mean[r], then Im y = a Re y + b Im y when
 * iq->ok. Pointers in the backend's memory (device memory for CUDA: dc, mean and *iq are
 * written by the estimate's kernels, queued before the copy); null = that part off.
 */
struct front_end_map {
    std::size_t npulses = 0, nrange = 0;
    std::size_t gate = 0;                 //!< range samples [0, gate) written as 0
    const cfloat* dc = nullptr;           //!< per pulse: the DC subtracted
    const cfloat* mean = nullptr;         //!< per range sample: M, the mean pulse
    const front_end_iq_map* iq = nullptr; //!< the I/Q matrix
};

/*!
 * \brief Estimates the corrections of a framed CPI, which framer_copy::copy_finite
 * applies as it writes the CPI out, in this order:
 *
 * 1. DC (dc != off): pulse k loses d_k, its own mean m_k = (1/nrange) sum_r x[k][r]
 *    (pulse) or the running mean of the m_k (running; the state carries across CPIs,
 *    d_0 = m_0 of the first pulse seen).
 * 2. Leakage: mean_pulse subtracts M (see leakage_alpha; updated with this CPI before
 *    it is applied to it) from every pulse: whatever repeats identically from pulse to
 *    pulse goes, leakage and the zero-Doppler part of stationary clutter alike; blank
 *    writes samples [0, leakage_gate) of every pulse as 0.
 * 3. I/Q (iq): from the CPI after 1 and 2, P_I = E[I^2], P_Q = E[Q^2], C = E[IQ]
 *    (fp64 sums over all npulses x nrange samples) and det = P_I P_Q - C^2; then
 *    I' = I, Q' = (P_I Q - C I) / sqrt(det), the Gram-Schmidt orthonormalisation that
 *    makes E[I'Q'] = 0 and E[Q'^2] = E[I^2] and inverts front_end.h's imbalance exactly
 *    (Q' = Im z). Estimated on a CPI and applied to that same CPI (each CPI is
 *    corrected with its own statistics; nothing carries across CPIs). Degenerate
 *    statistics (non-finite, P_I or P_Q <= 0, det <= 1e-9 P_I P_Q, e.g. an all-zero or
 *    real-valued CPI; a P_I or P_Q below 1e-10 of the uncorrected CPI's counts as 0: a
 *    CPI that was all DC or all repeated pulse leaves only rounding) or an estimate
 *    beyond iq_max_gain_db / iq_max_phase_deg leave the CPI uncorrected
 *    (iq_estimate::corrected false); never NaN.
 *
 * DC first, so that the second-order statistics are centred; leakage before I/Q, so
 * that a leakage 60 dB above the noise does not dominate them.
 *
 * How (both backends, the same maths): the corrections ride on the framer's data
 * movement. estimate() takes every sum (per pulse, per range sample, the I/Q second
 * moments over the samples not blanked) of the raw CPI as copy_finite will screen it (a
 * sample with a NaN or infinite part as 0, parts clamped to +-framer_clamp_level:
 * framer_copy.h), so that the estimates are those of the screened CPI; the DC, the mean
 * pulse and the I/Q statistics of the corrected CPI follow from them (the corrected
 * moments are the raw ones less terms of the per-pulse and per-range sums:
 * front_end_correction_math.h). copy_finite then writes each sample screened and
 * corrected by one affine map (map()) in the one pass it makes anyway. Where the sums
 * come from: the CPU backend reads the CPI for them in estimate(); the CUDA backend takes
 * them in the framer's gather of the CPI's gates (the gather kernel converts, writes and
 * sums each row), so a CPI gathered whole and in order is read once by the copy and
 * nothing else, and any other CPI (copied from elsewhere, a partial CPI dropped before
 * it) gets a read pass of its own in estimate(). The CUDA backend works on device
 * pointers, queues everything on `stream` and waits only in take_estimates(); one kernel
 * turns the sums into every estimate, the running mean as a parallel scan (the
 * recurrence is a composition of affine maps). Sums are fp64 on both backends, so they
 * agree to float rounding.
 */
class front_end_correction
{
public:
    //! Validates `cfg` (std::invalid_argument prefixed by `who`), then allocates.
    static std::unique_ptr<front_end_correction>
    make(backend b,
         const front_end_correction_config& cfg,
         stream_ref stream = stream_ref(),
         const char* who = "front_end_correction");
    virtual ~front_end_correction() = default;

    /*!
     * Takes the estimates of one raw CPI (npulses x nrange samples, read only, screened
     * as it is read: see "How") and queues them for map(), updating the running states
     * (running DC, mean pulse) with it. `slot`: the CPI's place (0, 1, ...) among the
     * CPIs estimated since the last take_estimates(). framer_copy::copy_finite calls
     * it, then applies map(): the framer's only user.
     */
    virtual void estimate(const cfloat* raw, std::size_t slot) = 0;

    //! The latest estimate()'s correction (valid until the next estimate()).
    virtual front_end_map map() const = 0;

    //! The backend this object runs on (the memory of map()'s pointers).
    backend where() const { return d_backend; }

    /*!
     * The I/Q estimates of slots [0, n) (estimated = false when iq is off), then every
     * slot is free again. CUDA: waits until the estimates queued so far have reached the
     * host.
     */
    virtual void take_estimates(iq_estimate* out, std::size_t n) = 0;

    const front_end_correction_config& config() const { return d_cfg; }

protected:
    front_end_correction(const front_end_correction_config& cfg, backend b)
        : d_cfg(cfg), d_backend(b)
    {
    }
    const front_end_correction_config d_cfg;
    const backend d_backend;
};

} // namespace gpuradar::kernels

#endif
