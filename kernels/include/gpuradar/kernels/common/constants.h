/* Physical constants shared by every stage (CONVENTIONS.md, Units and signs). */
#ifndef INCLUDED_GPURADAR_KERNELS_CONSTANTS_H
#define INCLUDED_GPURADAR_KERNELS_CONSTANTS_H

namespace gpuradar::kernels {

//! Speed of light in vacuum, m/s: the one c of ranges, Doppler and SAR phase.
constexpr double speed_of_light = 299792458.0;

} // namespace gpuradar::kernels

#endif
