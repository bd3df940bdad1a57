/* SPDX-License-Identifier: GPL-3.0-or-later */
#include <gnuradio/gpuradar/pulse_framer.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace py = pybind11;

void bind_pulse_framer(py::module& m)
{
    using gr::gpuradar::pulse_framer;
    py::class_<pulse_framer, gr::block, gr::basic_block, std::shared_ptr<pulse_framer>>(
        m,
        "pulse_framer",
        "Pulse framer: continuous complex stream -> pulse stream of whole CPIs with cpi "
        "tags (see C++ docs).")
        .def(py::init(&pulse_framer::make),
             py::arg("pri_samples"),
             py::arg("gate_start"),
             py::arg("nrange"),
             py::arg("npulses"),
             py::arg("fs"),
             py::arg("fc"),
             py::arg("trigger") = "rx_time",
             py::arg("trigger_tag") = "trigger",
             py::arg("threshold") = 0.0,
             py::arg("backend") = "auto",
             py::arg("device") = 0,
             py::arg("input_type") = "fc32",
             py::arg("dc_removal") = "off",
             py::arg("dc_time_constant") = 16.0,
             py::arg("iq_correction") = false,
             py::arg("leakage") = "off",
             py::arg("leakage_alpha") = 0.1,
             py::arg("leakage_gate") = 0)
        .def("set_threshold", &pulse_framer::set_threshold, py::arg("threshold"))
        .def("dropped_cpis", &pulse_framer::dropped_cpis)
        .def("emitted_cpis", &pulse_framer::emitted_cpis)
        .def("input_type", &pulse_framer::input_type)
        .def("lost_samples", &pulse_framer::lost_samples)
        .def("rejected_time_jumps", &pulse_framer::rejected_time_jumps)
        .def("nonfinite_samples", &pulse_framer::nonfinite_samples)
        .def("clamped_samples", &pulse_framer::clamped_samples)
        .def("saturated_samples", &pulse_framer::saturated_samples)
        .def("clock_offset_ppm", &pulse_framer::clock_offset_ppm)
        .def("iq_uncorrected_cpis", &pulse_framer::iq_uncorrected_cpis)
        .def("prf", &pulse_framer::prf)
        .def("r0", &pulse_framer::r0)
        .def("backend", &pulse_framer::backend)
        .def("device", &pulse_framer::device);
}
