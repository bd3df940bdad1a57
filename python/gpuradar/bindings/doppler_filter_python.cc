/* SPDX-License-Identifier: GPL-3.0-or-later */
#include <gnuradio/gpuradar/doppler_filter.h>
#include <pybind11/pybind11.h>

namespace py = pybind11;

void bind_doppler_filter(py::module& m)
{
    using gr::gpuradar::doppler_filter;
    py::class_<doppler_filter,
               gr::block,
               gr::basic_block,
               std::shared_ptr<doppler_filter>>(
        m,
        "doppler_filter",
        "Doppler filter: MTI, window, FFT over slow time (C++ docs).")
        .def(py::init(&doppler_filter::make),
             py::arg("npulses"),
             py::arg("nrange"),
             py::arg("nfft"),
             py::arg("channels") = 1,
             py::arg("mti") = "none",
             py::arg("window") = "rectangular",
             py::arg("nbar") = 4,
             py::arg("sll_db") = 35.0,
             py::arg("beta") = 6.0,
             py::arg("fftshift") = true,
             py::arg("backend") = "auto",
             py::arg("device") = 0)
        .def("dropped_cpis", &doppler_filter::dropped_cpis)
        .def("backend", &doppler_filter::backend)
        .def("device", &doppler_filter::device);
}
