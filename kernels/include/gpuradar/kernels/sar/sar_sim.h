/* Point-target SAR phase-history simulator (range-compressed pulses plus the truth). */
#ifndef INCLUDED_GPURADAR_KERNELS_SAR_SIM_H
#define INCLUDED_GPURADAR_KERNELS_SAR_SIM_H

#include <gpuradar/kernels/common/backend.h>
#include <gpuradar/kernels/sar/backprojection.h>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace gpuradar::kernels::sar_sim {

//! A point in local Cartesian metres (x east, y north, z up).
struct vec3 {
    double x = 0, y = 0, z = 0;
};

//! A point scatterer: position and complex amplitude (the truth).
struct point_target {
    vec3 position;
    std::complex<double> amplitude{ 1.0, 0.0 };
};

//! npulses antenna positions evenly spaced from `start` to `end` (stripmap/spotlight).
std::vector<vec3> straight_path(vec3 start, vec3 end, std::size_t npulses);

//! npulses positions on a circle of `radius` around `centre` (at height centre.z), from
//! angle `start_rad` over `span_rad` (end excluded when span is a full turn).
std::vector<vec3> circular_path(
    vec3 centre, double radius, double start_rad, double span_rad, std::size_t npulses);

struct radar {
    double f0 = 10e9;         //!< reference (centre) frequency (Hz)
    double bandwidth = 300e6; //!< range resolution c/(2B) is the sinc's first null (Hz)
    double dr = 0.25;         //!< range bin spacing (m), usually c/(2 fs)
    std::size_t nbins = 1024;
    //! Range of bin 0 (m) for every pulse; ignored when gate_centre is set.
    double r0 = 0;
    //! When set, each pulse's gate is centred on this point: r0 = |A - gate_centre| -
    //! (nbins/2) dr (a motion-compensated gate).
    std::optional<vec3> gate_centre;
    //! Sinc samples kept each side of a target's range (bins); 0 keeps all bins.
    int sinc_half_width = 0;
    //! Std. dev. of each component of complex white Gaussian noise added per sample.
    double noise_sigma = 0;
    std::uint32_t seed = 1;
};

//! Range-compressed phase history with its geometry and the truth.
struct phase_history {
    std::size_t npulses = 0, nbins = 0;
    std::vector<cfloat> pulses;        //!< npulses x nbins, pulse-major
    std::vector<double> geometry;      //!< npulses x 6: x,y,z,r0,dr,f0 (CONVENTIONS.md)
    std::vector<point_target> targets; //!< the truth
};

/*!
 * Sample k of pulse i (antenna A_i, gate r0_i):
 *   sum over targets t of  a_t sinc(2B (r0_i + k dr - R_it)/c) exp(-j 4 pi f0 R_it / c)
 * with R_it = |A_i - P_t| and sinc(x) = sin(pi x)/(pi x), plus noise. The phase is formed
 * in double with an exact reduction, so the data are good to float precision at any
 * range.
 */
phase_history simulate(const std::vector<vec3>& path,
                       const std::vector<point_target>& targets,
                       const radar& r);

//! The pixel nearest a point on a grid (may lie outside the grid).
struct pixel {
    long long ix, iy;
};
pixel nearest_pixel(const image_grid& g, vec3 p);

} // namespace gpuradar::kernels::sar_sim

#endif
