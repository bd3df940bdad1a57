/*
 * The point-target SAR simulator of the DSP core (gpuradar::kernels::sar_sim), bound as
 * gnuradio.gpuradar.sar_sim_core for python/gpuradar/sar_sim.py, which adds scenarios,
 * SigMF recordings and the reader. The maths lives only in kernels/src/sar/sar_sim.cc.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <gpuradar/kernels/sar/sar_sim.h>
#include <pybind11/complex.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <array>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>

namespace py = pybind11;

namespace {

namespace sim = ::gpuradar::kernels::sar_sim;
using f64_array = py::array_t<double, py::array::c_style | py::array::forcecast>;

sim::vec3 to_vec3(const std::array<double, 3>& a) { return { a[0], a[1], a[2] }; }

py::array_t<double> path_to_array(const std::vector<sim::vec3>& p)
{
    py::array_t<double> out({ static_cast<py::ssize_t>(p.size()), py::ssize_t(3) });
    auto o = out.mutable_unchecked<2>();
    for (std::size_t i = 0; i < p.size(); ++i) {
        o(i, 0) = p[i].x;
        o(i, 1) = p[i].y;
        o(i, 2) = p[i].z;
    }
    return out;
}

std::vector<sim::vec3> array_to_path(const f64_array& a, const char* name)
{
    if (a.ndim() != 2 || a.shape(1) != 3)
        throw std::invalid_argument(std::string("gpuradar::sar_sim: ") + name +
                                    " must be an array of shape (n, 3)");
    auto v = a.unchecked<2>();
    std::vector<sim::vec3> p(static_cast<std::size_t>(a.shape(0)));
    for (std::size_t i = 0; i < p.size(); ++i)
        p[i] = { v(i, 0), v(i, 1), v(i, 2) };
    return p;
}

} // namespace

void bind_sar_sim(py::module& m)
{
    py::module s = m.def_submodule(
        "sar_sim_core",
        "Point-target SAR phase-history simulator (gpuradar::kernels::sar_sim); use "
        "gnuradio.gpuradar.sar_sim, which wraps it.");
    s.def(
        "straight_path",
        [](const std::array<double, 3>& start,
           const std::array<double, 3>& end,
           std::size_t n) {
            return path_to_array(sim::straight_path(to_vec3(start), to_vec3(end), n));
        },
        py::arg("start"),
        py::arg("end"),
        py::arg("npulses"),
        "npulses antenna positions evenly spaced from start to end, shape (npulses, 3).");
    s.def(
        "circular_path",
        [](const std::array<double, 3>& centre,
           double radius,
           double start,
           double span,
           std::size_t n) {
            return path_to_array(
                sim::circular_path(to_vec3(centre), radius, start, span, n));
        },
        py::arg("centre"),
        py::arg("radius"),
        py::arg("start_rad"),
        py::arg("span_rad"),
        py::arg("npulses"),
        "npulses positions on a circle around centre (at its height), from start_rad "
        "over "
        "span_rad (end excluded for a full turn), shape (npulses, 3).");
    s.def(
        "simulate",
        [](const f64_array& path,
           const f64_array& positions,
           const std::vector<std::complex<double>>& amplitudes,
           double f0,
           double bandwidth,
           double dr,
           std::size_t nbins,
           double r0,
           std::optional<std::array<double, 3>> gate_centre,
           int sinc_half_width,
           double noise_sigma,
           std::uint32_t seed) {
            const auto p = array_to_path(path, "path");
            const auto pos = array_to_path(positions, "positions");
            if (pos.size() != amplitudes.size())
                throw std::invalid_argument("gpuradar::sar_sim: amplitudes must have one "
                                            "value per target position");
            std::vector<sim::point_target> targets(pos.size());
            for (std::size_t i = 0; i < pos.size(); ++i)
                targets[i] = { pos[i], amplitudes[i] };
            sim::radar r;
            r.f0 = f0;
            r.bandwidth = bandwidth;
            r.dr = dr;
            r.nbins = nbins;
            r.r0 = r0;
            if (gate_centre)
                r.gate_centre = to_vec3(*gate_centre);
            r.sinc_half_width = sinc_half_width;
            r.noise_sigma = noise_sigma;
            r.seed = seed;
            sim::phase_history h;
            {
                py::gil_scoped_release release;
                h = sim::simulate(p, targets, r);
            }
            py::array_t<std::complex<float>> pulses(
                { static_cast<py::ssize_t>(h.npulses),
                  static_cast<py::ssize_t>(h.nbins) });
            std::memcpy(pulses.mutable_data(),
                        h.pulses.data(),
                        h.pulses.size() * sizeof(std::complex<float>));
            py::array_t<double> geometry(
                { static_cast<py::ssize_t>(h.npulses), py::ssize_t(6) });
            std::memcpy(geometry.mutable_data(),
                        h.geometry.data(),
                        h.geometry.size() * sizeof(double));
            return py::make_tuple(pulses, geometry);
        },
        py::arg("path"),
        py::arg("positions"),
        py::arg("amplitudes"),
        py::arg("f0"),
        py::arg("bandwidth"),
        py::arg("dr"),
        py::arg("nbins"),
        py::arg("r0") = 0.0,
        py::arg("gate_centre") = py::none(),
        py::arg("sinc_half_width") = 0,
        py::arg("noise_sigma") = 0.0,
        py::arg("seed") = 1,
        "Range-compressed phase history (pulses complex64 (npulses, nbins), geometry "
        "float64 (npulses, 6) [x, y, z, r0, dr, f0]) of point targets seen from path; "
        "see gpuradar::kernels::sar_sim::simulate.");
    s.def(
        "nearest_pixel",
        [](double x0, double y0, double dx, double dy, double x, double y) {
            ::gpuradar::kernels::image_grid g;
            g.x0 = x0;
            g.y0 = y0;
            g.dx = dx;
            g.dy = dy;
            const auto p = sim::nearest_pixel(g, { x, y, 0.0 });
            return py::make_tuple(p.ix, p.iy);
        },
        py::arg("x0"),
        py::arg("y0"),
        py::arg("dx"),
        py::arg("dy"),
        py::arg("x"),
        py::arg("y"),
        "(ix, iy) of the pixel nearest (x, y) on the grid (may lie outside it).");
}
