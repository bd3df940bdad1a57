/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "zmq_connection_watch.h"
#include <cstdint>
#include <cstring>
#include <string>

namespace gr {
namespace gpuradar {

namespace {

constexpr int watched_events = ZMQ_EVENT_CONNECTED | ZMQ_EVENT_CONNECT_DELAYED |
                               ZMQ_EVENT_CONNECT_RETRIED | ZMQ_EVENT_DISCONNECTED;

std::string monitor_endpoint(const void* owner)
{
    return "inproc://gpuradar-zmq-monitor-" +
           std::to_string(reinterpret_cast<std::uintptr_t>(owner));
}

} // namespace

zmq_connection_watch::zmq_connection_watch(zmq::context_t& context, zmq::socket_t& socket)
    : d_monitor(context, ZMQ_PAIR)
{
    const std::string endpoint = monitor_endpoint(this);
    if (zmq_socket_monitor(socket.handle(), endpoint.c_str(), watched_events) != 0)
        throw zmq::error_t();
    d_monitor.set(zmq::sockopt::linger, 0);
    d_monitor.connect(endpoint);
}

bool zmq_connection_watch::given_up(clock::duration grace)
{
    // Each event: a frame of u16 event id + u32 value, then a frame with the endpoint.
    zmq::message_t frame;
    while (d_monitor.recv(frame, zmq::recv_flags::dontwait)) {
        std::uint16_t event = 0;
        if (frame.size() >= sizeof event)
            std::memcpy(&event, frame.data(), sizeof event);
        while (frame.more() && d_monitor.recv(frame, zmq::recv_flags::dontwait)) {
        }
        if (event == ZMQ_EVENT_DISCONNECTED)
            d_disconnected_at = clock::now();
        else
            d_disconnected_at.reset(); // libzmq is connecting again by itself
    }
    if (!d_disconnected_at || clock::now() - *d_disconnected_at < grace)
        return false;
    d_disconnected_at.reset();
    return true;
}

} // namespace gpuradar
} // namespace gr
