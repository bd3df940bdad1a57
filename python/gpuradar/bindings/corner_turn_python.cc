/* SPDX-License-Identifier: GPL-3.0-or-later */
#include <gnuradio/gpuradar/corner_turn.h>
#include <pybind11/pybind11.h>

namespace py = pybind11;

void bind_corner_turn(py::module& m)
{
    using gr::gpuradar::corner_turn;
    py::class_<corner_turn, gr::block, gr::basic_block, std::shared_ptr<corner_turn>>(
        m, "corner_turn", "Corner turn: pulse-major CPI to range-major (see C++ docs).")
        .def(py::init(&corner_turn::make),
             py::arg("npulses"),
             py::arg("nrange"),
             py::arg("channels") = 1,
             py::arg("backend") = "auto",
             py::arg("device") = 0)
        .def("dropped_cpis", &corner_turn::dropped_cpis)
        .def("backend", &corner_turn::backend)
        .def("device", &corner_turn::device);
}
