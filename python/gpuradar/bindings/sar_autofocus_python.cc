/* SPDX-License-Identifier: GPL-3.0-or-later */
#include <gnuradio/gpuradar/sar_autofocus.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace py = pybind11;

void bind_sar_autofocus(py::module& m)
{
    using gr::gpuradar::sar_autofocus;
    py::class_<sar_autofocus,
               gr::sync_block,
               gr::block,
               gr::basic_block,
               std::shared_ptr<sar_autofocus>>(
        m,
        "sar_autofocus",
        "Autofocus of complex SAR images: PGA or minimum entropy (see C++ docs).")
        .def(py::init(&sar_autofocus::make),
             py::arg("nx"),
             py::arg("ny"),
             py::arg("azimuth_axis") = "x",
             py::arg("method") = "pga",
             py::arg("max_iterations") = 50,
             py::arg("tolerance_rad") = 0.01,
             py::arg("min_window") = 8,
             py::arg("backend") = "auto",
             py::arg("device") = 0)
        .def("converged_images", &sar_autofocus::converged_images)
        .def("unconverged_images", &sar_autofocus::unconverged_images)
        .def("backend", &sar_autofocus::backend)
        .def("device", &sar_autofocus::device);
}
