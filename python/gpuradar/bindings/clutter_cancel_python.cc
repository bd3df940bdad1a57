/* SPDX-License-Identifier: GPL-3.0-or-later */
#include <gnuradio/gpuradar/clutter_cancel.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace py = pybind11;

void bind_clutter_cancel(py::module& m)
{
    using gr::gpuradar::clutter_cancel;
    py::class_<clutter_cancel,
               gr::sync_block,
               gr::block,
               gr::basic_block,
               std::shared_ptr<clutter_cancel>>(
        m,
        "clutter_cancel",
        "Passive radar: direct-path and clutter cancellation (ECA-B or NLMS) of the "
        "surveillance channels against the reference (C++ docs).")
        .def(py::init(&clutter_cancel::make),
             py::arg("nsamples"),
             py::arg("ntaps"),
             py::arg("nbatches") = 1,
             py::arg("method") = "eca_b",
             py::arg("nsurv") = 1,
             py::arg("doppler_taps") = false,
             py::arg("diagonal_loading") = 0.0,
             py::arg("nlms_step") = 0.1,
             py::arg("nlms_block") = 64,
             py::arg("backend") = "auto",
             py::arg("device") = 0)
        .def("cancellation_db", &clutter_cancel::cancellation_db)
        .def("cpis", &clutter_cancel::cpis)
        .def("rate_mismatch_cpis", &clutter_cancel::rate_mismatch_cpis)
        .def("method", &clutter_cancel::method)
        .def("backend", &clutter_cancel::backend)
        .def("device", &clutter_cancel::device);
}
