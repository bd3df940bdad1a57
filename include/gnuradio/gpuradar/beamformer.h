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
 * W[b][c] = t_c conj(a_c(theta_b, phi_b)) / sum t, t the amplitude taper over the
 * elements and a_c(theta, phi) = exp(+j 2 pi p_c . u(theta, phi) / lambda) the array's
 * response to a plane wave from azimuth theta and elevation phi (u = (sin theta cos phi,
 * cos theta cos phi, sin phi), boresight +y, theta positive towards +x, phi towards +z;
 * kernels/include/gpuradar/kernels/array/array_geometry.h). A unit plane wave from
 * (theta_b, phi_b) gives 1 in beam b.
 *
 * Beams: a list of azimuths (each with an elevation from beam_elevations_deg, 0 when
 * that is empty), or a fan of nbeams azimuths times a fan of nbeams_el elevations:
 * beam r * nbeams + c is steered at the c-th azimuth and the r-th elevation (rows of
 * azimuth beams, one row per elevation; nbeams_el = 1 is the azimuth fan).
 *
 * Streams: in gr_complex[nchannels * nsamples] (channel-major: each channel's nsamples
 * contiguous), out gr_complex[nbeams * nsamples] (beam-major), one item in, one item
 * out. On the pulse stream (before pulse compression) an item is a pulse and nsamples =
 * nrange; on the range stream an item is a range bin and nsamples = npulses or ndoppler.
 * Downstream blocks take the beams as their `channels`. With `input_type` sc16 / sc8 the
 * input items hold an SDR's interleaved int16 / int8 I, Q instead (scaled to 1.0 = full
 * scale, x / 32768, x / 128): on CUDA the integers are copied to the GPU and the
 * beamforming kernel converts them as it loads them (up to 16 beams and 256 channels;
 * beyond, a conversion pass precedes the cuBLAS GEMM, which reads complex float); on the
 * CPU VOLK converts them. The output stays gr_complex.
 *
 * Tags pass through on the same item; the `cpi` dict gets `channels` = nbeams, `beams`
 * (u64, nbeams), `beam_angles_deg` (f64vector, the steering azimuths in beam order),
 * `beam_elevations_deg` (f64vector, their elevations),
 * `element_positions_wl` (f64vector, x, y, z of each channel's element in wavelengths)
 * and `beam_weights` (c32vector, the weights W, nbeams x nchannels row-major): what a
 * cfar_2d with `angles` needs to estimate azimuths (and elevations) from the beams.
 */
class GPURADAR_API beamformer : virtual public gr::sync_block
{
public:
    typedef std::shared_ptr<beamformer> sptr;

    /*!
     * \param nchannels           array channels per item (>= 1)
     * \param nsamples            samples per channel per item (>= 1)
     * \param beam_angles_deg     steering azimuths in [-90, 90] degrees; empty: a fan
     * \param nbeams              beams of the fan (>= 1), used when beam_angles_deg is
     *                            empty
     * \param fan_first_deg       first beam of the fan, degrees in [-90, 90]
     * \param fan_last_deg        last beam of the fan, degrees in [-90, 90]
     * \param element_spacing_wl  ULA / URA element spacing in wavelengths (> 0; used
     *                            when element_positions_m is empty)
     * \param element_positions_m x, y, z per channel in metres (3 * nchannels numbers);
     *                            empty: the centred ULA on the x axis (the URA in the
     *                            x-z plane when element_rows > 1)
     * \param fc                  carrier frequency in Hz (> 0), the wavelength of
     *                            element_positions_m (unused for the ULA)
     * \param window              amplitude taper across the elements: rectangular,
     *                            hamming, hann, blackman, taylor, kaiser, chebyshev
     * \param nbar                Taylor: nearly equal sidelobes (>= 1)
     * \param sll_db              Taylor / Chebyshev: sidelobe level, dB below the peak
     * \param beta                Kaiser shape (>= 0)
     * \param backend             "auto", "cuda" or "cpu"
     * \param beam_elevations_deg elevation of each listed beam, degrees in [-90, 90]
     *                            (one per beam_angles_deg entry; empty: all 0)
     * \param nbeams_el           elevations of the fan (>= 1): nbeams x nbeams_el beams
     * \param fan_el_first_deg    first elevation of the fan, degrees in [-90, 90]
     * \param fan_el_last_deg     last elevation of the fan, degrees in [-90, 90]
     * \param element_rows        rows of the array along z (>= 1, dividing nchannels):
     *                            channel r * (nchannels / element_rows) + i is element i
     *                            of row r; without element_positions_m the centred URA
     *                            (kernels::ura_positions), and the taper is the
     *                            window along each row times the window along each
     *                            column
     * \param device              CUDA device (0 to number of GPUs - 1) the block's
     *                            stream, plans and memory live on; checked before
     *                            anything is allocated (std::invalid_argument naming
     *                            `device` and the range). The CPU backend refuses a
     *                            negative index and logs and ignores any other.
     * \param input_type          input samples: "fc32" (gr_complex), "sc16" or "sc8"
     *                            (std::invalid_argument naming `input_type` and the
     *                            three otherwise)
     * Every parameter is checked before anything is allocated: std::invalid_argument
     * (Python ValueError) naming it.
     */
    static sptr make(unsigned int nchannels,
                     unsigned int nsamples,
                     const std::vector<double>& beam_angles_deg = {},
                     unsigned int nbeams = 16,
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
                     const std::vector<double>& beam_elevations_deg = {},
                     unsigned int nbeams_el = 1,
                     double fan_el_first_deg = 0.0,
                     double fan_el_last_deg = 0.0,
                     unsigned int element_rows = 1,
                     int device = 0,
                     const std::string& input_type = "fc32");

    //! The steering azimuths in beam order (degrees).
    virtual std::vector<double> beam_angles_deg() const = 0;
    //! The steering elevations in beam order (degrees).
    virtual std::vector<double> beam_elevations_deg() const = 0;
    //! The backend actually running: "cuda" or "cpu".
    virtual std::string backend() const = 0;
    //! The `device` parameter.
    virtual int device() const = 0;
};

} // namespace gpuradar
} // namespace gr

#endif
