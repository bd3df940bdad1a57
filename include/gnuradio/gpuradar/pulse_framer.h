/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef INCLUDED_GPURADAR_PULSE_FRAMER_H
#define INCLUDED_GPURADAR_PULSE_FRAMER_H

#include <gnuradio/block.h>
#include <gnuradio/gpuradar/api.h>
#include <cstdint>
#include <string>

namespace gr {
namespace gpuradar {

/*!
 * \brief Pulse framer: a continuous complex stream (SDR or file) -> the pulse stream.
 * \ingroup gpuradar
 *
 * In: gr_complex samples at fs. Out: items of gr_complex[nrange], one per pulse: the
 * range gate of pulse k, samples anchor + floor(k * pri + 1/2) + gate_start + [0,
 * nrange). The schedule is exact for fractional PRIs (no accumulation, no drift;
 * kernels/pulse_timing.h). Whole CPIs of npulses items only; the first item of each
 * carries the `cpi` tag {index, npulses, nrange, fs, prf = fs / pri, fc, r0 = gate_start
 * c / (2 fs), channels = 1, pulse (pulse number since the anchor), nonfinite_samples,
 * clamped_samples, saturated_samples, clock_slip_samples, clock_offset_ppm (see below),
 * rx_time (UHD tuple (uint64 secs, double frac) of that pulse's start, when an rx_time
 * tag was seen)} (docs/CONVENTIONS.md).
 *
 * Non-finite input: a gate sample with a NaN or infinite real or imaginary part is
 * written as 0, so that one bad sample cannot turn the whole range-Doppler map of its CPI
 * into NaN; the CPI is emitted as usual. The cpi tag's `nonfinite_samples` (u64, always
 * present, 0 when clean) counts them per CPI, nonfinite_samples() in total, and a
 * warning is logged (the first eight CPIs with any, then the 2^n-th). Samples outside the
 * gates are not looked at. The framer is where samples enter a pulse-Doppler chain: the
 * blocks downstream neither zero nor count them.
 *
 * Huge and saturated input, in the same pass: fc32 real and imaginary parts beyond
 * +-kernels::framer_clamp_level (65536, 1.0 = full scale) are clamped to it, so that one
 * finite 3e38 sample cannot overflow the chain's FFTs and blank its CPI; the cpi tag's
 * `clamped_samples` counts the samples clamped per CPI, clamped_samples() in total.
 * sc16 / sc8 parts cannot exceed full scale: a sample with a part at +-full scale (|code|
 * >= 32767, or 127) is counted in `saturated_samples` (ADC clipping), saturated_samples()
 * in total, and left as it is. Both keys are always present (0 when none or not
 * applicable to the input type); CPIs with any are logged like non-finite ones.
 *
 * Clock drift: with rx_time tags from a time reference independent of the sample clock
 * (radar_channel's clock_offset_ppm gives them), the framer measures the samples the
 * sample clock gains or loses against the tags' time (within 50 ppm of the samples
 * between two tags: kernels::pulse_framer::max_clock_drift_ppm, beyond it a gap) and
 * moves its pulse schedule by the whole samples gained before each CPI, so that the CPIs
 * stay on the pulses. The cpi tag's `clock_slip_samples` (i64: the schedule's move for
 * that CPI) and `clock_offset_ppm` (double: the estimate so far) report it, as do
 * clock_offset_ppm() and an info log line per move (the 2^n-th after the first eight).
 *
 * Anchor (pulse 0), by `trigger`:
 * - "rx_time":   the first `rx_time` tag (UHD stamps the first sample it delivers);
 * - "tag":       the first tag with key `trigger_tag`;
 * - "threshold": the first rising edge of |x|^2 above `threshold` (transmit leakage);
 * - "free":      the first sample of the stream.
 * Later triggers are ignored while the schedule runs. A threshold edge (or trigger tag)
 * sits on an integer sample: with a fractional PRI the transmitter's pulse k starts at
 * floor(k pri + 1/2) of its own count, so anchoring on a pulse other than its pulse 0 can
 * put later pulses one sample off; rx_time / free anchoring at the transmitter's pulse 0
 * is exact. The threshold level must lie above every echo and below the leakage.
 *
 * Sample loss: every rx_time tag is checked against the time expected from the last
 * accepted one and the sample count. A tag later by more than a quarter sample and by at
 * most 3600 s (samples lost upstream, a UHD overflow; whole samples or not) is a gap: the
 * CPI being built is discarded (counted in dropped_cpis(), logged), so that a CPI is
 * never built across a gap, and the lost samples are counted (lost_samples()). rx_time
 * and free modes then keep the transmit schedule of the original anchor: the gap's length
 * (time difference x fs, fraction kept) moves the samples after it on the anchor's
 * timeline, pulse k still starts floor(k pri + 1/2) samples of that timeline after the
 * anchor, pulse numbers and CPI indices run on, and the next CPI starts at the first
 * whole gate after the gap. Tag and threshold modes wait for the next trigger. A tag
 * going backwards, jumping more than 3600 s ahead or not finite is implausible: it is
 * ignored (counted in rejected_time_jumps(), logged with a rate limit), the timeline and
 * the time reference stay, nothing is dropped. The index of a discarded CPI is not
 * reused (downstream sees the hole). A partial CPI at the end of a finite stream is not
 * emitted and not counted.
 *
 * CPU block (index plumbing and copies); its output is a host buffer, which GPU blocks
 * downstream copy to the device themselves.
 */
class GPURADAR_API pulse_framer : virtual public gr::block
{
public:
    typedef std::shared_ptr<pulse_framer> sptr;

