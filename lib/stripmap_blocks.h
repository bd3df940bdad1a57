/* The stripmap blocks made from a kernels::stripmap_params, for C++ callers that hold the
 * acquisition as one (the block tests and the sar_focus benchmark). Header-only: it adds
 * nothing to the library. */
#ifndef INCLUDED_GPURADAR_STRIPMAP_BLOCKS_H
#define INCLUDED_GPURADAR_STRIPMAP_BLOCKS_H

#include <gnuradio/gpuradar/sar_focus.h>
#include <gnuradio/gpuradar/stripmap_acquisition.h>
#include <gpuradar/kernels/sar/stripmap.h>
#include <string>

namespace gr {
namespace gpuradar {

//! The blocks' acquisition fields from the kernels' stripmap_params (units in its names).
inline stripmap_acquisition acquisition_of(const ::gpuradar::kernels::stripmap_params& p)
{
    stripmap_acquisition a;
    a.fc = p.fc_hz;
    a.bandwidth = p.bandwidth_hz;
    a.pulse_width = p.pulse_width_s;
    a.up_chirp = p.up_chirp;
    a.fs = p.fs_hz;
    a.prf = p.prf_hz;
    a.velocity = p.velocity_mps;
    a.altitude = p.altitude_m;
    a.near_range = p.near_range_m;
    a.nrange = unsigned(p.nrange);
    a.squint = p.squint_rad;
    a.antenna_length = p.antenna_length_m;
    return a;
}

//! sar_focus::make with the acquisition taken from `p`; the other fields as named.
inline sar_focus::sptr make_sar_focus(const ::gpuradar::kernels::stripmap_params& p,
                                      unsigned int naz = 0,
                                      const std::string& backend = "cpu",
                                      const std::string& algorithm = "csa",
                                      const std::string& range_window = "rectangular",
                                      const std::string& azimuth_window = "rectangular",
                                      int device = 0)
{
    sar_focus::params f;
    f.acquisition = acquisition_of(p);
    f.algorithm = algorithm;
    f.naz = naz;
    f.range_window = range_window;
    f.azimuth_window = azimuth_window;
    f.backend = backend;
    f.device = device;
    return sar_focus::make(f);
}

} // namespace gpuradar
} // namespace gr

#endif
