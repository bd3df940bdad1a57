/* SPDX-License-Identifier: GPL-3.0-or-later */
#include <gnuradio/gpuradar/zmq_source.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace py = pybind11;

void bind_zmq_source(py::module& m)
{
    using gr::gpuradar::zmq_source;
    py::class_<zmq_source,
               gr::sync_block,
               gr::block,
               gr::basic_block,
               std::shared_ptr<zmq_source>>(
        m,
        "zmq_source",
        "Receives a gr-zeromq push/pub sink's stream; malformed messages are counted and "
        "dropped.")
        .def(py::init(&zmq_source::make),
             py::arg("itemsize"),
             py::arg("vlen"),
             py::arg("address"),
             py::arg("socket_type") = "pull",
             py::arg("bind") = false,
             py::arg("pass_tags") = true,
             py::arg("timeout_ms") = 100,
             py::arg("max_message_bytes") = std::size_t(64) << 20,
             py::arg("hwm") = -1,
             py::arg("topic") = "",
             py::arg("curve_server_key") = "",
             py::arg("curve_secret_key") = "",
             py::arg("input_type") = "fc32")
        .def("received_messages", &zmq_source::received_messages)
        .def("received_items", &zmq_source::received_items)
        .def("dropped_messages", &zmq_source::dropped_messages)
        .def("drop_counts", &zmq_source::drop_counts)
        .def("dropped_tags", &zmq_source::dropped_tags)
        .def("reconnects", &zmq_source::reconnects)
        .def("last_endpoint", &zmq_source::last_endpoint);
}
