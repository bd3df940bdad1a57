/* SPDX-License-Identifier: GPL-3.0-or-later */
#include <gnuradio/gpuradar/stripmap_source.h>
#include <pybind11/complex.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace py = pybind11;

void bind_stripmap_source(py::module& m)
{
    using gr::gpuradar::stripmap_source;
    const stripmap_source::params defaults;
    py::class_<stripmap_source,
               gr::sync_block,
               gr::block,
               gr::basic_block,
               std::shared_ptr<stripmap_source>>(
        m,
        "stripmap_source",
        "Simulated raw stripmap SAR echoes, one pulse (nrange complex) per item, point "
        "targets, an optional distributed scene, plus noise; a `stripmap` tag on item 0 "
        "holds the acquisition (see C++ "
        "docs).")
        // The flat make() (GRC's and Python's argument list), not make(const params&).
        .def(py::init(py::overload_cast<double,
                                        double,
                                        double,
                                        bool,
                                        double,
                                        double,
                                        double,
                                        double,
                                        double,
                                        unsigned int,
                                        double,
                                        double,
                                        const std::vector<double>&,
                                        const std::vector<double>&,
                                        const std::vector<double>&,
                                        const std::vector<double>&,
                                        double,
                                        double,
                                        std::uint64_t,
                                        std::uint32_t,
                                        const std::vector<gr_complex>&,
                                        unsigned int,
                                        double,
                                        double,
                                        double,
                                        double,
                                        double,
                                        double,
                                        double,
                                        double,
                                        double,
                                        double,
                                        double,
                                        double,
                                        double,
                                        double,
                                        std::uint32_t>(&stripmap_source::make)),
             py::arg("fc"),
             py::arg("bandwidth"),
             py::arg("pulse_width"),
             py::arg("up_chirp"),
             py::arg("fs"),
             py::arg("prf"),
             py::arg("velocity"),
             py::arg("altitude"),
             py::arg("near_range"),
             py::arg("nrange"),
             py::arg("squint"),
             py::arg("antenna_length"),
             py::arg("target_x"),
             py::arg("target_y"),
             py::arg("target_z") = defaults.target_z,
             py::arg("target_amplitude") = defaults.target_amplitude,
             py::arg("noise_sigma") = defaults.noise_sigma,
             py::arg("first_pulse_y") = defaults.first_pulse_y,
             py::arg("max_pulses") = defaults.max_pulses,
             py::arg("seed") = defaults.seed,
             py::arg("scene_reflectivity") = defaults.scene_reflectivity,
             py::arg("scene_nx") = defaults.scene_nx,
             py::arg("scene_x0") = defaults.scene_x0,
             py::arg("scene_y0") = defaults.scene_y0,
             py::arg("scene_spacing") = defaults.scene_spacing,
             py::arg("motion_velocity_error") = defaults.motion_velocity_error,
             py::arg("cross_track_amplitude") = defaults.cross_track_amplitude,
             py::arg("cross_track_period") = defaults.cross_track_period,
             py::arg("cross_track_phase") = defaults.cross_track_phase,
             py::arg("cross_track_walk") = defaults.cross_track_walk,
             py::arg("cross_track_noise") = defaults.cross_track_noise,
             py::arg("vertical_amplitude") = defaults.vertical_amplitude,
             py::arg("vertical_period") = defaults.vertical_period,
             py::arg("vertical_phase") = defaults.vertical_phase,
             py::arg("vertical_walk") = defaults.vertical_walk,
             py::arg("vertical_noise") = defaults.vertical_noise,
             py::arg("motion_seed") = defaults.motion_seed)
        .def("far_aperture_pulses", &stripmap_source::far_aperture_pulses)
        .def("pulses", &stripmap_source::pulses);
}
