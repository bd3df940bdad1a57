/* SPDX-License-Identifier: GPL-3.0-or-later */
#include <gnuradio/gpuradar/stripmap_source.h>
#include <pybind11/complex.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace py = pybind11;

void bind_stripmap_source(py::module& m)
{
    using gr::gpuradar::stripmap_source;
    py::class_<stripmap_source,
               gr::sync_block,
               gr::block,
               gr::basic_block,
               std::shared_ptr<stripmap_source>>(
        m,
        "stripmap_source",
        "Simulated raw stripmap SAR echoes, one pulse (nrange complex) per item, point "
        "targets, an optional distributed scene, plus noise; a `stripmap` tag on item 0 "
        "holds the acquisition (see C++ "
        "docs).")
        .def(py::init(&stripmap_source::make),
             py::arg("fc"),
             py::arg("bandwidth"),
             py::arg("pulse_width"),
             py::arg("up_chirp"),
             py::arg("fs"),
             py::arg("prf"),
             py::arg("velocity"),
             py::arg("altitude"),
             py::arg("near_range"),
             py::arg("nrange"),
             py::arg("squint"),
             py::arg("antenna_length"),
             py::arg("target_x"),
             py::arg("target_y"),
             py::arg("target_z") = std::vector<double>(),
             py::arg("target_amplitude") = std::vector<double>(),
             py::arg("noise_sigma") = 0.0,
             py::arg("first_pulse_y") = 0.0,
             py::arg("max_pulses") = 0,
             py::arg("seed") = 1,
             py::arg("scene_reflectivity") = std::vector<gr_complex>(),
             py::arg("scene_nx") = 0,
             py::arg("scene_x0") = 0.0,
             py::arg("scene_y0") = 0.0,
             py::arg("scene_spacing") = 1.0)
        .def("far_aperture_pulses", &stripmap_source::far_aperture_pulses)
        .def("pulses", &stripmap_source::pulses);
}
