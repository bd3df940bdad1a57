/* SPDX-License-Identifier: GPL-3.0-or-later */
#include <gnuradio/gpuradar/pulse_compression.h>
#include <pybind11/complex.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace py = pybind11;

void bind_pulse_compression(py::module& m)
{
    using gr::gpuradar::pulse_compression;
    py::class_<pulse_compression,
               gr::block,
               gr::basic_block,
               std::shared_ptr<pulse_compression>>(
        m, "pulse_compression", "Pulse compression (matched filter), see the C++ docs.")
        .def(py::init(&pulse_compression::make),
             py::arg("nrange"),
             py::arg("npulses"),
             py::arg("channels") = 1,
             py::arg("waveform") = "lfm",
             py::arg("custom_waveform") = std::vector<gr_complex>(),
             py::arg("bandwidth") = 5e6,
             py::arg("pulse_width") = 10e-6,
             py::arg("samp_rate") = 10e6,
             py::arg("up_chirp") = true,
             py::arg("window") = "rectangular",
             py::arg("nbar") = 4,
             py::arg("sll_db") = 35.0,
             py::arg("beta") = 6.0,
             py::arg("normalize") = false,
             py::arg("method") = "auto",
             py::arg("backend") = "auto",
             py::arg("device") = 0,
             py::arg("input_type") = "fc32")
        .def("set_waveform", &pulse_compression::set_waveform, py::arg("waveform"))
        .def("waveform", &pulse_compression::waveform)
        .def("method", &pulse_compression::method)
        .def("fft_length", &pulse_compression::fft_length)
        .def("dropped_cpis", &pulse_compression::dropped_cpis)
        .def("backend", &pulse_compression::backend)
        .def("device", &pulse_compression::device);
}
