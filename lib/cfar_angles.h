/* Azimuths (and elevations) for the detections of a beam-major map (cfar_2d with angles;
 * internal). */
#ifndef INCLUDED_GPURADAR_CFAR_ANGLES_H
#define INCLUDED_GPURADAR_CFAR_ANGLES_H

#include "beam_geometry_tag.h"
#include <gnuradio/logger.h>
#include <gpuradar/kernels/array/monopulse.h>
#include <gpuradar/kernels/detection/cfar_common.h>
#include <pmt/pmt.h>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace gr {
namespace gpuradar {

/*!
 * What a CFAR group needs to give its detections an azimuth: every beam's power at a
 * list of detections' cells (kernels::cfar_2d::channel_powers on the group's map) and
 * the monopulse of the beams that formed the map.
 */
struct angle_source {
    std::function<std::vector<float>(const std::vector<kernels::cfar_detection>&)>
        beam_powers;
    const kernels::grid_monopulse* monopulse = nullptr;
    explicit operator bool() const { return monopulse != nullptr; }
};

/*!
 * The monopulse of the beams a `cpi` tag describes (beam_geometry_tag.h), rebuilt when
 * the geometry changes. A CPI whose tag has no usable geometry gets no azimuths; the
 * reason is logged once per change of reason.
 */
class beam_angles
{
public:
    explicit beam_angles(std::size_t channels) : d_channels(channels) {}

    //! The monopulse for the CPI of this cpi dict, or nullptr (logged) without one.
    const kernels::grid_monopulse* for_cpi(const pmt::pmt_t& cpi_dict,
                                           const gr::logger_ptr& logger);

private:
    const std::size_t d_channels;
    beam_geometry d_geometry;
    std::unique_ptr<kernels::grid_monopulse> d_monopulse;
    std::string d_last_problem;
};

//! The beam-major maps the detections come from.
struct map_shape {
    std::size_t channels = 1; //!< beams
    std::size_t ndoppler = 1;
    bool doppler_wrap = true; //!< Doppler bin 0 touches ndoppler - 1
};

/*!
 * One group's listed detections (`peaks`, one per dict in `dicts`, same order) with
 * azimuths. Only each target's strongest listing across the beams is kept
 * (kernels::strongest_across_beams: all the beams of a cell count, so a target seen by
 * several rows and columns of an azimuth x elevation grid is listed once). Each kept
 * dict gains azimuth_deg, azimuth_std_deg (kernels::grid_monopulse::estimate_from_powers
 * over the cell's beam powers, the noise from the detection's CFAR interference
 * estimate) and azimuth_beam (first beam of the group used); when the beams span
 * elevations (a grid of several rows), elevation_deg, elevation_std_deg and
 * elevation_beam as well (a grid of one column: the elevation only). A detection whose
 * cell holds a NaN/Inf beam power or a zero noise estimate is kept without angles.
 */
std::vector<pmt::pmt_t> with_azimuths(const std::vector<kernels::cfar_detection>& peaks,
                                      const std::vector<pmt::pmt_t>& dicts,
                                      const map_shape& shape,
                                      const angle_source& angles);

} // namespace gpuradar
} // namespace gr

#endif
