/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_GPURADAR_CROSS_AMBIGUITY_H
#define INCLUDED_GPURADAR_CROSS_AMBIGUITY_H

#include <gnuradio/block.h>
#include <gnuradio/gpuradar/api.h>
#include <string>

namespace gr {
namespace gpuradar {

/*!
 * \brief Passive radar: the cross-ambiguity map (bistatic range x Doppler) of a
 * surveillance channel against the reference channel, one map per CPI.
 * \ingroup gpuradar
 *
 * Streams: input 0 the reference channel, input 1 the surveillance channel (gr_complex,
 * continuous, the same sample rate; after clutter cancellation); every nsamples
 * samples of each make one CPI. Output: float[2 doppler_half + 1] items, nrange per CPI
 * (range lag m = 0..nrange-1, Doppler bins -K..K with zero Doppler in the middle):
 * the layout cfar_2d takes (nrange = nrange, ndoppler = 2 doppler_half + 1).
 * kernels::cross_ambiguity computes it (direct or batched method, the window over the
 * slow time).
 *
 * Each CPI's first output item carries a `cpi` tag: index, npulses = nsamples,
 * nrange, ndoppler, fftshift true, fs, fc, prf = fs (2K+1) / nsamples (so that a
 * Doppler bin is fs / nsamples Hz) and bistatic true: cfar_2d then reports
 * range_m = m c / fs (bistatic range: the echo path minus the baseline) and
 * velocity_mps = f c / fc (bistatic velocity, closing positive).
 *
 * Sample rates: the `rx_rate` tags (samples/s) of the two inputs, each holding from its
 * sample on, are compared; a CPI during which they differ (by more than 1e-9 relative)
 * gives no map (its input is consumed, nothing mixed), an error naming both inputs and
 * rates is logged (rate-limited) and the CPI counted in rate_mismatch_cpis(). An input
 * with no `rx_rate` tag is not compared. A reference rate other than fs is warned about
 * once: the axes are computed from fs.
 */
class GPURADAR_API cross_ambiguity : virtual public gr::block
{
public:
    typedef std::shared_ptr<cross_ambiguity> sptr;

    /*!
     * \param fs            sample rate (Hz, > 0)
     * \param fc            carrier (Hz, > 0), for the velocity axis
     * \param nsamples      N, samples per CPI (>= 2)
     * \param nrange        M, range lags (1 to N)
     * \param doppler_half  K, Doppler bins -K..K (2K+1 <= N)
     * \param method        "auto", "direct" or "batched" (kernels::cross_ambiguity)
     * \param batch_length  batched: samples per batch (divides N, N / L >= 2K+1);
     *                      0: chosen
     * \param window        slow-time window: "rectangular", "hann", "hamming", ...
     * \param db            output 10 log10(power) instead of power
     * \param backend       "auto", "cuda" or "cpu"
     * \param device        CUDA device (0 to number of GPUs - 1)
     * Bad values: std::invalid_argument naming the parameter, before anything is
     * allocated.
     */
    static sptr make(double fs,
                     double fc,
                     unsigned int nsamples,
                     unsigned int nrange,
                     unsigned int doppler_half,
                     const std::string& method = "auto",
                     unsigned int batch_length = 0,
                     const std::string& window = "hann",
                     bool db = false,
                     const std::string& backend = "auto",
                     int device = 0);

    //! The method the rule chose: "direct" or "batched".
    virtual std::string method() const = 0;
    //! CPIs given no map because the inputs' `rx_rate` tags disagreed.
    virtual std::uint64_t rate_mismatch_cpis() const = 0;
    //! The backend actually running: "cuda" or "cpu".
    virtual std::string backend() const = 0;
    //! The `device` parameter.
    virtual int device() const = 0;
};

} // namespace gpuradar
} // namespace gr

#endif
