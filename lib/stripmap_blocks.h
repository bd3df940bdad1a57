/* The stripmap blocks made from a kernels::stripmap_params, for C++ callers that hold the
 * acquisition as one (the block tests and the sar_focus benchmark) rather than as the
 * blocks' separate arguments. Header-only: it adds nothing to the library. */
#ifndef INCLUDED_GPURADAR_STRIPMAP_BLOCKS_H
#define INCLUDED_GPURADAR_STRIPMAP_BLOCKS_H

#include <gnuradio/gpuradar/sar_focus.h>
#include <gpuradar/kernels/sar/stripmap.h>
#include <string>
#include <utility>

namespace gr {
namespace gpuradar {

/*!
 * make(fc, bandwidth, pulse_width, up_chirp, fs, prf, velocity, altitude, near_range,
 * nrange, squint, antenna_length, rest...) with the acquisition taken from `p`: the
 * leading arguments of stripmap_source::make and sar_focus::make.
 */
template <typename Make, typename... Rest>
auto make_with_acquisition(const ::gpuradar::kernels::stripmap_params& p,
                           Make&& make,
                           Rest&&... rest)
{
    return make(p.fc_hz,
                p.bandwidth_hz,
                p.pulse_width_s,
                p.up_chirp,
                p.fs_hz,
                p.prf_hz,
                p.velocity_mps,
                p.altitude_m,
                p.near_range_m,
                unsigned(p.nrange),
                p.squint_rad,
                p.antenna_length_m,
                std::forward<Rest>(rest)...);
}

//! sar_focus::make with the acquisition taken from `p`; the other arguments as there.
inline sar_focus::sptr make_sar_focus(const ::gpuradar::kernels::stripmap_params& p,
                                      unsigned int naz = 0,
                                      const std::string& backend = "cpu",
                                      const std::string& algorithm = "csa",
                                      const std::string& range_window = "rectangular",
                                      const std::string& azimuth_window = "rectangular",
                                      int device = 0)
{
    return make_with_acquisition(p,
                                 &sar_focus::make,
                                 algorithm,
                                 naz,
                                 range_window,
                                 azimuth_window,
                                 backend,
                                 device);
}

} // namespace gpuradar
} // namespace gr

#endif
