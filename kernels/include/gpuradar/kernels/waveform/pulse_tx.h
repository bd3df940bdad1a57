/* pulse_tx: the transmit pulse train cut into bursts (pulse_tx_source's samples and burst
 * boundaries; no GNU Radio here). */
#ifndef INCLUDED_GPURADAR_KERNELS_PULSE_TX_H
#define INCLUDED_GPURADAR_KERNELS_PULSE_TX_H

#include <gpuradar/kernels/common/backend.h>
#include <gpuradar/kernels/waveform/pulse_timing.h>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace gpuradar::kernels {

/*!
 * How the train is cut into bursts:
 * - pulse: one burst per pulse, its L waveform samples only; the stream holds the bursts
 *   back to back (not a timeline: the gaps between pulses are left to the burst times);
 * - cpi:   one burst per CPI of npulses PRIs, each pulse followed by zeros up to the next
 *   pulse start; the stream is the transmit timeline (stream sample = timeline sample).
 */
enum class burst_mode { pulse, cpi };

//! "pulse" | "cpi"; anything else throws std::invalid_argument naming burst_mode.
burst_mode parse_burst_mode(const std::string& name, const char* stage);

//! One burst: where it sits in the stream and on the transmit timeline.
struct burst {
    std::uint64_t index = 0;       //!< burst number from 0
    std::uint64_t offset = 0;      //!< stream sample of its first sample
    std::uint64_t length = 0;      //!< samples
    std::uint64_t first_pulse = 0; //!< pulse number of its first pulse
    std::uint64_t timeline = 0; //!< timeline sample of its first sample (pulse k starts
                                //!< at pulse_timing(pri).pulse_start(k))
};

struct pulse_tx_config {
    std::vector<cfloat> pulse; //!< transmitted pulse (already scaled), L >= 1 samples
    double pri_samples = 0;    //!< fs / prf, fractional allowed, >= L
    burst_mode mode = burst_mode::cpi;
    std::uint64_t npulses = 1; //!< pulses per burst in cpi mode (>= 1)
    std::uint64_t nbursts = 0; //!< bursts in all; 0: endless
};

/*!
 * \brief The samples of the pulse train, burst by burst, continuous across calls.
 *
 * Pulse k starts at timeline sample floor(k pri + 1/2) (pulse_timing: drift-free for
 * fractional PRIs, the same schedule as pulse_framer and radar_scene). In cpi mode burst
 * b holds pulses b npulses .. (b+1) npulses - 1 and lasts from the start of its first
 * pulse to the start of the next burst's (npulses PRIs, +-1 sample for a fractional PRI).
 */
class pulse_tx
{
public:
    //! Validates (std::invalid_argument "gpuradar::<stage>: <param> ...").
    pulse_tx(pulse_tx_config cfg, const char* stage);

    //! Writes the next samples, up to n; fewer only when the last burst ends.
    std::size_t generate(cfloat* out, std::size_t n);

    //! Burst b (for any b, also past nbursts).
    burst burst_at(std::uint64_t b) const;
    //! The burst holding stream sample `offset`.
    std::uint64_t burst_containing(std::uint64_t offset) const;
    //! Samples written so far.
    std::uint64_t position() const { return d_pos; }
    //! Stream samples in all; 0 for an endless train.
    std::uint64_t total_samples() const;
    const pulse_tx_config& config() const { return d_cfg; }
    const pulse_timing& timing() const { return d_timing; }

private:
    pulse_tx_config d_cfg;
    pulse_timing d_timing;
    std::uint64_t d_pos = 0;
};

} // namespace gpuradar::kernels

#endif
