/*
 * Digital beamforming: the channels of an antenna array combined into beams by a complex
 * weight matrix, y[b] = sum_c W[b][c] x[c], for every sample of every item.
 *
 * Geometry and angles: array_geometry.h.
 */
#ifndef INCLUDED_GPURADAR_KERNELS_BEAMFORMER_H
#define INCLUDED_GPURADAR_KERNELS_BEAMFORMER_H

#include <gpuradar/kernels/array/array_geometry.h>
#include <gpuradar/kernels/common/backend.h>
#include <gpuradar/kernels/common/cuda_resources.h>
#include <gpuradar/kernels/common/sample_convert.h>
#include <gpuradar/kernels/common/window.h>
#include <complex>
#include <cstddef>
#include <memory>
#include <vector>

namespace gpuradar::kernels {

//! nbeams angles (degrees) evenly from first_deg to last_deg inclusive (one beam:
//! first_deg). Throws std::invalid_argument naming `nbeams` when 0 and `fan_first_deg`
//! or `fan_last_deg` when outside [-90, 90].
std::vector<double> beam_fan_deg(std::size_t nbeams, double first_deg, double last_deg);

/*!
 * The beams' steering directions, one azimuth and one elevation per beam (degrees).
 */
struct beam_directions {
    std::vector<double> azimuths_deg;
    std::vector<double> elevations_deg;
};

/*!
 * An azimuth x elevation grid of beams, beam-major order row after row: beam
 * r * naz + c is steered at (azimuths_deg[c], elevations_deg[r]), so each row of naz
 * beams is an azimuth fan at one elevation. Throws std::invalid_argument naming
 * `beam_elevations_deg` (empty, or an elevation outside [-90, 90]).
 */
beam_directions beam_grid_deg(const std::vector<double>& azimuths_deg,
                              const std::vector<double>& elevations_deg);

/*!
 * The separable taper of a URA (ura_positions()' element order): t[iz nx + ix] =
 * w_x[ix] w_z[iz], the window over nx elements along each row times the window over nz
 * along each column, so each cut of the beams has the taper's sidelobes.
 */
std::vector<double> ura_taper(const window_spec& taper, std::size_t nx, std::size_t nz);

/*!
 * The taper of nelements elements in `rows` rows of nelements / rows (ura_taper(); one
 * row: window_coefficients() along the elements). Throws std::invalid_argument naming
 * `element_rows` (0, or not dividing nelements) and the taper's parameters.
 */
std::vector<double>
array_taper(const window_spec& taper, std::size_t nelements, std::size_t rows);

/*!
 * \brief Beam weights for beams in any direction (azimuth and elevation per beam):
 * W[b][n] = t_n conj(a_n(theta_b, phi_b)) / sum_n t_n, with t the given amplitude taper
 * (one positive number per element; ura_taper(), or window_coefficients() over the
 * elements in their order). A unit plane wave from (theta_b, phi_b) gives 1 in beam b.
 *
 * Throws std::invalid_argument naming `element_positions_m` (empty), `wavelength_m`,
 * `beam_angles_deg` (empty or an azimuth outside [-90, 90]), `beam_elevations_deg` (not
 * one per azimuth, or outside [-90, 90]) and `taper` (not one per element, or a sum that
 * is not positive).
 */
std::vector<cfloat> steering_weights(const std::vector<position_m>& elements,
                                     double wavelength_m,
                                     const beam_directions& beams,
                                     const std::vector<double>& taper);

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
 * [-90, 90] or not finite), and the taper's own parameters. All beams at elevation 0:
 * steering_weights() with the taper over the elements in their order.
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
 * The layout is the module's channel-major item (CONVENTIONS.md, Streams and the CPI):
 * on the pulse stream an item is one pulse and nsamples = nrange, on the range stream one
 * range bin and nsamples = npulses (or ndoppler). The weights are fixed at construction.
 * CPU: the fp32 twin; CUDA: one cuBLAS strided-batched complex GEMM per call (per item,
 * Y (nsamples x nbeams) = X (nsamples x nchannels) W^T in column-major terms).
 */
class beamformer
{
public:
    /*!
     * weights: nbeams x nchannels row-major (beamformer_weights()). Throws
     * std::invalid_argument naming `nchannels`, `nbeams` or `nsamples` (0) or `weights`
     * (size not nbeams * nchannels, or a non-finite weight) before allocating. `input`:
     * the format run_samples() takes (fc32, or an SDR's sc16 / sc8 at 1.0 = full scale).
     */
    static std::unique_ptr<beamformer> make(backend b,
                                            std::size_t nchannels,
                                            std::size_t nbeams,
                                            std::size_t nsamples,
                                            const std::vector<cfloat>& weights,
                                            stream_ref stream = stream_ref(),
                                            sample_format input = sample_format::fc32);
    virtual ~beamformer() = default;
    //! nitems items; device pointers on CUDA (queued, not waited for). in != out.
    virtual void run(const cfloat* in, cfloat* out, std::size_t nitems) = 0;

    /*!
     * nitems items of input_format() samples (device memory on CUDA, aligned to one
     * sample, queued). fc32 is run(). sc16 / sc8: on CUDA's register kernel (up to 16
     * beams and 256 channels) the integers are converted as the kernel loads them; else
     * (the CPU twin, CUDA's cuBLAS GEMM, which reads complex float) they are converted
     * (sample_convert: VOLK or a CUDA kernel) into a workspace made by make(),
     * conversion_chunk_items() items at a time, each chunk then run(). Either way the
     * result is bit for bit run() on the codes' exact values.
     */
    virtual void run_samples(const void* in, cfloat* out, std::size_t nitems);
    sample_format input_format() const { return d_input; }
    //! Items converted per chunk of run_samples() (the workspace holds that many; 0
    //! when the backend converts in its loads).
    std::size_t conversion_chunk_items() const { return d_chunk_items; }
    //! Bytes of complex float the conversion workspace holds (at least one item).
    static constexpr std::size_t conversion_chunk_bytes = std::size_t(8) << 20;

protected:
    //! True when run_samples() converts sc16 / sc8 inside the backend's own loads (no
    //! workspace, no conversion pass).
    virtual bool converts_on_load() const { return false; }

private:
    // Integer input only (made by make()).
    sample_format d_input = sample_format::fc32;
    std::size_t d_in_item = 0, d_out_item = 0; // samples per input / output item
    std::size_t d_chunk_items = 0;
    std::unique_ptr<sample_convert> d_convert;
    std::vector<cfloat> d_host_converted; // CPU backend
    device_memory d_device_converted;     // CUDA backend
};

} // namespace gpuradar::kernels

#endif
