/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef INCLUDED_GPURADAR_BEAMFORMER_H
#define INCLUDED_GPURADAR_BEAMFORMER_H

#include <gnuradio/gpuradar/api.h>
#include <gnuradio/sync_block.h>
#include <string>
#include <vector>

namespace gr {
namespace gpuradar {

/*!
 * \brief Digital beamformer: the channels of an antenna array in, steered beams out.
 * \ingroup gpuradar
 *
 * Per item and sample s: y[b][s] = sum_c W[b][c] x[c][s] with
 * W[b][c] = t_c conj(a_c(theta_b)) / sum t, t the amplitude taper over the elements and
 * a_c(theta) = exp(+j 2 pi p_c . u(theta) / lambda) the array's response to a plane wave
 * from azimuth theta (u = (sin theta, cos theta, 0), boresight +y, theta positive
 * towards +x; kernels/include/gpuradar/kernels/beamformer.h). A unit plane wave from
 * theta_b gives 1 in beam b.
 *
 * Streams: in gr_complex[nchannels * nsamples] (channel-major: each channel's nsamples
 * contiguous), out gr_complex[nbeams * nsamples] (beam-major), one item in, one item
 * out. On the pulse stream (before pulse compression) an item is a pulse and nsamples =
 * nrange; on the range stream an item is a range bin and nsamples = npulses or ndoppler.
 * Downstream blocks take the beams as their `channels`.
 *
 * Tags pass through on the same item; the `cpi` dict gets `channels` = nbeams, `beams`
 * (u64, nbeams), `beam_angles_deg` (f64vector, the steering angles in beam order),
 * `element_positions_wl` (f64vector, x, y, z of each channel's element in wavelengths)
 * and `beam_weights` (c32vector, the weights W, nbeams x nchannels row-major): what a
 * cfar_2d with `angles` needs to estimate azimuths from the beams.
 */
class GPURADAR_API beamformer : virtual public gr::sync_block
{
public:
    typedef std::shared_ptr<beamformer> sptr;

    /*!
     * \param nchannels           array channels per item (>= 1)
     * \param nsamples            samples per channel per item (>= 1)
     * \param beam_angles_deg     steering azimuths in [-90, 90] degrees; empty: a fan
     * \param nbeams              beams of the fan (used when beam_angles_deg is empty)
     * \param fan_first_deg       first beam of the fan, degrees in [-90, 90]
     * \param fan_last_deg        last beam of the fan, degrees in [-90, 90]
     * \param element_spacing_wl  ULA element spacing in wavelengths (> 0; used when
     *                            element_positions_m is empty)
     * \param element_positions_m x, y, z per channel in metres (3 * nchannels numbers);
     *                            empty: the centred ULA on the x axis
     * \param fc                  carrier frequency in Hz (> 0), the wavelength of
     *                            element_positions_m (unused for the ULA)
     * \param window              amplitude taper across the elements: rectangular,
     *                            hamming, hann, blackman, taylor, kaiser, chebyshev
     * \param nbar                Taylor: nearly equal sidelobes (>= 1)
     * \param sll_db              Taylor / Chebyshev: sidelobe level, dB below the peak
     * \param beta                Kaiser shape (>= 0)
     * \param backend             "auto", "cuda" or "cpu"
     * \param device              CUDA device (0 to number of GPUs - 1) the block's
     *                            stream, plans and memory live on; checked before
     *                            anything is allocated (std::invalid_argument naming
     *                            `device` and the range). The CPU backend refuses a
     *                            negative index and logs and ignores any other.
     */
    static sptr make(unsigned int nchannels,
                     unsigned int nsamples,
                     const std::vector<double>& beam_angles_deg = {},
                     unsigned int nbeams = 0,
                     double fan_first_deg = -45.0,
                     double fan_last_deg = 45.0,
                     double element_spacing_wl = 0.5,
                     const std::vector<double>& element_positions_m = {},
                     double fc = 0.0,
                     const std::string& window = "taylor",
                     int nbar = 4,
                     double sll_db = 35.0,
                     double beta = 6.0,
                     const std::string& backend = "auto",
                     int device = 0);

    //! The steering angles in beam order (degrees).
    virtual std::vector<double> beam_angles_deg() const = 0;
    //! The backend actually running: "cuda" or "cpu".
    virtual std::string backend() const = 0;
    //! The `device` parameter.
    virtual int device() const = 0;
};

} // namespace gpuradar
} // namespace gr

#endif
