#include "beam_geometry_tag.h"
#include "cpi_tag.h"

namespace gr {
namespace gpuradar {

namespace {
const pmt::pmt_t& positions_key()
{
    static const pmt::pmt_t k = pmt::intern("element_positions_wl");
    return k;
}
const pmt::pmt_t& angles_key()
{
    static const pmt::pmt_t k = pmt::intern("beam_angles_deg");
    return k;
}
const pmt::pmt_t& elevations_key()
{
    static const pmt::pmt_t k = pmt::intern("beam_elevations_deg");
    return k;
}
const pmt::pmt_t& weights_key()
{
    static const pmt::pmt_t k = pmt::intern("beam_weights");
    return k;
}
} // namespace

pmt::pmt_t add_beam_geometry(pmt::pmt_t dict, const beam_geometry& g)
{
    std::vector<double> xyz;
    for (const auto& p : g.elements_wl)
        xyz.insert(xyz.end(), p.begin(), p.end());
    dict = pmt::dict_add(dict, positions_key(), pmt::init_f64vector(xyz.size(), xyz));
    dict = pmt::dict_add(
        dict, angles_key(), pmt::init_f64vector(g.angles_deg.size(), g.angles_deg));
    dict = pmt::dict_add(dict,
                         elevations_key(),
                         pmt::init_f64vector(g.elevations_deg.size(), g.elevations_deg));
    return pmt::dict_add(
        dict, weights_key(), pmt::init_c32vector(g.weights.size(), g.weights));
}

std::string
read_beam_geometry(const pmt::pmt_t& dict, std::size_t channels, beam_geometry& g)
{
    if (!dict || !pmt::is_dict(dict))
        return "no cpi dict";
    const pmt::pmt_t xyz = pmt::dict_ref(dict, positions_key(), pmt::PMT_NIL);
    const pmt::pmt_t angles = pmt::dict_ref(dict, angles_key(), pmt::PMT_NIL);
    const pmt::pmt_t weights = pmt::dict_ref(dict, weights_key(), pmt::PMT_NIL);
    const pmt::pmt_t elevations = pmt::dict_ref(dict, elevations_key(), pmt::PMT_NIL);
    if (!pmt::is_f64vector(xyz) || !pmt::is_f64vector(angles) ||
        !pmt::is_c32vector(weights))
        return "the cpi tag has no element_positions_wl, beam_angles_deg and "
               "beam_weights (a beamformer's)";
    const auto flat = pmt::f64vector_elements(xyz);
    beam_geometry r;
    r.angles_deg = pmt::f64vector_elements(angles);
    r.weights = pmt::c32vector_elements(weights);
    // Azimuth-only beams (a producer without elevations): all at elevation 0.
    r.elevations_deg = pmt::is_f64vector(elevations)
                           ? pmt::f64vector_elements(elevations)
                           : std::vector<double>(r.angles_deg.size(), 0.0);
    if (flat.size() % 3 != 0 || flat.empty() || r.angles_deg.size() != channels ||
        r.elevations_deg.size() != channels ||
        r.weights.size() != channels * (flat.size() / 3))
        return "the cpi tag's beam geometry (" + std::to_string(flat.size()) +
               " coordinates, " + std::to_string(r.angles_deg.size()) + " beams, " +
               std::to_string(r.elevations_deg.size()) + " elevations, " +
               std::to_string(r.weights.size()) + " weights) does not fit " +
               std::to_string(channels) + " channels";
    for (std::size_t i = 0; i < flat.size(); i += 3)
        r.elements_wl.push_back({ flat[i], flat[i + 1], flat[i + 2] });
    g = std::move(r);
    return {};
}

} // namespace gpuradar
} // namespace gr
