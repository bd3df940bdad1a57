#include "cfar_angles.h"
#include <cmath>
#include <map>
#include <tuple>

namespace gr {
namespace gpuradar {

const kernels::monopulse* beam_angles::for_cpi(const pmt::pmt_t& cpi_dict,
                                               const gr::logger_ptr& logger)
{
    beam_geometry g;
    std::string problem = read_beam_geometry(cpi_dict, d_channels, g);
    if (problem.empty() && !(d_monopulse && g == d_geometry)) {
        try {
            d_monopulse = std::make_unique<kernels::monopulse>(
                g.elements_wl, 1.0, g.weights, g.angles_deg);
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
    // The listed detections by cell (CPI, range bin, Doppler bin).
    using cell = std::tuple<std::uint32_t, long, long>;
    std::multimap<cell, std::size_t> by_cell;
    for (std::size_t i = 0; i < peaks.size(); ++i)
        by_cell.emplace(cell{ std::uint32_t(peaks[i].map / channels),
                              peaks[i].range_bin,
                              peaks[i].doppler_bin },
                        i);
    // A detection beside (or at) a stronger one of another beam is that target's.
    const auto outshone = [&](std::size_t i) {
        const auto& d = peaks[i];
        for (long dr = -1; dr <= 1; ++dr)
            for (long dd = -1; dd <= 1; ++dd) {
                long r = long(d.range_bin) + dr, m = long(d.doppler_bin) + dd;
                if (shape.doppler_wrap)
                    m = (m + long(shape.ndoppler)) % long(shape.ndoppler);
                const auto [lo, hi] =
                    by_cell.equal_range(cell{ std::uint32_t(d.map / channels), r, m });
                for (auto it = lo; it != hi; ++it) {
                    const auto& o = peaks[it->second];
                    if (o.map != d.map &&
                        (o.power > d.power || (o.power == d.power && o.map < d.map)))
                        return true;
                }
            }
        return false;
    };
    std::vector<pmt::pmt_t> out;
    for (std::size_t i = 0; i < peaks.size(); ++i) {
        const auto& d = peaks[i];
        if (outshone(i))
            continue;
        pmt::pmt_t r = dicts[i];
        const float* p = powers.data() + i * channels;
        if (all_finite(p, channels) && d.noise > 0.0f && std::isfinite(d.noise)) {
            const auto e =
                angles.monopulse->estimate_from_powers(p, d.map % channels, d.noise);
            r = pmt::dict_add(r, key("azimuth_deg"), pmt::from_double(e.azimuth_deg));
            r = pmt::dict_add(r, key("azimuth_std_deg"), pmt::from_double(e.std_deg));
            r = pmt::dict_add(r, key("azimuth_beam"), pmt::from_uint64(e.beam));
        }
        out.push_back(r);
    }
    return out;
}

} // namespace gpuradar
} // namespace gr
