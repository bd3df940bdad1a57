/*
 * Antenna array geometry shared by the beamformer, the angle estimator and the
 * simulators (radar_scene, radar_channel).
 *
 * Geometry: local Cartesian metres (CONVENTIONS.md), the array's boresight along +y. A
 * direction (a beam's steering direction, a target's direction of arrival) is an azimuth
 * theta and an elevation phi, both inside [-90, 90] degrees: the azimuth measured from
 * boresight, positive towards +x, the elevation from the x-y plane, positive towards +z.
 * Its unit vector is u(theta, phi) = (sin theta cos phi, cos theta cos phi, sin phi);
 * at phi = 0 (the default everywhere) that is the azimuth-only u(theta) =
 * (sin theta, cos theta, 0), the same numbers bit for bit.
 * A plane wave arriving from u reaches element n (position p_n) with the phase
 * exp(+j 2 pi p_n . u / lambda) relative to the origin (the element nearer the source
 * receives it earlier). A uniform linear array (ULA) of N elements spaced d wavelengths
 * lies on the x axis, centred on the origin: p_n = ((n - (N-1)/2) d lambda, 0, 0). A
 * uniform rectangular array (URA) of nx x nz elements lies in the x-z plane, centred on
 * the origin, row after row: element n = iz nx + ix at
 * ((ix - (nx-1)/2) dx lambda, 0, (iz - (nz-1)/2) dz lambda); a linear array on x
 * measures azimuth only (ux = sin theta cos phi), the rows along z add elevation.
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
 * The centred URA in the x-z plane, element iz * nx + ix (ula_positions() along x per
 * row). Errors name `nx`, `nz` (0), `spacing_x_wl`, `spacing_z_wl` (not > 0) and
 * `wavelength_m`, prefixed by `who`.
 */
std::vector<position_m> ura_positions(std::size_t nx,
                                      std::size_t nz,
                                      double spacing_x_wl,
                                      double spacing_z_wl,
                                      double wavelength_m,
                                      const char* who = "beamformer");

/*!
 * Checks that an elevation (degrees) lies in [-90, 90] and is finite; throws
 * std::invalid_argument naming `name`, prefixed by `who`, otherwise.
 */
void check_elevation_deg(double elevation_deg, const char* who, const char* name);

//! u(theta, phi) (radians): the unit vector of a direction.
std::array<double, 3> direction_vector(double azimuth_rad, double elevation_rad = 0.0);

/*!
 * Positions from a flat list x0, y0, z0, x1, ... (metres). Throws std::invalid_argument
 * naming `element_positions_m` when the list is not 3 * nchannels long or holds a
 * non-finite value.
 */
std::vector<position_m> positions_from_xyz(const std::vector<double>& xyz,
                                           std::size_t nchannels,
                                           const char* who = "beamformer");

/*!
 * The phase of a unit plane wave from azimuth theta and elevation phi (radians) at each
 * element, a_n = exp(+j 2 pi p_n . u(theta, phi) / lambda): the steering vector.
 */
std::vector<std::complex<double>> steering_vector(const std::vector<position_m>& elements,
                                                  double wavelength_m,
                                                  double theta_rad,
                                                  double phi_rad = 0.0);

/*!
 * The phase (radians) of a unit plane wave from azimuth theta and elevation phi at
 * position p: 2 pi p . u(theta, phi) / lambda (one steering_vector() entry's argument).
 */
double arrival_phase_rad(const position_m& p,
                         double wavelength_m,
                         double theta_rad,
                         double phi_rad = 0.0);

} // namespace gpuradar::kernels

#endif
