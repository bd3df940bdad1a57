/* Pulse timing: the drift-free pulse schedule and time_spec arithmetic (no GNU Radio
 * here; the pulse framer (pulse_framer.h) and the scene simulator (radar_scene.h) use
 * it). */
#ifndef INCLUDED_GPURADAR_KERNELS_PULSE_TIMING_H
#define INCLUDED_GPURADAR_KERNELS_PULSE_TIMING_H

#include <gpuradar/kernels/common/backend.h>
#include <gpuradar/kernels/common/constants.h>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace gpuradar::kernels {

/*!
 * \brief A non-negative number of samples whose fraction is kept exactly, in steps of
 * 2^-52 (the resolution of a double in [0, 1)): whole + frac / 2^52. The samples lost in
 * rx_time gaps, which need not be whole (a time jump of 1000.37 samples), so that the
 * pulse schedule after the gaps is still rounded once, as pulse_timing rounds it.
 */
struct sample_shift {
    static constexpr unsigned frac_bits = 52;
    std::uint64_t whole = 0;
    std::uint64_t frac = 0; //!< < 2^frac_bits

    //! this + samples (finite, >= 0 and < 2^63), the fraction rounded once to 2^-52.
    sample_shift plus(double samples) const;
    double value() const;
};

/*!
 * \brief The pulse schedule of a fixed pulse repetition interval (PRI) given in samples,
 * integer or fractional, without drift.
 *
 * Pulse k starts floor(k * pri + 1/2) samples after the anchor (pulse 0 at 0). The
 * product is formed exactly: the double `pri` is a binary fraction M * 2^-F (M < 2^53),
 * so k * pri = k * M * 2^-F is computed in 128-bit integers and rounded once. Nothing is
 * accumulated, so pulse 10^9 is where the exact PRI puts it (the only error is the
 * double's own representation of the PRI, <= 2^-53 relative).
 *
 * The range gate of pulse k is the `gate_length` samples starting `gate_start` samples
 * after the pulse start. Consecutive pulse starts are floor(pri) or ceil(pri) apart, so
 * gates never overlap when gate_start + gate_length <= floor(pri).
 */
class pulse_timing
{
public:
    //! m/s (constants.h), under the name the framer and the scene simulator use.
    static constexpr double speed_of_light = kernels::speed_of_light;
    //! Largest PRI accepted (samples): keeps k * pri exact and inside 64 bits for
    //! k < 2^22 * 10^6 pulses (far beyond any run).
    static constexpr double max_pri_samples = 1099511627776.0; // 2^40

    /*!
     * \param pri_samples  PRI in samples, finite, >= gate_length and <= max_pri_samples
     * \param gate_start   samples from the pulse start to the first gate sample
     * \param gate_length  samples per gate (>= 1); gate_start + gate_length <= floor(pri)
     * \param stage        name used in error messages ("gpuradar::<stage>: ...")
     * Throws std::invalid_argument naming the parameter (pri, gate_length, gate_start).
     */
    pulse_timing(double pri_samples,
                 std::uint64_t gate_start,
                 std::uint64_t gate_length,
                 const char* stage = "pulse_timing");

    double pri() const { return d_pri; }
    std::uint64_t gate_start() const { return d_gate_start; }
    std::uint64_t gate_length() const { return d_gate_length; }

    //! Start of pulse k relative to the anchor: floor(k * pri + 1/2), exact.
    std::uint64_t pulse_start(std::uint64_t k) const;
    //! First gate sample of pulse k relative to the anchor: pulse_start(k) + gate_start.
    std::uint64_t gate_begin(std::uint64_t k) const
    {
        return pulse_start(k) + d_gate_start;
    }
    //! Smallest k with pulse_start(k) >= offset.
    std::uint64_t first_pulse_at_or_after(std::uint64_t offset) const;
    //! Largest k with pulse_start(k) <= offset (the pulse interval holding `offset`).
    std::uint64_t pulse_containing(std::uint64_t offset) const;

    //! Start of pulse k, relative to the anchor, in a stream that lost `lost` samples
    //! after the anchor: floor(k * pri - lost + 1/2), formed exactly as pulse_start(k)
    //! (negative for pulses whose start fell before the samples that remain).
    std::int64_t pulse_start(std::uint64_t k, const sample_shift& lost) const;
    //! Smallest k with pulse_start(k, lost) >= offset.
    std::uint64_t first_pulse_at_or_after(std::int64_t offset,
                                          const sample_shift& lost) const;

private:
    double d_pri;
    std::uint64_t d_gate_start, d_gate_length;
    std::uint64_t d_mantissa; //!< pri = d_mantissa * 2^-d_shift exactly
    unsigned d_shift;
};

/*!
 * \brief A UHD-style time stamp: whole seconds plus a fraction in [0, 1).
 */
struct time_spec {
    std::uint64_t secs = 0;
    double frac = 0.0;
};

//! t + samples / fs, normalised (frac in [0, 1)). Exact whole seconds when fs is an
//! integer number of Hz (the usual case); otherwise good to double precision of the step.
time_spec add_samples(time_spec t, std::int64_t samples, double fs);
//! (b - a) * fs: the number of samples from a to b (negative when b is earlier).
double samples_between(time_spec a, time_spec b, double fs);

} // namespace gpuradar::kernels

#endif
