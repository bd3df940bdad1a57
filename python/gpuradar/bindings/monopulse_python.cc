/* SPDX-License-Identifier: GPL-3.0-or-later */
#include <gpuradar/kernels/array/monopulse.h>
#include <pybind11/complex.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace py = pybind11;

namespace {

namespace k = gpuradar::kernels;

//! Element positions from a flat x, y, z list (metres).
std::vector<k::position_m> elements_of(const std::vector<double>& xyz)
{
    if (xyz.size() % 3 != 0)
        throw std::invalid_argument("gpuradar::monopulse: element_positions_m must hold "
                                    "x, y, z per element (got " +
                                    std::to_string(xyz.size()) + " numbers)");
    return k::positions_from_xyz(xyz, xyz.size() / 3, "monopulse");
}

//! Throws std::invalid_argument naming `what` unless it holds one value per beam.
void check_one_per_beam(const char* who,
                        const char* what,
                        std::size_t n,
                        std::size_t nbeams)
{
    if (n != nbeams)
        throw std::invalid_argument(std::string("gpuradar::") + who + ": " + what +
                                    " must hold one value per beam (" +
                                    std::to_string(nbeams) + ", got " +
                                    std::to_string(n) + ")");
}

//! An estimate as the dict the Python methods return.
py::dict as_dict(const k::angle_estimate& e)
{
    py::dict d;
    d["azimuth_deg"] = e.angle_deg;
    d["std_deg"] = e.std_deg;
    d["beam"] = e.beam;
    return d;
}

//! A grid estimate as a dict: azimuth_* and elevation_* of the axes the grid spans.
py::dict as_dict(const k::direction_estimate& e)
{
    py::dict d;
    const auto put = [&](const char* axis, const k::angle_estimate& a) {
        const std::string s(axis);
        d[(s + "_deg").c_str()] = a.angle_deg;
        d[(s + "_std_deg").c_str()] = a.std_deg;
        d[(s + "_beam").c_str()] = a.beam;
    };
    if (e.has_azimuth)
        put("azimuth", e.azimuth);
    if (e.has_elevation)
        put("elevation", e.elevation);
    return d;
}

} // namespace

void bind_monopulse(py::module& m)
{
    m.def(
        "beamformer_weights",
        [](const std::vector<double>& xyz,
           double wavelength_m,
           const std::vector<double>& angles_deg,
           const std::string& window,
           int nbar,
           double sll_db,
           double beta,
           const std::vector<double>& elevations_deg,
           unsigned int element_rows) {
            const auto elements = elements_of(xyz);
            const auto taper = k::array_taper(
                k::window_spec::make(window, nbar, sll_db, beta, "beamformer"),
                elements.size(),
                element_rows);
            return k::steering_weights(elements,
                                       wavelength_m,
                                       { angles_deg,
                                         elevations_deg.empty()
                                             ? std::vector<double>(angles_deg.size(), 0.0)
                                             : elevations_deg },
                                       taper);
        },
        py::arg("element_positions_m"),
        py::arg("wavelength_m"),
        py::arg("beam_angles_deg"),
        py::arg("window") = "taylor",
        py::arg("nbar") = 4,
        py::arg("sll_db") = 35.0,
        py::arg("beta") = 6.0,
        py::arg("beam_elevations_deg") = std::vector<double>(),
        py::arg("element_rows") = 1,
        "The beamformer block's weights, row-major nbeams x nchannels (kernels/"
        "beamformer.h): W[b][c] = t_c conj(a_c(theta_b, phi_b)) / sum t, the taper over "
        "element_rows rows as the block's; beam_elevations_deg empty: all 0.");
    py::class_<k::monopulse>(
        m,
        "monopulse",
        "Azimuth of a detection from the complex outputs of the strongest beam and its "
        "neighbours, with its standard deviation (kernels/monopulse.h).")
        .def(py::init([](const std::vector<double>& xyz,
                         double wavelength_m,
                         const std::vector<k::cfloat>& weights,
                         const std::vector<double>& angles_deg) {
                 return k::monopulse(elements_of(xyz), wavelength_m, weights, angles_deg);
             }),
             py::arg("element_positions_m"),
             py::arg("wavelength_m"),
             py::arg("weights"),
             py::arg("beam_angles_deg"))
        .def(
            "estimate",
            [](const k::monopulse& mp,
               const std::vector<k::cfloat>& beams,
               double noise_power) {
                check_one_per_beam("monopulse", "beams", beams.size(), mp.nbeams());
                const auto e = mp.estimate(beams.data(), noise_power);
                return as_dict(e);
            },
            py::arg("beams"),
            py::arg("noise_power"),
            "dict(azimuth_deg, std_deg, beam): beams are the nbeams complex outputs at "
            "the detection's cell, noise_power the per-channel noise power.")
        .def(
            "estimate_from_powers",
            [](const k::monopulse& mp,
               const std::vector<float>& powers,
               std::size_t noise_beam,
               double beam_noise_power) {
                check_one_per_beam("monopulse", "powers", powers.size(), mp.nbeams());
                const auto e =
                    mp.estimate_from_powers(powers.data(), noise_beam, beam_noise_power);
                return as_dict(e);
            },
            py::arg("powers"),
            py::arg("noise_beam"),
            py::arg("beam_noise_power"),
            "dict(azimuth_deg, std_deg, beam) from the nbeams powers |y|^2 at the "
            "detection's cell (a square-law map) and the noise power of beam noise_beam "
            "in the same units (kernels/monopulse.h).");
    py::class_<k::grid_monopulse>(
        m,
        "grid_monopulse",
        "Azimuth and elevation of a detection from the powers of an azimuth x elevation "
        "grid of beams (kernels/monopulse.h, grid_monopulse).")
        .def(py::init([](const std::vector<double>& xyz,
                         double wavelength_m,
                         const std::vector<k::cfloat>& weights,
                         const std::vector<double>& angles_deg,
                         const std::vector<double>& elevations_deg) {
                 return k::grid_monopulse(elements_of(xyz),
                                          wavelength_m,
                                          weights,
                                          { angles_deg, elevations_deg });
             }),
             py::arg("element_positions_m"),
             py::arg("wavelength_m"),
             py::arg("weights"),
             py::arg("beam_angles_deg"),
             py::arg("beam_elevations_deg"))
        .def(
            "estimate_from_powers",
            [](const k::grid_monopulse& mp,
               const std::vector<float>& powers,
               std::size_t noise_beam,
               double beam_noise_power) {
                check_one_per_beam(
                    "grid_monopulse", "powers", powers.size(), mp.nbeams());
                return as_dict(
                    mp.estimate_from_powers(powers.data(), noise_beam, beam_noise_power));
            },
            py::arg("powers"),
            py::arg("noise_beam"),
            py::arg("beam_noise_power"),
            "dict(azimuth_deg, azimuth_std_deg, azimuth_beam, and the same for the "
            "elevation when the grid has several rows) from the nbeams powers at the "
            "detection's cell and the noise power of beam noise_beam.");
}
