/* SPDX-License-Identifier: GPL-3.0-or-later */
#include <gnuradio/gpuradar/cfar_2d.h>
#include <pybind11/pybind11.h>

namespace py = pybind11;

void bind_cfar_2d(py::module& m)
{
    using gr::gpuradar::cfar_2d;
    py::class_<cfar_2d, gr::block, gr::basic_block, std::shared_ptr<cfar_2d>>(
        m,
        "cfar_2d",
        "2-D CFAR (ca, go, so, os) on a range-Doppler power map: mask output, optional "
        "threshold output, `detections` message port (one PDU per CPI; "
        "gpuradar.detections.pdu_to_dicts reads it). See the C++ docs.")
        .def(py::init(&cfar_2d::make),
             py::arg("nrange"),
             py::arg("ndoppler"),
             py::arg("channels") = 1,
             py::arg("guard_range") = 1,
             py::arg("train_range") = 5,
             py::arg("guard_doppler") = 1,
             py::arg("train_doppler") = 1,
             py::arg("pfa") = 1e-6,
             py::arg("variant") = "ca",
             py::arg("os_k") = 0,
             py::arg("range_edge") = "clip",
             py::arg("doppler_edge") = "wrap",
             py::arg("local_max_only") = false,
             py::arg("max_detections") = 4096,
             py::arg("backend") = "auto",
             py::arg("cluster") = false,
             py::arg("angles") = false,
             py::arg("device") = 0)
        .def("set_pfa", &cfar_2d::set_pfa, py::arg("pfa"))
        .def("set_variant", &cfar_2d::set_variant, py::arg("variant"))
        .def("set_guard_range", &cfar_2d::set_guard_range, py::arg("guard_range"))
        .def("set_train_range", &cfar_2d::set_train_range, py::arg("train_range"))
        .def("set_guard_doppler", &cfar_2d::set_guard_doppler, py::arg("guard_doppler"))
        .def("set_train_doppler", &cfar_2d::set_train_doppler, py::arg("train_doppler"))
        .def("dropped_cpis", &cfar_2d::dropped_cpis)
        .def("nonfinite_cells", &cfar_2d::nonfinite_cells)
        .def("overflowed_cpis", &cfar_2d::overflowed_cpis)
        .def("training_cells", &cfar_2d::training_cells)
        .def("alpha", &cfar_2d::alpha)
        .def("os_k", &cfar_2d::os_k)
        .def("backend", &cfar_2d::backend)
        .def("device", &cfar_2d::device);
}
