/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef INCLUDED_GPURADAR_ZMQ_SOURCE_IMPL_H
#define INCLUDED_GPURADAR_ZMQ_SOURCE_IMPL_H

#include "zmq_connection_watch.h"
#include "zmq_message.h"
#include <gnuradio/gpuradar/zmq_source.h>
#include <gpuradar/kernels/common/sample_convert.h>
#include <zmq.hpp>
#include <array>
#include <atomic>
#include <chrono>
#include <memory>

namespace gr {
namespace gpuradar {

//! The parameters of a zmq_source, as make() got them (check_config validates them all
//! before anything is built).
struct zmq_source_config {
    std::size_t itemsize;
    unsigned int vlen;
    std::string address;
    std::string socket_type; // "pull" or "sub"
    bool bind;
    bool pass_tags;
    int timeout_ms;
    std::size_t max_message_bytes;
    int hwm;
    std::string topic;
    std::string curve_server_key;
    std::string curve_secret_key;
    //! What the wire carries: fc32 = the items as they are (itemsize * vlen bytes, any
    //! type); sc16 / sc8 = vlen interleaved int16 / int8 complex samples per item,
    //! converted to gr_complex (itemsize 8).
    kernels::sample_format input = kernels::sample_format::fc32;

    //! Bytes of one output item.
    std::size_t item_bytes() const { return itemsize * vlen; }
    //! Bytes of one item on the wire.
    std::size_t wire_item_bytes() const
    {
        return input == kernels::sample_format::fc32
                   ? item_bytes()
                   : vlen * kernels::sample_bytes(input);
    }
    int zmq_socket_type() const { return socket_type == "sub" ? ZMQ_SUB : ZMQ_PULL; }
};

class zmq_source_impl : public zmq_source
{
public:
    explicit zmq_source_impl(const zmq_source_config& config);

    std::uint64_t received_messages() const override { return d_received_messages; }
    std::uint64_t received_items() const override { return d_received_items; }
    std::uint64_t dropped_messages() const override;
    std::map<std::string, std::uint64_t> drop_counts() const override;
    std::uint64_t dropped_tags() const override { return d_dropped_tags; }
    std::string last_endpoint() const override { return d_endpoint; }
    std::uint64_t reconnects() const override { return d_reconnects; }

    int work(int noutput_items,
             gr_vector_const_void_star& input_items,
             gr_vector_void_star& output_items) override;

private:
    static constexpr std::size_t nstatus =
        static_cast<std::size_t>(zmq_message_status::bad_framing) + 1;

    void configure_socket();
    bool load_message();
    bool receive_payload();
    void keep_connected();
    void count_drop(zmq_message_status status, std::size_t bytes);
    int copy_pending(int noutput_items, void* out);

    const zmq_source_config d_config;
    zmq::context_t d_context;
    zmq::socket_t d_socket;
    std::string d_endpoint;
    zmq_message_limits d_limits;
    zmq_symbol_budget d_symbols;
    std::unique_ptr<zmq_connection_watch> d_watch; // connecting sockets only

    zmq::message_t d_msg; // the message being output
    // sc16 / sc8 on the wire: VOLK's conversion to gr_complex (null for fc32).
    std::unique_ptr<kernels::sample_convert> d_convert;
    zmq_message d_parsed;       // its payload place and tags
    std::size_t d_consumed = 0; // items of d_msg already output

    std::atomic<std::uint64_t> d_received_messages{ 0 };
    std::atomic<std::uint64_t> d_received_items{ 0 };
    std::atomic<std::uint64_t> d_dropped_tags{ 0 };
    std::atomic<std::uint64_t> d_reconnects{ 0 };
    std::array<std::atomic<std::uint64_t>, nstatus> d_drops{};
    std::uint64_t d_drops_logged = 0;
    std::chrono::steady_clock::time_point d_last_log{};
};

} // namespace gpuradar
} // namespace gr

#endif
