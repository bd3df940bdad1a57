/*
 * pybind11 module gnuradio.gpuradar.gpuradar_python. Each block has its own
 * <name>_python.cc defining `void bind_<name>(py::module&)`; CMake generates
 * bind_all.h from those file names, so a new block needs no edit here.
 * Python names equal the C++ names. std::invalid_argument becomes ValueError and
 * kernels::cuda_error (a std::runtime_error) RuntimeError.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <pybind11/pybind11.h>

namespace py = pybind11;

#include "bind_all.h" // declares every bind_<name> and defines bind_all(m)

PYBIND11_MODULE(gpuradar_python, m)
{
    // The block base classes (gr.sync_block, ...) are bound by gnuradio.gr.
    py::module::import("gnuradio.gr");
    bind_all(m);
}
