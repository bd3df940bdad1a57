/*
 * Antenna array geometry shared by the beamformer, the angle estimator and the
 * simulators (radar_scene, radar_channel).
 *
 * Geometry: local Cartesian metres (DESIGN.md), the array's boresight along +y. An
 * azimuth theta (a beam's steering angle, a target's angle of arrival) lies in the x-y
 * plane, measured from boresight, positive towards +x, inside [-90, 90] degrees; its
 * unit vector is u(theta) = (sin theta, cos theta, 0).
 * A plane wave arriving from theta reaches element n (position p_n) with the phase
 * exp(+j 2 pi p_n . u / lambda) relative to the origin (the element nearer the source
 * receives it earlier). A uniform linear array (ULA) of N elements spaced d wavelengths
 * lies on the x axis, centred on the origin: p_n = ((n - (N-1)/2) d lambda, 0, 0).
 */
#ifndef INCLUDED_GPURADAR_KERNELS_ARRAY_GEOMETRY_H
#define INCLUDED_GPURADAR_KERNELS_ARRAY_GEOMETRY_H

#include <array>
#include <complex>
#include <cstddef>
#include <vector>

namespace gpuradar::kernels {

//! An element position, metres (x, y, z).
using position_m = std::array<double, 3>;

//! The centred ULA on the x axis; spacing_wl > 0 (wavelengths), wavelength_m > 0.
//! Errors name `nchannels`, `element_spacing_wl`, `wavelength_m`, prefixed by `who`.
std::vector<position_m> ula_positions(std::size_t nelements,
                                      double spacing_wl,
                                      double wavelength_m,
                                      const char* who = "beamformer");

/*!
 * Positions from a flat list x0, y0, z0, x1, ... (metres). Throws std::invalid_argument
 * naming `element_positions_m` when the list is not 3 * nchannels long or holds a
 * non-finite value.
 */
std::vector<position_m> positions_from_xyz(const std::vector<double>& xyz,
                                           std::size_t nchannels,
                                           const char* who = "beamformer");

/*!
 * The phase of a unit plane wave from azimuth theta (radians) at each element,
 * a_n = exp(+j 2 pi p_n . u(theta) / lambda): the array's steering vector.
 */
std::vector<std::complex<double>> steering_vector(const std::vector<position_m>& elements,
                                                  double wavelength_m,
                                                  double theta_rad);

/*!
 * The phase (radians) of a unit plane wave from azimuth theta at position p:
 * 2 pi p . u(theta) / lambda (the argument of one steering_vector() entry).
 */
double arrival_phase_rad(const position_m& p, double wavelength_m, double theta_rad);

} // namespace gpuradar::kernels

#endif
