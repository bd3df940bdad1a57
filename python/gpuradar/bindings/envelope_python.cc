/* SPDX-License-Identifier: GPL-3.0-or-later */
#include <gnuradio/gpuradar/envelope.h>
#include <pybind11/complex.h>
#include <pybind11/pybind11.h>

namespace py = pybind11;

void bind_envelope(py::module& m)
{
    using gr::gpuradar::envelope;
    py::class_<envelope,
               gr::sync_block,
               gr::block,
               gr::basic_block,
               std::shared_ptr<envelope>>(
        m,
        "envelope",
        "Envelope detector: |x|^2 or |x|, optionally in dB (see C++ docs).")
        .def(py::init(&envelope::make),
             py::arg("vlen"),
             py::arg("mode") = "square_law",
             py::arg("db") = false,
             py::arg("backend") = "auto",
             py::arg("device") = 0)
        .def("backend", &envelope::backend)
        .def("device", &envelope::device);
}
