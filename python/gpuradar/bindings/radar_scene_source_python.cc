/* SPDX-License-Identifier: GPL-3.0-or-later */
#include <gnuradio/gpuradar/radar_scene_source.h>
#include <pybind11/complex.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace py = pybind11;

void bind_radar_scene_source(py::module& m)
{
    using gr::gpuradar::radar_scene_source;
    py::class_<radar_scene_source,
               gr::sync_block,
               gr::block,
               gr::basic_block,
               std::shared_ptr<radar_scene_source>>(
        m,
        "radar_scene_source",
        "Simulated pulsed-radar receive stream: targets, clutter, leakage, noise; truth "
        "on the 'truth' message port (see C++ docs).")
        .def(py::init(&radar_scene_source::make),
             py::arg("fs"),
             py::arg("fc"),
             py::arg("prf"),
             py::arg("bandwidth"),
             py::arg("pulse_width"),
             py::arg("waveform") = std::vector<gr_complex>(),
             py::arg("ranges") = std::vector<double>(),
             py::arg("velocities") = std::vector<double>(),
             py::arg("amplitudes") = std::vector<double>(),
             py::arg("amplitude_unit") = "snr_db",
             py::arg("radar_constant_db") = 200.0,
             py::arg("noise_power") = 1.0,
             py::arg("leakage_amplitude") = 0.0,
             py::arg("clutter_cnr_db") = 20.0,
             py::arg("clutter_start_m") = 0.0,
             py::arg("clutter_stop_m") = 0.0,
             py::arg("paced") = false,
             py::arg("truth_every") = 0,
             py::arg("start_time") = 0.0,
             py::arg("seed") = 1,
             py::arg("azimuths_deg") = std::vector<double>(),
             py::arg("nchannels") = 1,
             py::arg("element_spacing_wl") = 0.5,
             py::arg("element_positions_m") = std::vector<double>(),
             py::arg("channel_gain_db") = std::vector<double>(),
             py::arg("channel_phase_deg") = std::vector<double>(),
             py::arg("elevations_deg") = std::vector<double>(),
             py::arg("dc_offset_i") = 0.0,
             py::arg("dc_offset_q") = 0.0,
             py::arg("iq_gain_db") = 0.0,
             py::arg("iq_phase_deg") = 0.0,
             py::arg("phase_noise_linewidth_hz") = 0.0,
             py::arg("adc_bits") = 0,
             py::arg("adc_full_scale") = 1.0,
             py::arg("clock_offset_ppm") = 0.0,
             py::arg("leakage_delay") = 0)
        .def("set_targets",
             &radar_scene_source::set_targets,
             py::arg("ranges"),
             py::arg("velocities"),
             py::arg("amplitudes"),
             py::arg("azimuths_deg") = std::vector<double>(),
             py::arg("elevations_deg") = std::vector<double>())
        .def("set_noise_power",
             &radar_scene_source::set_noise_power,
             py::arg("noise_power"))
        .def("waveform", &radar_scene_source::waveform)
        .def("pri_samples", &radar_scene_source::pri_samples)
        .def("snr_db", &radar_scene_source::snr_db)
        .def("adc_clipped", &radar_scene_source::adc_clipped);
}
