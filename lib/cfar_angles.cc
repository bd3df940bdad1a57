#include "cfar_angles.h"
#include <gpuradar/kernels/detection/detection_clustering.h>
#include <cmath>

namespace gr {
namespace gpuradar {

const kernels::grid_monopulse* beam_angles::for_cpi(const pmt::pmt_t& cpi_dict,
                                                    const gr::logger_ptr& logger)
{
    beam_geometry g;
    std::string problem = read_beam_geometry(cpi_dict, d_channels, g);
    if (problem.empty() && !(d_monopulse && g == d_geometry)) {
        try {
            d_monopulse = std::make_unique<kernels::grid_monopulse>(
                g.elements_wl,
                1.0,
                g.weights,
                kernels::beam_directions{ g.angles_deg, g.elevations_deg });
            d_geometry = std::move(g);
        } catch (const std::invalid_argument& e) {
            d_monopulse.reset();
            problem = e.what();
        }
    }
    if (!problem.empty()) {
        if (problem != d_last_problem)
            logger->warn("no azimuths: {}", problem);
        d_last_problem = problem;
        return nullptr;
    }
    d_last_problem.clear();
    return d_monopulse.get();
}

namespace {
pmt::pmt_t key(const char* k) { return pmt::intern(k); }

//! r with <axis>_deg, <axis>_std_deg and <axis>_beam of the estimate.
pmt::pmt_t
with_angle(pmt::pmt_t r, const std::string& axis, const kernels::angle_estimate& e)
{
    r = pmt::dict_add(r, key((axis + "_deg").c_str()), pmt::from_double(e.angle_deg));
    r = pmt::dict_add(r, key((axis + "_std_deg").c_str()), pmt::from_double(e.std_deg));
    return pmt::dict_add(r, key((axis + "_beam").c_str()), pmt::from_uint64(e.beam));
}

bool all_finite(const float* p, std::size_t n)
{
    for (std::size_t i = 0; i < n; ++i)
        if (!std::isfinite(p[i]))
            return false;
    return true;
}
} // namespace

std::vector<pmt::pmt_t> with_azimuths(const std::vector<kernels::cfar_detection>& peaks,
                                      const std::vector<pmt::pmt_t>& dicts,
                                      const map_shape& shape,
                                      const angle_source& angles)
{
    const std::size_t channels = shape.channels;
    const std::vector<float> powers = angles.beam_powers(peaks);
    std::vector<pmt::pmt_t> out;
    for (const std::size_t i : kernels::strongest_across_beams(
             peaks, channels, shape.ndoppler, shape.doppler_wrap)) {
        const auto& d = peaks[i];
        pmt::pmt_t r = dicts[i];
        const float* p = powers.data() + i * channels;
        if (all_finite(p, channels) && d.noise > 0.0f && std::isfinite(d.noise)) {
            const auto e =
                angles.monopulse->estimate_from_powers(p, d.map % channels, d.noise);
            if (e.has_azimuth)
                r = with_angle(r, "azimuth", e.azimuth);
            if (e.has_elevation)
                r = with_angle(r, "elevation", e.elevation);
        }
        out.push_back(r);
    }
    return out;
}

} // namespace gpuradar
} // namespace gr
