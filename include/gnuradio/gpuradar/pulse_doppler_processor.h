/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef INCLUDED_GPURADAR_PULSE_DOPPLER_PROCESSOR_H
#define INCLUDED_GPURADAR_PULSE_DOPPLER_PROCESSOR_H

#include <gnuradio/block.h>
#include <gnuradio/gpuradar/api.h>
#include <gnuradio/types.h>
#include <cstdint>
#include <string>
#include <vector>

namespace gr {
namespace gpuradar {

/*!
 * \brief The pulse-Doppler chain in one block: pulse compression -> corner turn ->
 * Doppler filter -> envelope.
 * \ingroup gpuradar
 *
 * In: pulse stream, items of gr_complex[channels * nrange], a CPI = npulses items.
 * Out: range-Doppler map, items of float[channels * nfft] (one range bin each, Doppler
 * contiguous), a CPI = nrange items; square-law power by default (what cfar_2d expects).
 * The output equals pulse_compression -> corner_turn -> doppler_filter -> envelope with
 * the same parameters (tested). It is one block rather than a hierarchy of the four so
 * that the CUDA backend can fuse their passes (kernels::pulse_doppler_processor: corner
 * turn, canceller, window, Doppler FFT and envelope in one kernel that reads the
 * compressed CPI once); use the four blocks to tap the signal between stages.
 *
 * Every parameter is the one of the block it belongs to (see pulse_compression,
 * doppler_filter, envelope); range_* parameters are the pulse-compression window,
 * doppler_* the slow-time window. The `waveform` message port and set_waveform() are
 * pulse_compression's: the change lands between CPIs. CPI framing and the `cpi` tag as
 * doppler_filter: re-emitted on the first output item of each CPI with ndoppler and
 * fftshift added; partial CPIs are dropped and counted.
 *
 * Map tap (tap_every = N > 0): every Nth processed CPI (the 1st, the N+1st, ...) is also
 * published on the message port `map` as a pair (meta . f32vector), so that one chain
 * feeds a GPU consumer on the stream output and a host display at once. The vector is
 * the CPI's output exactly as on the stream (channels * nrange * ndoppler floats, one
 * range bin's Doppler vector after the other, channels channel-major inside a bin). meta
 * is a dict: cpi (u64, the CPI index), nrange, ndoppler, channels (u64), fs, prf, fc
 * (Hz, doubles; fs falls back to samp_rate, prf and fc are 0 when the cpi tag lacks
 * them), fftshift, db (bools), envelope ("square_law" or "linear"), r0_m (range of bin
 * 0 in m, 0 when unknown), rx_time (seconds, double; only when the tag has it) and
 * nonfinite_samples (u64, the pulse_framer's count; only when the tag has it). On
 * the CUDA backend the map is copied to pinned host memory asynchronously on the block's
 * stream (counted in device_buffer::transfer_stats().d2h_bytes) and published once the
 * copy is complete; the stream output stays on the device.
 *
 * Non-finite input: samples with a NaN or infinite part are neither zeroed nor counted
 * here; the pulse_framer, where samples enter a pulse-Doppler chain, does both (the cpi
 * tag's nonfinite_samples). Fed directly, one such sample makes the whole CPI's map NaN
 * (the FFTs spread it), which cfar_2d counts as NaN/Inf cells and never detects.
 */
class GPURADAR_API pulse_doppler_processor : virtual public gr::block
{
public:
    typedef std::shared_ptr<pulse_doppler_processor> sptr;

    /*!
     * The parameters are pulse_compression's, doppler_filter's and envelope's; `device`
     * is the CUDA device index (0 to number of GPUs - 1) the block's stream, plans and
     * memory live on, checked before anything is allocated (std::invalid_argument naming
     * `device` and the range); the CPU backend refuses a negative index and logs and
     * ignores any other.
     */
    static sptr make(unsigned int nrange,
                     unsigned int npulses,
                     unsigned int nfft,
                     unsigned int channels = 1,
                     const std::string& waveform = "lfm",
                     const std::vector<gr_complex>& custom_waveform = {},
                     double bandwidth = 5e6,
                     double pulse_width = 10e-6,
                     double samp_rate = 10e6,
                     bool up_chirp = true,
                     const std::string& range_window = "rectangular",
                     int range_nbar = 4,
                     double range_sll_db = 35.0,
                     double range_beta = 6.0,
                     bool normalize = false,
                     const std::string& method = "auto",
                     const std::string& mti = "none",
                     const std::string& doppler_window = "rectangular",
                     int doppler_nbar = 4,
                     double doppler_sll_db = 35.0,
                     double doppler_beta = 6.0,
                     bool fftshift = true,
                     const std::string& envelope_mode = "square_law",
                     bool db = false,
                     const std::string& backend = "auto",
                     unsigned int tap_every = 0,
                     int device = 0);

    /*!
     * Live control (GRC callbacks). Each setter checks its values as make() does
     * (std::invalid_argument naming the parameter; the old value stays) and the change
     * takes effect at the next CPI boundary: every CPI is processed wholly with the old
     * or wholly with the new configuration. Setters may be called from any thread.
     */
    //! Replaces the waveform (pulse_compression::set_waveform).
    virtual void set_waveform(const std::vector<gr_complex>& waveform) = 0;
    //! MTI canceller: "none", "two_pulse" or "three_pulse".
    virtual void set_mti(const std::string& mti) = 0;
    //! Pulse-compression reference window and its Taylor n-bar, sidelobe level (dB) and
    //! Kaiser beta (the range_* parameters of make()).
    virtual void
    set_range_window(const std::string& window, int nbar, double sll_db, double beta) = 0;
    //! Slow-time window and its parameters (the doppler_* parameters of make()).
    virtual void set_doppler_window(const std::string& window,
                                    int nbar,
                                    double sll_db,
                                    double beta) = 0;
    //! Envelope in dB (true) or linear (false).
    virtual void set_db(bool db) = 0;
    //! CPIs discarded (a cpi tag inside a CPI, or a tag of another shape).
    virtual std::uint64_t dropped_cpis() const = 0;
    //! What runs, e.g. which CUDA passes are fused (kernels::pulse_doppler_processor).
    virtual std::string implementation() const = 0;
    virtual std::string backend() const = 0;
    //! The `device` parameter.
    virtual int device() const = 0;
};

} // namespace gpuradar
} // namespace gr

#endif
