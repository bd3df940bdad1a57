/* SPDX-License-Identifier: GPL-3.0-or-later */
#include <gnuradio/gpuradar/radar_channel.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace py = pybind11;

void bind_radar_channel(py::module& m)
{
    using gr::gpuradar::radar_channel;
    py::class_<radar_channel,
               gr::sync_block,
               gr::block,
               gr::basic_block,
               std::shared_ptr<radar_channel>>(
        m,
        "radar_channel",
        "Radar propagation channel: delayed, Doppler-shifted target echoes of the "
        "transmit "
        "stream, leakage and noise (see C++ docs).")
        .def(py::init(&radar_channel::make),
             py::arg("samp_rate"),
             py::arg("fc"),
             py::arg("ranges") = std::vector<double>(),
             py::arg("velocities") = std::vector<double>(),
             py::arg("amplitudes") = std::vector<double>(),
             py::arg("amplitude_unit") = "snr_db",
             py::arg("radar_constant_db") = 200.0,
             py::arg("tx_power") = 0.25,
             py::arg("noise_power") = 1.0,
             py::arg("leakage_amplitude") = 0.0,
             py::arg("system_delay") = 0,
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
             py::arg("clock_offset_ppm") = 0.0)
        .def("echo_amplitudes", &radar_channel::echo_amplitudes)
        .def("adc_clipped", &radar_channel::adc_clipped);
}
