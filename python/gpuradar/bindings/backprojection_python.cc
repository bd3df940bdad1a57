/* SPDX-License-Identifier: GPL-3.0-or-later */
#include <gnuradio/gpuradar/backprojection.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace py = pybind11;

void bind_backprojection(py::module& m)
{
    using gr::gpuradar::backprojection;
    py::class_<backprojection,
               gr::block,
               gr::basic_block,
               std::shared_ptr<backprojection>>(
        m,
        "backprojection",
        "SAR backprojection: range-compressed pulses (input 0, nbins complex) and their "
        "geometry (input 1, 6 doubles [x, y, z, r0, dr, f0]) to a complex image (nz*ny "
        "items of nx complex: nz height slices dz apart over the flat grid at z or the "
        "height map) every pulses_per_image pulses (see C++ docs).")
        .def(py::init(&backprojection::make),
             py::arg("nbins"),
             py::arg("nx"),
             py::arg("ny"),
             py::arg("x0"),
             py::arg("y0"),
             py::arg("dx"),
             py::arg("dy"),
             py::arg("z"),
             py::arg("pulses_per_image"),
             py::arg("mode") = "restart",
             py::arg("precision") = "fast",
             py::arg("height") = std::vector<float>(),
             py::arg("backend") = "auto",
             py::arg("nz") = 1,
             py::arg("dz") = 1.0,
             py::arg("device") = 0,
             py::arg("algorithm") = "direct",
             py::arg("ffbp_stages") = 0,
             py::arg("ffbp_factor") = 4,
             py::arg("ffbp_order_range") = 8,
             py::arg("ffbp_order_angle") = 8,
             py::arg("ffbp_oversample_range") = 3.0,
             py::arg("ffbp_oversample_angle") = 2.0)
        .def("skipped_pulses", &backprojection::skipped_pulses)
        .def("nonfinite_samples", &backprojection::nonfinite_samples)
        .def("images", &backprojection::images)
        .def("mode", &backprojection::mode)
        .def("precision", &backprojection::precision)
        .def("backend", &backprojection::backend)
        .def("device", &backprojection::device)
        .def("algorithm", &backprojection::algorithm)
        .def_property_readonly_static("geometry_length", [](py::object) {
            return backprojection::geometry_length;
        });
}
