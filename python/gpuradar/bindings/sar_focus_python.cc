/* SPDX-License-Identifier: GPL-3.0-or-later */
#include <gnuradio/gpuradar/sar_focus.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace py = pybind11;

void bind_sar_focus(py::module& m)
{
    using gr::gpuradar::sar_focus;
    const sar_focus::params defaults;
    py::class_<sar_focus, gr::block, gr::basic_block, std::shared_ptr<sar_focus>>(
        m,
        "sar_focus",
        "Stripmap SAR focusing (chirp scaling) of a continuous pulse stream in "
        "overlapping azimuth blocks: raw pulses in, focused azimuth lines out, one per "
        "item (see C++ docs).")
        // The flat make() (GRC's and Python's argument list), not make(const params&).
        .def(py::init(py::overload_cast<double,
                                        double,
                                        double,
                                        bool,
                                        double,
                                        double,
                                        double,
                                        double,
                                        double,
                                        unsigned int,
                                        double,
                                        double,
                                        const std::string&,
                                        unsigned int,
                                        const std::string&,
                                        const std::string&,
                                        const std::string&,
                                        int>(&sar_focus::make)),
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
             py::arg("algorithm") = defaults.algorithm,
             py::arg("naz") = defaults.naz,
             py::arg("range_window") = defaults.range_window,
             py::arg("azimuth_window") = defaults.azimuth_window,
             py::arg("backend") = defaults.backend,
             py::arg("device") = defaults.device)
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