    /*!
     * \param pri_samples  pulse repetition interval in samples (= fs / prf; fractional
     *                     allowed), >= nrange
     * \param gate_start   samples from the pulse start to the first gate sample;
     *                     gate_start + nrange <= floor(pri_samples)
     * \param nrange       range gate length, samples per output item (>= 1)
     * \param npulses      pulses per CPI (>= 1)
     * \param fs           sample rate (Hz, > 0)
     * \param fc           centre frequency (Hz, > 0), carried in the cpi tag
     * \param trigger      "rx_time", "tag", "threshold" or "free"
     * \param trigger_tag  tag key of the "tag" trigger
     * \param threshold    |x|^2 level of the "threshold" trigger (> 0 there)
     * \param backend      "auto", "cuda" or "cpu". CUDA: the raw stream is copied to the
     *                     GPU as it arrives (the device buffer's async copy) and the
     * gates are cut there (one 2-D copy per batch of pulses for an integer PRI), so a GPU
     * chain downstream gets its CPIs without a second host copy. The threshold trigger
     * reads samples on the host: with it "auto" picks the CPU and "cuda" is an error. The
     * input buffer (CUDA) holds about four CPIs, twice GNU Radio's size
     *                     (device_buffer::host_to_device_depth), so the upstream block
     *                     writes one CPI while the last one is copied to the GPU.
     * \param device       CUDA device (0 to number of GPUs - 1) the block's stream, plans
     *                     and memory live on; checked before anything is allocated
     *                     (std::invalid_argument naming `device` and the range). The CPU
     *                     backend refuses a negative index and logs and ignores any
     *                     other.
     * \param input_type   the input samples' format: "fc32" (gr_complex, the default),
     *                     "sc16" (interleaved int16 I, Q: 4 bytes a sample, as UHD and
     *                     SoapySDR deliver with cpu_format sc16) or "sc8" (interleaved
     *                     int8, 2 bytes). Integers are scaled to 1.0 = full scale, x /
     *                     32768 (sc16) or x / 128 (sc8), UHD's and VOLK's convention:
     *                     the threshold compares |x|^2 after that scaling. The gates
     *                     are converted as they are cut (CUDA: the integers are what the
     *                     device buffer copies to the GPU, half or a quarter of the fc32
     *                     bytes, and the gather kernel converts them; CPU: VOLK). Other
     *                     names throw std::invalid_argument naming `input_type`.
     *
     * Receiver corrections, applied to each framed CPI before it is written (on the GPU
     * with the CUDA backend), in this order; all off by default
     * (kernels/pulse_doppler/front_end_correction.h has the equations):
     * \param dc_removal   "off", "pulse" (each pulse loses its own mean) or "running"
     *                     (pulse k loses d_k = d_{k-1} + (m_k - d_{k-1}) /
     *                     dc_time_constant, m_k its mean: a running mean over pulses,
     *                     carried across CPIs)
     * \param dc_time_constant  the running mean's time constant (pulses, >= 1)
     * \param iq_correction blind I/Q imbalance correction: the gain and phase error are
     *                     estimated from the CPI's E[I^2], E[Q^2], E[IQ] (after DC and
     *                     leakage removal) and the CPI itself is corrected (I' = I, Q'
     *                     orthogonalised and scaled to I's power). A degenerate estimate
     *                     (an all-zero or real-valued CPI, or beyond 6 dB / 30 degrees)
     *                     leaves the CPI uncorrected, is counted in iq_uncorrected_cpis()
     *                     and logged (rate limited); never NaN.
     * \param leakage      transmit-leakage suppression: "off", "mean_pulse" (subtract M,
     *                     M_n = M_{n-1} + leakage_alpha (mean pulse of CPI n - M_{n-1}),
     *                     M_0 the first CPI's mean pulse: removes whatever repeats from
     *                     pulse to pulse, including zero-Doppler clutter) or "blank"
     *                     (samples [0, leakage_gate) of every pulse written as 0)
     * \param leakage_alpha  mean_pulse's update weight per CPI, in (0, 1] (1: each CPI's
     *                     own mean pulse)
     * \param leakage_gate  blank's gate length (samples, 1 to nrange)
     * A value outside its range throws std::invalid_argument naming the parameter and
     * the range.
     */
    static sptr make(double pri_samples,
                     unsigned int gate_start,
                     unsigned int nrange,
                     unsigned int npulses,
                     double fs,
                     double fc,
                     const std::string& trigger = "rx_time",
                     const std::string& trigger_tag = "trigger",
                     double threshold = 0.0,
                     const std::string& backend = "auto",
                     int device = 0,
                     const std::string& input_type = "fc32",
                     const std::string& dc_removal = "off",
                     double dc_time_constant = 16.0,
                     bool iq_correction = false,
                     const std::string& leakage = "off",
                     double leakage_alpha = 0.1,
                     unsigned int leakage_gate = 0);

