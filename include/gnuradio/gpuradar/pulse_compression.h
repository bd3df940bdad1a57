/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef INCLUDED_GPURADAR_PULSE_COMPRESSION_H
#define INCLUDED_GPURADAR_PULSE_COMPRESSION_H

#include <gnuradio/block.h>
#include <gnuradio/gpuradar/api.h>
#include <gnuradio/types.h>
#include <cstdint>
#include <string>
#include <vector>

namespace gr {
namespace gpuradar {

/*!
 * \brief Pulse compression (matched filter) of a pulse stream, one CPI per kernel call.
 * \ingroup gpuradar
 *
 * In and out: pulse stream, items of channels * nrange samples (channel-major), a CPI
 * = npulses items; out gr_complex, in gr_complex or, with `input_type` sc16 / sc8, an
 * SDR's interleaved int16 / int8 I, Q scaled to 1.0 = full scale (x / 32768, x / 128).
 * On CUDA the integers are what is copied to the GPU and the first kernel converts them
 * as it loads them; on the CPU VOLK converts them. Each pulse x of each channel gives
 *     y[d] = g * sum_{k<L} x[d + k] conj(w[k] s[k]),  d = 0 .. nrange-1
 * (matched filter h[n] = conj(w[L-1-n] s[L-1-n]) with its L-1 delay removed): an echo
 * starting at sample d peaks at output bin d; echoes starting in the last L-1 samples of
 * the gate are compressed from the part inside the gate (zeros beyond it), never wrapped.
 * g = 1, or 1/sqrt(sum |w s|^2) with `normalize` (white-noise power unchanged).
 *
 * Waveform s: `waveform` = "lfm" (a linear-FM chirp of `bandwidth` Hz over `pulse_width`
 * s sampled at `samp_rate`, up- or down-chirp) or "custom" (`custom_waveform`, any
 * complex vector of 1..nrange samples). Window w on the reference: rectangular, hamming,
 * hann, blackman, taylor (`nbar`, `sll_db`), kaiser (`beta`), chebyshev (`sll_db`).
 * Method: "fft" (batched FFT over the CPI, a fast length fft_length() >= nrange + L - 1),
 * "overlap_save" (CUDA: one fused kernel per pulse segment with shared-memory FFTs; CPU:
 * as fft), "fir" (time domain), "auto" (what measured fastest for the waveform length,
 * see kernels::pulse_compression).
 *
 * Message port `waveform`: a c32 vector (a new custom waveform) or a dict with
 * `bandwidth`, `pulse_width` and optionally `up` (a new LFM chirp at samp_rate). It takes
 * effect at the next CPI boundary; no pulse is dropped. A bad message is logged and the
 * old waveform kept.
 *
 * CPI framing: the `cpi` tag or npulses counted from the start (see corner_turn); partial
 * CPIs (a tag inside a CPI) and CPIs whose tag has another shape are discarded and
 * counted. The `cpi` tag passes through (same shape); other tags inside a processed CPI
 * keep their item.
 */
class GPURADAR_API pulse_compression : virtual public gr::block
{
public:
    typedef std::shared_ptr<pulse_compression> sptr;

    /*!
     * \param nrange          samples per pulse and channel (range gate), >= 1
     * \param npulses         pulses per CPI, >= 1
     * \param channels        channels per item, >= 1
     * \param waveform        "lfm" or "custom"
     * \param custom_waveform the waveform when waveform == "custom" (1..nrange samples)
     * \param bandwidth       LFM swept bandwidth in Hz, 0 < bandwidth <= samp_rate
     * \param pulse_width     LFM pulse width in s, > 0, at most nrange samples long
     * \param samp_rate       sample rate in Hz, > 0
     * \param up_chirp        LFM frequency rises (true) or falls (false)
     * \param window          reference window name (see above)
     * \param nbar            Taylor: number of nearly constant sidelobes, >= 1
     * \param sll_db          Taylor / Chebyshev: sidelobe level in dB below the peak, > 0
     * \param beta            Kaiser shape, >= 0
     * \param normalize       keep white-noise power unchanged
     * \param method          "auto", "fft", "overlap_save" or "fir"
     * \param backend         "auto", "cuda" or "cpu"
     * \param device          CUDA device (0 to number of GPUs - 1) the block's stream,
     *                        plans and memory live on; checked before anything is
     *                        allocated (std::invalid_argument naming `device` and the
     *                        range). The CPU backend refuses a negative index and logs
     *                        and ignores any other.
     * \param input_type      input samples: "fc32" (gr_complex), "sc16" or "sc8"
     *                        (std::invalid_argument naming `input_type` and the three
     *                        otherwise)
     */
    static sptr make(unsigned int nrange,
                     unsigned int npulses,
                     unsigned int channels = 1,
                     const std::string& waveform = "lfm",
                     const std::vector<gr_complex>& custom_waveform = {},
                     double bandwidth = 5e6,
                     double pulse_width = 10e-6,
                     double samp_rate = 10e6,
                     bool up_chirp = true,
                     const std::string& window = "rectangular",
                     int nbar = 4,
                     double sll_db = 35.0,
                     double beta = 6.0,
                     bool normalize = false,
                     const std::string& method = "auto",
                     const std::string& backend = "auto",
                     int device = 0,
                     const std::string& input_type = "fc32");

    /*!
     * Replaces the waveform at the next CPI boundary (as the `waveform` message port).
     * Throws std::invalid_argument (naming `waveform`) when it is empty or longer than
     * nrange; the old waveform is kept.
     */
    virtual void set_waveform(const std::vector<gr_complex>& waveform) = 0;
    //! The waveform the next CPI is compressed with.
    virtual std::vector<gr_complex> waveform() const = 0;
    //! "fft", "overlap_save" or "fir": what runs for the current waveform.
    virtual std::string method() const = 0;
    //! The fast-convolution FFT length for the current waveform.
    virtual unsigned int fft_length() const = 0;
    //! CPIs discarded (a cpi tag inside a CPI, or a tag of another shape).
    virtual std::uint64_t dropped_cpis() const = 0;
    virtual std::string backend() const = 0;
    //! The `device` parameter.
    virtual int device() const = 0;
};

} // namespace gpuradar
} // namespace gr

#endif
