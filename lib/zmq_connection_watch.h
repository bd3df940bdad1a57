/* Keeps a connecting ZMQ socket connected (internal to zmq_source).
 *
 * libzmq drops a connection whose peer sends a message over ZMQ_MAXMSGSIZE, or breaks the
 * protocol, and a connecting socket does not come back from that by itself (a lost TCP
 * connection it does retry). This watch reads the socket's monitor events: a disconnect
 * that is not followed by a new connection attempt within a grace period means the
 * connection was given up, and the caller reconnects.
 */
#ifndef INCLUDED_GPURADAR_ZMQ_CONNECTION_WATCH_H
#define INCLUDED_GPURADAR_ZMQ_CONNECTION_WATCH_H

#include <zmq.hpp>
#include <chrono>
#include <optional>

namespace gr {
namespace gpuradar {

class zmq_connection_watch
{
public:
    using clock = std::chrono::steady_clock;

    //! Starts monitoring `socket` (created in `context`).
    zmq_connection_watch(zmq::context_t& context, zmq::socket_t& socket);

    //! Reads pending events; true when the connection was given up for longer than
    //! `grace` (the caller then reconnects, and the watch starts afresh).
    bool given_up(clock::duration grace = std::chrono::milliseconds(300));

private:
    zmq::socket_t d_monitor;
    std::optional<clock::time_point> d_disconnected_at;
};

} // namespace gpuradar
} // namespace gr

#endif
