/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "backend_select.h"
#include "zmq_source_impl.h"
#include <gnuradio/io_signature.h>
#include <sys/stat.h>
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace gr {
namespace gpuradar {

namespace {

constexpr std::size_t max_message_limit = std::size_t(1) << 31;
constexpr int max_timeout_ms = 10000;
// Messages examined per call of work() when they are all dropped: work() returns (and
// the scheduler can stop the block) even under a flood of garbage.
constexpr int max_drops_per_work = 64;
constexpr std::size_t z85_key_chars = 40;

[[noreturn]] void bad_parameter(const std::string& what)
{
    throw std::invalid_argument("gpuradar::zmq_source: " + what);
}

bool starts_with(const std::string& s, const char* prefix)
{
    return s.rfind(prefix, 0) == 0;
}

void check_socket_type(const std::string& name)
{
    if (name != "pull" && name != "sub")
        bad_parameter("socket_type must be one of pull, sub (got '" + name + "')");
}

void check_curve_key(const char* param, const std::string& key)
{
    if (key.size() != z85_key_chars)
        bad_parameter(std::string(param) + " must be a 40-character Z85 key (got " +
                      std::to_string(key.size()) + " characters)");
}

void check_curve(const zmq_source_config& c)
{
    if (c.curve_server_key.empty() && c.curve_secret_key.empty())
        return;
    check_curve_key("curve_server_key", c.curve_server_key);
    check_curve_key("curve_secret_key", c.curve_secret_key);
    if (c.bind)
        bad_parameter("CURVE keys need bind=false: the source connects as a CURVE client "
                      "to the sender (the CURVE server)");
    char pub[z85_key_chars + 1];
    if (zmq_curve_public(pub, c.curve_secret_key.c_str()) != 0)
        bad_parameter("curve_secret_key is not a valid Z85 key (or libzmq lacks CURVE)");
}

void check_config(const zmq_source_config& c)
{
    if (c.itemsize == 0)
        bad_parameter("itemsize must be >= 1 (got 0)");
    if (c.input != kernels::sample_format::fc32 && c.itemsize != sizeof(gr_complex))
        bad_parameter("itemsize must be 8 (gr_complex out) with input_type " +
                      std::string(kernels::to_string(c.input)) + " (got " +
                      std::to_string(c.itemsize) + ")");
    check_vlen("zmq_source", c.vlen, c.itemsize);
    if (c.item_bytes() / c.vlen != c.itemsize || c.item_bytes() > max_message_limit)
        bad_parameter("itemsize * vlen must be <= 2^31 bytes");
    if (!starts_with(c.address, "tcp://") && !starts_with(c.address, "ipc://") &&
        !starts_with(c.address, "inproc://"))
        bad_parameter("address must start with tcp://, ipc:// or inproc:// (got '" +
                      c.address + "')");
    check_socket_type(c.socket_type);
    if (c.timeout_ms < 1 || c.timeout_ms > max_timeout_ms)
        bad_parameter("timeout_ms must be in 1..10000 (got " +
                      std::to_string(c.timeout_ms) + ")");
    if (c.max_message_bytes < c.wire_item_bytes() ||
        c.max_message_bytes > max_message_limit)
        bad_parameter("max_message_bytes must be in one item on the wire (" +
                      std::to_string(c.wire_item_bytes()) + ") .. 2^31 (got " +
                      std::to_string(c.max_message_bytes) + ")");
    if (c.hwm < -1)
        bad_parameter("hwm must be -1 (libzmq default) or >= 0 (got " +
                      std::to_string(c.hwm) + ")");
    check_curve(c);
}

// The directory of an ipc:// endpoint's socket file, or "" for other transports.
std::string ipc_directory(const std::string& address)
{
    if (!starts_with(address, "ipc://"))
        return "";
    const std::string path = address.substr(6);
    const auto slash = path.rfind('/');
    return slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
}

// Warns when others may enter the directory of an ipc:// endpoint.
void warn_if_ipc_open(const gr::logger_ptr& logger, const std::string& address)
{
    const std::string dir = ipc_directory(address);
    struct stat st;
    if (!dir.empty() && stat(dir.c_str(), &st) == 0 && (st.st_mode & (S_IRWXG | S_IRWXO)))
        logger->warn("{} is open to other users: any of them can take the ipc endpoint "
                     "{}; use a directory with mode 0700",
                     dir,
                     address);
}

} // namespace

zmq_source::sptr zmq_source::make(std::size_t itemsize,
                                  unsigned int vlen,
                                  const std::string& address,
                                  const std::string& socket_type,
                                  bool bind,
                                  bool pass_tags,
                                  int timeout_ms,
                                  std::size_t max_message_bytes,
                                  int hwm,
                                  const std::string& topic,
                                  const std::string& curve_server_key,
                                  const std::string& curve_secret_key,
                                  const std::string& input_type)
{
    const zmq_source_config config{ itemsize,
                                    vlen,
                                    address,
                                    socket_type,
                                    bind,
                                    pass_tags,
                                    timeout_ms,
                                    max_message_bytes,
                                    hwm,
                                    topic,
                                    curve_server_key,
                                    curve_secret_key,
                                    kernels::parse_sample_format(
                                        input_type, "zmq_source", "input_type") };
    check_config(config);
    return gnuradio::make_block_sptr<zmq_source_impl>(config);
}

zmq_source_impl::zmq_source_impl(const zmq_source_config& config)
    : gr::sync_block("zmq_source",
                     gr::io_signature::make(0, 0, 0),
                     gr::io_signature::make(1, 1, config.item_bytes())),
      d_config(config),
      d_context(1),
      d_socket(d_context, config.zmq_socket_type())
{
    d_limits.max_message_bytes = config.max_message_bytes;
    if (config.input != kernels::sample_format::fc32)
        d_convert = kernels::sample_convert::make(kernels::backend::cpu, config.input);
    configure_socket();
}

void zmq_source_impl::configure_socket()
{
    d_socket.set(zmq::sockopt::linger, 0);
    d_socket.set(zmq::sockopt::maxmsgsize,
                 static_cast<std::int64_t>(d_config.max_message_bytes));
    if (d_config.hwm >= 0)
        d_socket.set(zmq::sockopt::rcvhwm, d_config.hwm);
    if (!d_config.curve_server_key.empty()) {
        char pub[z85_key_chars + 1];
        zmq_curve_public(pub, d_config.curve_secret_key.c_str());
        d_socket.set(zmq::sockopt::curve_serverkey, d_config.curve_server_key);
        d_socket.set(zmq::sockopt::curve_publickey, std::string(pub, z85_key_chars));
        d_socket.set(zmq::sockopt::curve_secretkey, d_config.curve_secret_key);
    }
    if (d_config.zmq_socket_type() == ZMQ_SUB)
        d_socket.set(zmq::sockopt::subscribe, d_config.topic);
    warn_if_ipc_open(d_logger, d_config.address);
    try {
        if (d_config.bind) {
            d_socket.bind(d_config.address);
        } else {
            d_watch = std::make_unique<zmq_connection_watch>(d_context, d_socket);
            d_socket.connect(d_config.address);
        }
    } catch (const zmq::error_t& e) {
        // libzmq says only "Invalid argument" or "No such device": name the parameter.
        const std::string what = "address '" + d_config.address + "' cannot be " +
                                 (d_config.bind ? "bound" : "connected to") + ": " +
                                 e.what();
        if (e.num() == EINVAL)
            bad_parameter(what + " (a valid endpoint: tcp://HOST:PORT with a numeric "
                                 "port, e.g. tcp://127.0.0.1:5555, or tcp://*:5555 to "
                                 "bind; ipc:///path/to/socket; inproc://name)");
        if (e.num() == ENODEV && d_config.bind)
            throw std::runtime_error(
                "gpuradar::zmq_source: " + what +
                " (bind takes an interface of this host: tcp://*:PORT "
                "or one of its addresses)");
        throw std::runtime_error("gpuradar::zmq_source: " + what);
    }
    d_endpoint = d_socket.get(zmq::sockopt::last_endpoint);
}

std::uint64_t zmq_source_impl::dropped_messages() const
{
    std::uint64_t n = 0;
    for (const auto& d : d_drops)
        n += d;
    return n;
}

std::map<std::string, std::uint64_t> zmq_source_impl::drop_counts() const
{
    std::map<std::string, std::uint64_t> counts;
    for (std::size_t s = 1; s < nstatus; ++s)
        counts[to_string(static_cast<zmq_message_status>(s))] = d_drops[s];
    return counts;
}

void zmq_source_impl::count_drop(zmq_message_status status, std::size_t bytes)
{
    ++d_drops[static_cast<std::size_t>(status)];
    const auto now = std::chrono::steady_clock::now();
    if (now - d_last_log < std::chrono::seconds(1))
        return;
    const std::uint64_t total = dropped_messages();
    d_logger->warn("dropped {} malformed message(s) since the last warning, {} in all "
                   "(latest: {}, {} bytes)",
                   total - d_drops_logged,
                   total,
                   to_string(status),
                   bytes);
    d_drops_logged = total;
    d_last_log = now;
}

void zmq_source_impl::keep_connected()
{
    if (!d_watch || !d_watch->given_up())
        return;
    ++d_reconnects;
    d_logger->warn("libzmq closed the connection to {} (a message over max_message_bytes "
                   "or a protocol error); reconnecting",
                   d_config.address);
    d_socket.disconnect(d_config.address);
    d_socket.connect(d_config.address);
}

// Receives one message's parts: [topic,] payload. False on bad framing (counted).
bool zmq_source_impl::receive_payload()
{
    const std::size_t expected_parts = d_config.topic.empty() ? 1 : 2;
    std::size_t parts = 0;
    bool more = true;
    while (more) {
        zmq::message_t part;
        if (!d_socket.recv(part, zmq::recv_flags::dontwait))
            break;
        ++parts;
        more = part.more();
        if (parts == expected_parts)
            d_msg = std::move(part);
    }
    if (parts != expected_parts) {
        count_drop(zmq_message_status::bad_framing, d_msg.size());
        return false;
    }
    return true;
}

// Waits up to timeout_ms for a message that parses; drops and counts the others.
bool zmq_source_impl::load_message()
{
    for (int tries = 0; tries < max_drops_per_work; ++tries) {
        zmq::pollitem_t item{ d_socket.handle(), 0, ZMQ_POLLIN, 0 };
        zmq::poll(
            &item, 1, std::chrono::milliseconds(tries == 0 ? d_config.timeout_ms : 0));
        if (!(item.revents & ZMQ_POLLIN))
            return false;
        if (!receive_payload())
            continue;
        d_parsed = parse_zmq_message(static_cast<const std::uint8_t*>(d_msg.data()),
                                     d_msg.size(),
                                     d_config.wire_item_bytes(),
                                     d_config.pass_tags,
                                     d_limits,
                                     d_symbols);
        if (d_parsed.status != zmq_message_status::ok) {
            count_drop(d_parsed.status, d_msg.size());
            continue;
        }
        ++d_received_messages;
        d_dropped_tags += d_parsed.tags_out_of_range;
        d_consumed = 0;
        return true;
    }
    return false;
}

int zmq_source_impl::copy_pending(int noutput_items, void* out)
{
    const std::size_t n =
        std::min<std::size_t>(noutput_items, d_parsed.nitems - d_consumed);
    const auto* payload = static_cast<const std::uint8_t*>(d_msg.data()) +
                          d_parsed.payload_offset +
                          d_consumed * d_config.wire_item_bytes();
    if (d_convert) // an SDR's integers, to gr_complex at 1.0 = full scale
        d_convert->run(payload, static_cast<gr_complex*>(out), n * d_config.vlen);
    else
        std::memcpy(out, payload, n * d_config.item_bytes());
    const std::uint64_t first_out = nitems_written(0);
    for (const auto& t : d_parsed.tags) {
        if (t.offset >= d_consumed && t.offset < d_consumed + n) {
            gr::tag_t out_tag = t;
            out_tag.offset = first_out + (t.offset - d_consumed);
            add_item_tag(0, out_tag);
        }
    }
    d_consumed += n;
    d_received_items += n;
    return static_cast<int>(n);
}

int zmq_source_impl::work(int noutput_items,
                          gr_vector_const_void_star&,
                          gr_vector_void_star& output_items)
{
    keep_connected();
    if (d_consumed >= d_parsed.nitems && !load_message())
        return 0;
    return copy_pending(noutput_items, output_items[0]);
}

} // namespace gpuradar
} // namespace gr
