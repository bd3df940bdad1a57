/* The beams' geometry in a `cpi` tag: written by the beamformer, read by the CFAR's
 * angle estimation (internal). */
#ifndef INCLUDED_GPURADAR_BEAM_GEOMETRY_TAG_H
#define INCLUDED_GPURADAR_BEAM_GEOMETRY_TAG_H

#include <gpuradar/kernels/array/array_geometry.h>
#include <gpuradar/kernels/common/backend.h>
#include <pmt/pmt.h>
#include <string>
#include <vector>

namespace gr {
namespace gpuradar {

namespace kernels = ::gpuradar::kernels;

/*!
 * What forms a beam-major map's beams: the element positions in wavelengths, the
 * steering directions and the weights (nbeams x nchannels row-major,
 * kernels/beamformer.h). In the cpi dict: element_positions_wl (f64vector x, y, z per
 * channel), beam_angles_deg (f64vector, azimuths), beam_elevations_deg (f64vector, one
 * per beam; a dict without it means all 0) and beam_weights (c32vector).
 */
struct beam_geometry {
    std::vector<kernels::position_m> elements_wl;
    std::vector<double> angles_deg;
    std::vector<double> elevations_deg;
    std::vector<kernels::cfloat> weights;

    bool operator==(const beam_geometry& o) const
    {
        return elements_wl == o.elements_wl && angles_deg == o.angles_deg &&
               elevations_deg == o.elevations_deg && weights == o.weights;
    }
};

//! `dict` with the geometry's four fields added.
pmt::pmt_t add_beam_geometry(pmt::pmt_t dict, const beam_geometry& g);

/*!
 * The geometry of a cpi dict for a map of `channels` beams. Empty string when read;
 * otherwise why not (a field missing, of the wrong type, or sizes that do not fit
 * channels beams).
 */
std::string
read_beam_geometry(const pmt::pmt_t& dict, std::size_t channels, beam_geometry& g);

} // namespace gpuradar
} // namespace gr

#endif