    /*!
     * Live control (GRC callback): the |x|^2 level of the threshold trigger from the next
     * work() call on, checked as make() checks it (> 0 with trigger=threshold;
     * std::invalid_argument naming `threshold`, the old level stays). It only decides
     * where the next anchor lands, never the samples of a CPI being framed.
     */
    virtual void set_threshold(double threshold) = 0;

    //! Partial CPIs discarded because of a gap or a time jump in the input.
    virtual std::uint64_t dropped_cpis() const = 0;
    //! CPIs written.
    virtual std::uint64_t emitted_cpis() const = 0;
    //! The input samples' format: "fc32", "sc16" or "sc8".
    virtual std::string input_type() const = 0;
    //! Samples reported lost by rx_time gaps (each gap rounded to whole samples).
    virtual std::uint64_t lost_samples() const = 0;
    //! rx_time tags ignored as implausible: time going backwards, or a jump of more than
    //! kernels::pulse_framer::max_gap_seconds (3600 s), or a non-finite time.
    virtual std::uint64_t rejected_time_jumps() const = 0;
    //! Samples of emitted CPIs written as 0 because a part was NaN or infinite (the sum
    //! of the cpi tags' nonfinite_samples).
    virtual std::uint64_t nonfinite_samples() const = 0;
    //! fc32: samples of emitted CPIs with a part clamped to +-65536 (the sum of the cpi
    //! tags' clamped_samples).
    virtual std::uint64_t clamped_samples() const = 0;
    //! sc16 / sc8: samples of emitted CPIs with a part at +-full scale (the sum of the
    //! cpi tags' saturated_samples).
    virtual std::uint64_t saturated_samples() const = 0;
    //! The receive sample clock's offset against the rx_time tags measured so far (ppm;
    //! 0 until two rx_time tags; the cpi tag's clock_offset_ppm).
    virtual double clock_offset_ppm() const = 0;
    //! CPIs left without I/Q correction because their estimate was degenerate (always
    //! 0 with iq_correction off).
    virtual std::uint64_t iq_uncorrected_cpis() const = 0;
    //! fs / pri_samples (Hz).
    virtual double prf() const = 0;
    //! Range of gate sample 0, gate_start c / (2 fs) (m).
    virtual double r0() const = 0;
    //! The backend actually running: "cuda" or "cpu".
    virtual std::string backend() const = 0;
    //! The `device` parameter.
    virtual int device() const = 0;
};

} // namespace gpuradar
} // namespace gr

#endif
