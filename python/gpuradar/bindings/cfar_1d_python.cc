/* SPDX-License-Identifier: GPL-3.0-or-later */
#include <gnuradio/gpuradar/cfar_1d.h>
#include <pybind11/pybind11.h>

namespace py = pybind11;

void bind_cfar_1d(py::module& m)
{
    using gr::gpuradar::cfar_1d;
    py::class_<cfar_1d, gr::block, gr::basic_block, std::shared_ptr<cfar_1d>>(
        m,
        "cfar_1d",
        "Range-only CFAR (ca, go, so, os): mask output, optional threshold output, "
        "`detections` message port (one PDU per items_per_cpi items). See the C++ docs.")
        .def(py::init(&cfar_1d::make),
             py::arg("nrange"),
             py::arg("channels") = 1,
             py::arg("guard") = 1,
             py::arg("train") = 8,
             py::arg("pfa") = 1e-6,
             py::arg("variant") = "ca",
             py::arg("os_k") = 0,
             py::arg("edge") = "clip",
             py::arg("local_max_only") = false,
             py::arg("items_per_cpi") = 1,
             py::arg("max_detections") = 4096,
             py::arg("backend") = "auto",
             py::arg("device") = 0)
        .def("set_pfa", &cfar_1d::set_pfa, py::arg("pfa"))
        .def("set_variant", &cfar_1d::set_variant, py::arg("variant"))
        .def("set_guard", &cfar_1d::set_guard, py::arg("guard"))
        .def("set_train", &cfar_1d::set_train, py::arg("train"))
        .def("dropped_cpis", &cfar_1d::dropped_cpis)
        .def("nonfinite_cells", &cfar_1d::nonfinite_cells)
        .def("overflowed_cpis", &cfar_1d::overflowed_cpis)
        .def("training_cells", &cfar_1d::training_cells)
        .def("alpha", &cfar_1d::alpha)
        .def("os_k", &cfar_1d::os_k)
        .def("backend", &cfar_1d::backend)
        .def("device", &cfar_1d::device);
}
