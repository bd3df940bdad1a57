/* SPDX-License-Identifier: GPL-3.0-or-later */
#include <gpuradar/kernels/common/window.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace py = pybind11;

void bind_window(py::module& m)
{
    namespace k = gpuradar::kernels;
    m.def(
        "window_coefficients",
        [](const std::string& name, std::size_t n) {
            return k::window_coefficients(k::window_spec::make(name), n);
        },
        py::arg("name"),
        py::arg("n"),
        "The n coefficients of the window the blocks use under this name (default "
        "parameters: taylor nbar 4 / 35 dB, kaiser beta 6, chebyshev 35 dB), e.g. for "
        "the "
        "theoretical impulse response of a focused image.");
}
