/* SPDX-License-Identifier: GPL-3.0-or-later */
#include <gnuradio/gpuradar/beamformer.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace py = pybind11;

void bind_beamformer(py::module& m)
{
    using gr::gpuradar::beamformer;
    py::class_<beamformer,
               gr::sync_block,
               gr::block,
               gr::basic_block,
               std::shared_ptr<beamformer>>(
        m,
        "beamformer",
        "Digital beamformer: channel-major array items in, beam-major items out (see C++ "
        "docs).")
        .def(py::init(&beamformer::make),
             py::arg("nchannels"),
             py::arg("nsamples"),
             py::arg("beam_angles_deg") = std::vector<double>(),
             py::arg("nbeams") = 16,
             py::arg("fan_first_deg") = -45.0,
             py::arg("fan_last_deg") = 45.0,
             py::arg("element_spacing_wl") = 0.5,
             py::arg("element_positions_m") = std::vector<double>(),
             py::arg("fc") = 0.0,
             py::arg("window") = "taylor",
             py::arg("nbar") = 4,
             py::arg("sll_db") = 35.0,
             py::arg("beta") = 6.0,
             py::arg("backend") = "auto",
             py::arg("beam_elevations_deg") = std::vector<double>(),
             py::arg("nbeams_el") = 1,
             py::arg("fan_el_first_deg") = 0.0,
             py::arg("fan_el_last_deg") = 0.0,
             py::arg("element_rows") = 1,
             py::arg("device") = 0,
             py::arg("input_type") = "fc32")
        .def("beam_angles_deg", &beamformer::beam_angles_deg)
        .def("beam_elevations_deg", &beamformer::beam_elevations_deg)
        .def("backend", &beamformer::backend)
        .def("device", &beamformer::device);
}
