/* SPDX-License-Identifier: GPL-3.0-or-later */
#include <gnuradio/gpuradar/sar_focus.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace py = pybind11;

void bind_sar_focus(py::module& m)
{
    using gr::gpuradar::sar_focus;
    py::class_<sar_focus, gr::block, gr::basic_block, std::shared_ptr<sar_focus>>(
        m,
        "sar_focus",
        "Stripmap SAR focusing (chirp scaling) of a continuous pulse stream in "
        "overlapping azimuth blocks: raw pulses in, focused azimuth lines out, one per "
        "item (see C++ docs).")
        .def(py::init(&sar_focus::make),
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
             py::arg("algorithm") = "csa",
             py::arg("naz") = 0,
             py::arg("range_window") = "rectangular",
             py::arg("azimuth_window") = "rectangular",
             py::arg("backend") = "auto",
             py::arg("device") = 0)
        .def("naz", &sar_focus::naz)
        .def("lead", &sar_focus::lead)
        .def("trail", &sar_focus::trail)
        .def("stride", &sar_focus::stride)
        .def("blocks", &sar_focus::blocks)
        .def("restarts", &sar_focus::restarts)
        .def("mismatched_tags", &sar_focus::mismatched_tags)
        .def("failed_blocks", &sar_focus::failed_blocks)
        .def("algorithm", &sar_focus::algorithm)
        .def("backend", &sar_focus::backend)
        .def("device", &sar_focus::device);
}
