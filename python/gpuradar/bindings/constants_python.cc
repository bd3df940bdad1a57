/* SPDX-License-Identifier: GPL-3.0-or-later */
#include <gpuradar/kernels/common/constants.h>
#include <pybind11/pybind11.h>

namespace py = pybind11;

//! The physical constants the C++ code uses, so that the Python modules use the same.
void bind_constants(py::module& m)
{
    m.attr("speed_of_light") = gpuradar::kernels::speed_of_light;
}
