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
 * c / (2 fs), channels = 1, pulse (pulse number since the anchor), rx_time (UHD tuple
 * (uint64 secs, double frac) of that pulse's start, when an rx_time tag was seen)}
 * (DESIGN.md, docs/CONVENTIONS.md).
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
 * Sample loss: every rx_time tag is checked against the time expected from the previous
 * one and the sample count. A tag later by a whole number of samples (UHD overflow) or
 * otherwise inconsistent discards the CPI being built (counted in dropped_cpis(),
 * logged), so that a CPI is never built across a gap. rx_time and free modes then keep
 * the pulse schedule (the lost samples are counted; the next CPI starts at the first gate
 * after the gap; a time jump that is not a whole number of lost samples re-anchors at the
 * tag); tag and threshold modes wait for the next trigger. The index of a discarded CPI
 * is not reused (downstream sees the hole). A partial CPI at the end of a finite stream
 * is not emitted and not counted.
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
     * Throws std::invalid_argument naming the parameter.
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
                     const std::string& backend = "auto");

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
    //! Samples reported lost by rx_time gaps.
    virtual std::uint64_t lost_samples() const = 0;
    //! fs / pri_samples (Hz).
    virtual double prf() const = 0;
    //! Range of gate sample 0, gate_start c / (2 fs) (m).
    virtual double r0() const = 0;
    //! The backend actually running: "cuda" or "cpu".
    virtual std::string backend() const = 0;
};

} // namespace gpuradar
} // namespace gr

#endif
