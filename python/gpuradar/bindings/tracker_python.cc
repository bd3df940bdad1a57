/* SPDX-License-Identifier: GPL-3.0-or-later */
#include <gnuradio/gpuradar/tracker.h>
#include <pybind11/pybind11.h>

namespace py = pybind11;

void bind_tracker(py::module& m)
{
    using gr::gpuradar::tracker;
    py::class_<tracker, gr::block, gr::basic_block, std::shared_ptr<tracker>>(
        m,
        "tracker",
        "Multi-target tracker: `detections` PDUs (cfar_2d, best with cluster=True) in, "
        "`tracks` PDUs out (id, status, state, covariance, time). "
        "gpuradar.detections.pdu_to_python reads them too. See the C++ docs.")
        .def(py::init(&tracker::make),
             py::arg("gate") = 9.21,
             py::arg("confirm_m") = 3,
             py::arg("confirm_n") = 5,
             py::arg("delete_misses") = 3,
             py::arg("range_sigma_m") = 5.0,
             py::arg("velocity_sigma_mps") = 0.5,
             py::arg("acceleration_sigma") = 5.0,
             py::arg("scan_period_s") = 0.0,
             py::arg("max_tracks") = 10000,
             py::arg("azimuth_rate_sigma_dps") = 1.0)
        .def("bad_messages", &tracker::bad_messages)
        .def("scans", &tracker::scans)
        .def("live_tracks", &tracker::live_tracks);
}
