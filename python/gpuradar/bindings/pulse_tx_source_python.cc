/* SPDX-License-Identifier: GPL-3.0-or-later */
#include <gnuradio/gpuradar/pulse_tx_source.h>
#include <pybind11/complex.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace py = pybind11;

void bind_pulse_tx_source(py::module& m)
{
    using gr::gpuradar::pulse_tx_source;
    py::class_<pulse_tx_source,
               gr::sync_block,
               gr::block,
               gr::basic_block,
               std::shared_ptr<pulse_tx_source>>(
        m,
        "pulse_tx_source",
        "Transmit waveform as timed bursts at the PRF with UHD's tx_sob / tx_eob / "
        "tx_time "
        "tags (see C++ docs).")
        .def(py::init(&pulse_tx_source::make),
             py::arg("waveform"),
             py::arg("custom_waveform"),
             py::arg("bandwidth"),
             py::arg("pulse_width"),
             py::arg("samp_rate"),
             py::arg("up_chirp"),
             py::arg("prf"),
             py::arg("amplitude") = 0.5,
             py::arg("burst_mode") = "cpi",
             py::arg("npulses") = 64,
             py::arg("nbursts") = 0,
             py::arg("start_time") = 0.0,
             py::arg("time_reference") = "device")
        .def("pulse", &pulse_tx_source::pulse)
        .def("pri_samples", &pulse_tx_source::pri_samples)
        .def("bursts_sent", &pulse_tx_source::bursts_sent);
}
