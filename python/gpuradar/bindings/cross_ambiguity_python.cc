/* SPDX-License-Identifier: GPL-3.0-or-later */
#include <gnuradio/gpuradar/cross_ambiguity.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace py = pybind11;

void bind_cross_ambiguity(py::module& m)
{
    using gr::gpuradar::cross_ambiguity;
    py::class_<cross_ambiguity,
               gr::block,
               gr::basic_block,
               std::shared_ptr<cross_ambiguity>>(
        m,
        "cross_ambiguity",
        "Passive radar: cross-ambiguity map of surveillance against reference (C++ "
        "docs).")
        .def(py::init(&cross_ambiguity::make),
             py::arg("fs"),
             py::arg("fc"),
             py::arg("nsamples"),
             py::arg("nrange"),
             py::arg("doppler_half"),
             py::arg("method") = "auto",
             py::arg("batch_length") = 0,
             py::arg("window") = "hann",
             py::arg("db") = false,
             py::arg("backend") = "auto",
             py::arg("device") = 0)
        .def("method", &cross_ambiguity::method)
        .def("rate_mismatch_cpis", &cross_ambiguity::rate_mismatch_cpis)
        .def("backend", &cross_ambiguity::backend)
        .def("device", &cross_ambiguity::device);
}
