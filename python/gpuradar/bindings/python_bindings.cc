/*
 * pybind11 module gnuradio.gpuradar.gpuradar_python. Each block has its own
 * <name>_python.cc with a bind_<name>() function; add one line per block below.
 * Python names equal the C++ names. std::invalid_argument becomes ValueError and
 * kernels::cuda_error (a std::runtime_error) RuntimeError.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <pybind11/pybind11.h>

namespace py = pybind11;

void bind_corner_turn(py::module& m);
void bind_device_buffer(py::module& m);
void bind_envelope(py::module& m);
void bind_multiply_const(py::module& m);

PYBIND11_MODULE(gpuradar_python, m)
{
    // The block base classes (gr.sync_block, ...) are bound by gnuradio.gr.
    py::module::import("gnuradio.gr");

    bind_corner_turn(m);
    bind_device_buffer(m);
    bind_envelope(m);
    bind_multiply_const(m);
}
