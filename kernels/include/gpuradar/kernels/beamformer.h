/*
 * Digital beamforming: the channels of an antenna array combined into beams by a complex
 * weight matrix, y[b] = sum_c W[b][c] x[c], for every sample of every item.
 *
 * Geometry: local Cartesian metres (DESIGN.md), the array's boresight along +y. A beam
 * angle theta is an azimuth in the x-y plane measured from boresight, positive towards
 * +x, inside [-90, 90] degrees; its unit vector is u(theta) = (sin theta, cos theta, 0).
 * A plane wave arriving from theta reaches element n (position p_n) with the phase
 * exp(+j 2 pi p_n . u / lambda) relative to the origin (the element nearer the source
 * receives it earlier). A uniform linear array (ULA) of N elements spaced d wavelengths
 * lies on the x axis, centred on the origin: p_n = ((n - (N-1)/2) d lambda, 0, 0).
 */
#ifndef INCLUDED_GPURADAR_KERNELS_BEAMFORMER_H
#define INCLUDED_GPURADAR_KERNELS_BEAMFORMER_H

#include <gpuradar/kernels/backend.h>
#include <gpuradar/kernels/cuda_resources.h>
#include <gpuradar/kernels/window.h>
#include <array>
#include <complex>
#include <cstddef>
#include <memory>
#include <vector>

namespace gpuradar::kernels {

//! An element position, metres (x, y, z).
using position_m = std::array<double, 3>;

//! The centred ULA on the x axis; spacing_wl > 0 (wavelengths), wavelength_m > 0.
std::vector<position_m>
ula_positions(std::size_t nelements, double spacing_wl, double wavelength_m);

/*!
 * Positions from a flat list x0, y0, z0, x1, ... (metres). Throws std::invalid_argument
 * naming `element_positions_m` when the list is not 3 * nchannels long or holds a
 * non-finite value.
 */
std::vector<position_m> positions_from_xyz(const std::vector<double>& xyz,
                                           std::size_t nchannels);

//! nbeams angles (degrees) evenly from first_deg to last_deg inclusive (one beam:
//! first_deg). Throws std::invalid_argument naming `nbeams` when 0 and `fan_first_deg`
//! or `fan_last_deg` when outside [-90, 90].
std::vector<double> beam_fan_deg(std::size_t nbeams, double first_deg, double last_deg);

/*!
 * The phase of a unit plane wave from azimuth theta (radians) at each element,
 * a_n = exp(+j 2 pi p_n . u(theta) / lambda): the array's steering vector.
 */
std::vector<std::complex<double>> steering_vector(const std::vector<position_m>& elements,
                                                  double wavelength_m,
                                                  double theta_rad);

/*!
 * \brief Beam weights, row-major nbeams x nchannels:
 * W[b][n] = t_n conj(a_n(theta_b)) / sum_n t_n, with t the amplitude taper (`taper`,
 * window_coefficients() over the elements in their given order; for a ULA that is along
 * the array) and a the steering vector. A unit plane wave from theta_b therefore gives
 * exactly 1 in beam b (coherent gain normalised), and the beam pattern's sidelobes are
 * those of the taper.
 *
 * Throws std::invalid_argument naming the parameter: `element_positions_m` (empty),
 * `wavelength_m` (not finite and > 0), `beam_angles_deg` (empty, or an angle outside
 * [-90, 90] or not finite), and the taper's own parameters.
 */
std::vector<cfloat> beamformer_weights(const std::vector<position_m>& elements,
                                       double wavelength_m,
                                       const std::vector<double>& beam_angles_deg,
                                       const window_spec& taper);

/*!
 * \brief y[i][b][s] = sum_c W[b][c] x[i][c][s]: nitems items of nchannels x nsamples
 * (channel-major: each channel's nsamples contiguous) in, nitems items of
 * nbeams x nsamples (beam-major) out.
 *
 * The layout is the module's channel-major item (DESIGN.md, Streams and the CPI): on the
 * pulse stream an item is one pulse and nsamples = nrange, on the range stream one range
 * bin and nsamples = npulses (or ndoppler). The weights are fixed at construction.
 * CPU: the fp32 twin; CUDA: one cuBLAS strided-batched complex GEMM per call (per item,
 * Y (nsamples x nbeams) = X (nsamples x nchannels) W^T in column-major terms).
 */
class beamformer
{
public:
    /*!
     * weights: nbeams x nchannels row-major (beamformer_weights()). Throws
     * std::invalid_argument naming `nchannels`, `nbeams` or `nsamples` (0) or `weights`
     * (size not nbeams * nchannels, or a non-finite weight) before allocating.
     */
    static std::unique_ptr<beamformer> make(backend b,
                                            std::size_t nchannels,
                                            std::size_t nbeams,
                                            std::size_t nsamples,
                                            const std::vector<cfloat>& weights,
                                            stream_ref stream = stream_ref());
    virtual ~beamformer() = default;

    //! nitems items; device pointers on CUDA (queued, not waited for). in != out.
    virtual void run(const cfloat* in, cfloat* out, std::size_t nitems) = 0;
};

} // namespace gpuradar::kernels

#endif
