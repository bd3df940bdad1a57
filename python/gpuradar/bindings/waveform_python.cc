/* SPDX-License-Identifier: GPL-3.0-or-later */
#include <gpuradar/kernels/waveform/waveform.h>
#include <pybind11/complex.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace py = pybind11;

void bind_waveform(py::module& m)
{
    namespace k = gpuradar::kernels;
    m.attr("waveform_codes") = k::waveform_codes;
    m.def(
        "make_waveform",
        [](const std::string& code,
           double bandwidth,
           double pulse_width,
           double samp_rate,
           bool up_chirp) {
            return k::make_waveform(code, bandwidth, pulse_width, samp_rate, up_chirp);
        },
        py::arg("code"),
        py::arg("bandwidth"),
        py::arg("pulse_width"),
        py::arg("samp_rate"),
        py::arg("up_chirp") = true,
        "The transmit pulse named by code (lfm, barker:N, frank:N, p4:N; unit "
        "amplitude), "
        "as pulse_compression and pulse_tx_source make it: e.g. for radar_scene_source's "
        "waveform parameter.");
}
