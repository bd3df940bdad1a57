/* SPDX-License-Identifier: GPL-3.0-or-later */
#include <gnuradio/gpuradar/multiply_const.h>
#include <pybind11/complex.h>
#include <pybind11/pybind11.h>

namespace py = pybind11;

void bind_multiply_const(py::module& m)
{
    using gr::gpuradar::multiply_const;
    py::class_<multiply_const,
               gr::sync_block,
               gr::block,
               gr::basic_block,
               std::shared_ptr<multiply_const>>(
        m, "multiply_const", "Complex gain on complex vectors, settable while running.")
        .def(py::init(&multiply_const::make),
             py::arg("k"),
             py::arg("vlen") = 1,
             py::arg("backend") = "auto",
             py::arg("device") = 0)
        .def("k", &multiply_const::k)
        .def("set_k", &multiply_const::set_k, py::arg("k"))
        .def("backend", &multiply_const::backend)
        .def("device", &multiply_const::device);
}
