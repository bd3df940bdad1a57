/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef INCLUDED_GPURADAR_DOPPLER_FILTER_H
#define INCLUDED_GPURADAR_DOPPLER_FILTER_H

#include <gnuradio/block.h>
#include <gnuradio/gpuradar/api.h>
#include <cstdint>
#include <string>

namespace gr {
namespace gpuradar {

/*!
 * \brief Doppler filter: range stream in, range-Doppler stream out.
 * \ingroup gpuradar
 *
 * In: range stream, items of gr_complex[channels * npulses] (one range bin's slow-time
 * samples per channel, from corner_turn), a CPI = nrange items.
 * Out: items of gr_complex[channels * nfft], Doppler bins contiguous, a CPI = nrange
 * items.
 *
 * Per range bin and channel: optional MTI canceller ("two_pulse" [1,-1] or "three_pulse"
 * [1,-2,1], which leave npulses-1 or npulses-2 samples), a real slow-time window (the
 * names and parameters of pulse_compression), zero padding to nfft and an unnormalised
 * forward FFT. With `fftshift` zero Doppler sits at bin nfft/2 and bin m holds
 *     f_d = (m - nfft/2) * prf / nfft,  v = f_d * c / (2 fc)  (closing targets positive);
 * without it bins m >= nfft/2 hold the negative Doppler (m - nfft) * prf / nfft.
 *
 * CPI framing as corner_turn (the `cpi` tag or nrange items counted from the start;
 * partial or wrong-shape CPIs discarded and counted). The `cpi` tag is re-emitted on the
 * first output item of each CPI with `ndoppler` = nfft and `fftshift` added.
 */
class GPURADAR_API doppler_filter : virtual public gr::block
{
public:
    typedef std::shared_ptr<doppler_filter> sptr;

    /*!
     * \param npulses  pulses per CPI (slow-time samples per item and channel), >= 2
     *                 (>= 3 with mti "three_pulse")
     * \param nrange   range bins per CPI (items per CPI), >= 1
     * \param nfft     Doppler bins, >= npulses (zero padded)
     * \param channels channels per item, >= 1
     * \param mti      "none", "two_pulse" or "three_pulse"
     * \param window   slow-time window: rectangular, hamming, hann, blackman, taylor,
     *                 kaiser, chebyshev
     * \param nbar     Taylor: nearly constant sidelobes, >= 1
     * \param sll_db   Taylor / Chebyshev sidelobe level, dB below the peak, > 0
     * \param beta     Kaiser shape, >= 0
     * \param fftshift zero Doppler at bin nfft/2
     * \param backend  "auto", "cuda" or "cpu"
     * \param device   CUDA device (0 to number of GPUs - 1) the block's stream, plans and
     *                 memory live on; checked before anything is allocated
     *                 (std::invalid_argument naming `device` and the range). The CPU
     *                 backend refuses a negative index and logs and ignores any other.
     */
    static sptr make(unsigned int npulses,
                     unsigned int nrange,
                     unsigned int nfft,
                     unsigned int channels = 1,
                     const std::string& mti = "none",
                     const std::string& window = "rectangular",
                     int nbar = 4,
                     double sll_db = 35.0,
                     double beta = 6.0,
                     bool fftshift = true,
                     const std::string& backend = "auto",
                     int device = 0);

    //! CPIs discarded (a cpi tag inside a CPI, or a tag of another shape).
    virtual std::uint64_t dropped_cpis() const = 0;
    virtual std::string backend() const = 0;
    //! The `device` parameter.
    virtual int device() const = 0;
};

} // namespace gpuradar
} // namespace gr

#endif
