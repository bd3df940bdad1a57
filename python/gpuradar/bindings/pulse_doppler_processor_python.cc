/* SPDX-License-Identifier: GPL-3.0-or-later */
#include <gnuradio/gpuradar/pulse_doppler_processor.h>
#include <pybind11/complex.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace py = pybind11;

void bind_pulse_doppler_processor(py::module& m)
{
    using gr::gpuradar::pulse_doppler_processor;
    const pulse_doppler_processor::params defaults;
    py::class_<pulse_doppler_processor,
               gr::block,
               gr::basic_block,
               std::shared_ptr<pulse_doppler_processor>>(
        m,
        "pulse_doppler_processor",
        "pulse_compression -> corner_turn -> doppler_filter -> envelope (C++ docs).")
        // The flat make() (GRC's and Python's argument list), not make(const params&).
        .def(py::init(
                 py::overload_cast<unsigned int,
                                   unsigned int,
                                   unsigned int,
                                   unsigned int,
                                   const std::string&,
                                   const std::vector<gr_complex>&,
                                   double,
                                   double,
                                   double,
                                   bool,
                                   const std::string&,
                                   int,
                                   double,
                                   double,
                                   bool,
                                   const std::string&,
                                   const std::string&,
                                   const std::string&,
                                   int,
                                   double,
                                   double,
                                   bool,
                                   const std::string&,
                                   bool,
                                   const std::string&,
                                   unsigned int,
                                   int,
                                   const std::string&>(&pulse_doppler_processor::make)),
             py::arg("nrange"),
             py::arg("npulses"),
             py::arg("nfft"),
             py::arg("channels") = defaults.channels,
             py::arg("waveform") = defaults.waveform,
             py::arg("custom_waveform") = defaults.custom_waveform,
             py::arg("bandwidth") = defaults.bandwidth,
             py::arg("pulse_width") = defaults.pulse_width,
             py::arg("samp_rate") = defaults.samp_rate,
             py::arg("up_chirp") = defaults.up_chirp,
             py::arg("range_window") = defaults.range_window,
             py::arg("range_nbar") = defaults.range_nbar,
             py::arg("range_sll_db") = defaults.range_sll_db,
             py::arg("range_beta") = defaults.range_beta,
             py::arg("normalize") = defaults.normalize,
             py::arg("method") = defaults.method,
             py::arg("mti") = defaults.mti,
             py::arg("doppler_window") = defaults.doppler_window,
             py::arg("doppler_nbar") = defaults.doppler_nbar,
             py::arg("doppler_sll_db") = defaults.doppler_sll_db,
             py::arg("doppler_beta") = defaults.doppler_beta,
             py::arg("fftshift") = defaults.fftshift,
             py::arg("envelope_mode") = defaults.envelope_mode,
             py::arg("db") = defaults.db,
             py::arg("backend") = defaults.backend,
             py::arg("tap_every") = defaults.tap_every,
             py::arg("device") = defaults.device,
             py::arg("input_type") = defaults.input_type)
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
