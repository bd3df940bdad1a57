/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The parsers of messages from outside a block, for property tests from Python: the
 * `waveform` message of the pulse-compressing blocks and gr-zeromq's messages. */
#include "../../../lib/waveform_message.h"
#include "../../../lib/zmq_message.h"
#include <pybind11/complex.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace py = pybind11;

namespace {

// (status, payload offset, whole items, [(offset, key, value)], tags out of range)
py::tuple parse_zmq(py::bytes message, std::size_t item_bytes, bool tagged)
{
    static gr::gpuradar::zmq_symbol_budget symbols;
    const std::string bytes = message;
    const auto m = gr::gpuradar::parse_zmq_message(
        reinterpret_cast<const std::uint8_t*>(bytes.data()),
        bytes.size(),
        item_bytes,
        tagged,
        gr::gpuradar::zmq_message_limits{},
        symbols);
    py::list tags;
    for (const auto& t : m.tags)
        tags.append(py::make_tuple(t.offset, t.key, t.value));
    return py::make_tuple(gr::gpuradar::to_string(m.status),
                          m.payload_offset,
                          m.nitems,
                          tags,
                          m.tags_out_of_range);
}

} // namespace

void bind_message_parsers(py::module& m)
{
    py::module::import("pmt");
    m.def("waveform_from_message",
          &gr::gpuradar::waveform_from_message,
          py::arg("msg"),
          py::arg("samp_rate"),
          "The waveform a `waveform` message asks for (ValueError when it is bad).");
    m.def("parse_zmq_message",
          &parse_zmq,
          py::arg("message"),
          py::arg("item_bytes"),
          py::arg("tagged"),
          "gr-zeromq message -> (status, payload_offset, nitems, [(offset, key, value)], "
          "tags_out_of_range); never raises.");
}
