/* sar_focus made from a kernels::stripmap_params, for C++ callers that hold the
 * acquisition as one (the block tests and the sar_focus benchmark) rather than as the
 * block's separate arguments. Header-only: it adds nothing to the library. */
#ifndef INCLUDED_GPURADAR_SAR_FOCUS_FROM_PARAMS_H
#define INCLUDED_GPURADAR_SAR_FOCUS_FROM_PARAMS_H

#include <gnuradio/gpuradar/sar_focus.h>
#include <gpuradar/kernels/stripmap.h>
#include <string>

namespace gr {
namespace gpuradar {

//! sar_focus::make with the acquisition arguments taken from `p`; the others as there.
inline sar_focus::sptr make_sar_focus(const ::gpuradar::kernels::stripmap_params& p,
                                      unsigned int naz = 0,
                                      const std::string& backend = "cpu",
                                      const std::string& algorithm = "csa",
                                      const std::string& range_window = "rectangular",
                                      const std::string& azimuth_window = "rectangular",
                                      int device = 0)
{
    return sar_focus::make(p.fc_hz,
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
