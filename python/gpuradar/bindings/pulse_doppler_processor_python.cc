/* SPDX-License-Identifier: GPL-3.0-or-later */
#include <gnuradio/gpuradar/pulse_doppler_processor.h>
#include <pybind11/complex.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace py = pybind11;

void bind_pulse_doppler_processor(py::module& m)
{
    using gr::gpuradar::pulse_doppler_processor;
    py::class_<pulse_doppler_processor,
               gr::block,
               gr::basic_block,
               std::shared_ptr<pulse_doppler_processor>>(
        m,
        "pulse_doppler_processor",
        "pulse_compression -> corner_turn -> doppler_filter -> envelope (C++ docs).")
        .def(py::init(&pulse_doppler_processor::make),
             py::arg("nrange"),
             py::arg("npulses"),
             py::arg("nfft"),
             py::arg("channels") = 1,
             py::arg("waveform") = "lfm",
             py::arg("custom_waveform") = std::vector<gr_complex>(),
             py::arg("bandwidth") = 5e6,
             py::arg("pulse_width") = 10e-6,
             py::arg("samp_rate") = 10e6,
             py::arg("up_chirp") = true,
             py::arg("range_window") = "rectangular",
             py::arg("range_nbar") = 4,
             py::arg("range_sll_db") = 35.0,
             py::arg("range_beta") = 6.0,
             py::arg("normalize") = false,
             py::arg("method") = "auto",
             py::arg("mti") = "none",
             py::arg("doppler_window") = "rectangular",
             py::arg("doppler_nbar") = 4,
             py::arg("doppler_sll_db") = 35.0,
             py::arg("doppler_beta") = 6.0,
             py::arg("fftshift") = true,
             py::arg("envelope_mode") = "square_law",
             py::arg("db") = false,
             py::arg("backend") = "auto",
             py::arg("tap_every") = 0,
             py::arg("device") = 0)
        .def("set_waveform", &pulse_doppler_processor::set_waveform, py::arg("waveform"))
        .def("set_mti", &pulse_doppler_processor::set_mti, py::arg("mti"))
        .def("set_range_window",
             &pulse_doppler_processor::set_range_window,
             py::arg("window"),
             py::arg("nbar") = 4,
             py::arg("sll_db") = 35.0,
             py::arg("beta") = 6.0)
        .def("set_doppler_window",
             &pulse_doppler_processor::set_doppler_window,
             py::arg("window"),
             py::arg("nbar") = 4,
             py::arg("sll_db") = 35.0,
             py::arg("beta") = 6.0)
        .def("set_db", &pulse_doppler_processor::set_db, py::arg("db"))
        .def("dropped_cpis", &pulse_doppler_processor::dropped_cpis)
        .def("implementation", &pulse_doppler_processor::implementation)
        .def("backend", &pulse_doppler_processor::backend)
        .def("device", &pulse_doppler_processor::device);
}
