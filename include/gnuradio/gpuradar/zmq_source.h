/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_GPURADAR_ZMQ_SOURCE_H
#define INCLUDED_GPURADAR_ZMQ_SOURCE_H

#include <gnuradio/gpuradar/api.h>
#include <gnuradio/sync_block.h>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

namespace gr {
namespace gpuradar {

/*!
 * \brief Receives the stream of a GNU Radio zmq_push_sink or zmq_pub_sink, surviving
 * whatever arrives instead.
 * \ingroup gpuradar
 *
 * Accepts the messages of gr-zeromq's sinks, with the tag header (pass_tags) or without;
 * tags come out on the items they were sent on. A message that is empty, larger than
 * max_message_bytes, not a whole number of items, or whose tag header is truncated, has a
 * bad magic or version, claims more tags than it can hold, or carries malformed or
 * unbounded PMTs is dropped whole and counted by reason (drop_counts()), with one warning
 * per second at most; the flowgraph keeps running and items stay whole. Memory is bounded
 * by max_message_bytes: libzmq refuses larger messages on tcp and ipc before they are
 * buffered by closing that connection; a connecting source then reconnects by itself
 * (reconnects()), a binding one waits for the sender to reconnect.
 *
 * Security: use ipc:// endpoints in a directory only the user can enter (a warning is
 * logged when the directory is open to others) on one host; across hosts, CURVE: the
 * source connects as a CURVE client with curve_server_key (the sender's public key) and
 * its own curve_secret_key, so only the holder of the server's secret key can feed it.
 *
 * An SDR's integers over the network: with input_type sc16 / sc8 the sender's items are
 * vlen interleaved int16 / int8 complex samples (a zmq sink after a UHD / Soapy source
 * with cpu_format sc16 / sc8: half or a quarter of the fc32 bytes on the wire) and the
 * source outputs gr_complex, converted with VOLK at 1.0 = full scale (x / 32768, x /
 * 128); itemsize must then be 8. To keep the integers as far as the GPU instead, take
 * them as they are (input_type fc32, itemsize 4 or 2) into a block whose input_type is
 * sc16 / sc8. The default fc32 passes items of any type through unchanged, as before.
 */
class GPURADAR_API zmq_source : virtual public gr::sync_block
{
public:
    typedef std::shared_ptr<zmq_source> sptr;

    /*!
     * \param itemsize          bytes per sample (8 for gr_complex)
     * \param vlen              samples per item (>= 1)
     * \param address           tcp://, ipc:// or inproc:// endpoint
     * \param socket_type       "pull" (from zmq_push_sink) or "sub" (from zmq_pub_sink)
     * \param bind              bind the address (true) or connect to it (false)
     * \param pass_tags         messages carry gr-zeromq's tag header
     * \param timeout_ms        longest wait for a message in one call of work (1..10000)
     * \param max_message_bytes largest message accepted (itemsize*vlen .. 2^31)
     * \param hwm               receive high-water mark in messages (-1: libzmq default)
     * \param topic             SUB subscription / the key of a keyed pub sink ("" none)
     * \param curve_server_key  Z85 public key of the CURVE server to connect to ("": off)
     * \param curve_secret_key  Z85 secret key of this client (with curve_server_key)
     * \param input_type        what the wire carries: "fc32" (items as they are, any
     *                          itemsize), "sc16" or "sc8" (vlen integer complex samples
     *                          per item, output as gr_complex; itemsize 8)
     */
    static sptr make(std::size_t itemsize,
                     unsigned int vlen,
                     const std::string& address,
                     const std::string& socket_type = "pull",
                     bool bind = false,
                     bool pass_tags = true,
                     int timeout_ms = 100,
                     std::size_t max_message_bytes = std::size_t(64) << 20,
                     int hwm = -1,
                     const std::string& topic = "",
                     const std::string& curve_server_key = "",
                     const std::string& curve_secret_key = "",
                     const std::string& input_type = "fc32");

    //! Messages accepted (their items were or will be output).
    virtual std::uint64_t received_messages() const = 0;
    //! Items output.
    virtual std::uint64_t received_items() const = 0;
    //! Messages dropped, all reasons together.
    virtual std::uint64_t dropped_messages() const = 0;
    //! Dropped messages by reason: empty, oversized, truncated_header, bad_magic,
    //! bad_version, too_many_tags, bad_tag, partial_item, bad_framing.
    virtual std::map<std::string, std::uint64_t> drop_counts() const = 0;
    //! Tags of accepted messages dropped because they lay outside the message's items.
    virtual std::uint64_t dropped_tags() const = 0;
    //! Times a connecting source re-established a connection libzmq had given up: after a
    //! message over max_message_bytes (libzmq closes that connection) or a protocol
    //! error.
    virtual std::uint64_t reconnects() const = 0;
    //! The endpoint actually bound or connected (resolves tcp port 0 when binding).
    virtual std::string last_endpoint() const = 0;
};

} // namespace gpuradar
} // namespace gr

#endif
