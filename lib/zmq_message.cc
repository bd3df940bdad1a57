/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "zmq_message.h"
#include <pmt/pmt_serial_tags.h>
#include <cstring>
#include <streambuf>

namespace gr {
namespace gpuradar {

namespace {

constexpr std::uint16_t header_magic = 0x5FF0;
constexpr std::uint8_t header_version = 1;
// u16 magic, u8 version, u64 first-item offset, u64 tag count.
constexpr std::size_t header_bytes = 2 + 1 + 8 + 8;
// The smallest tag: its u64 offset and three one-byte PMTs.
constexpr std::size_t min_tag_bytes = 8 + 3;
// pmt::deserialize refuses longer symbols.
constexpr std::size_t max_symbol_bytes = 1024;

template <typename T>
T read_host(const std::uint8_t* p)
{
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

std::uint32_t read_big_u32(const std::uint8_t* p)
{
    return (std::uint32_t(p[0]) << 24) | (std::uint32_t(p[1]) << 16) |
           (std::uint32_t(p[2]) << 8) | std::uint32_t(p[3]);
}

// Bytes per element of a serialized uniform vector, 0 for an unknown subtype.
std::size_t uniform_element_bytes(std::uint8_t subtype)
{
    switch (subtype) {
    case UVI_U8:
    case UVI_S8:
        return 1;
    case UVI_U16:
    case UVI_S16:
        return 2;
    case UVI_U32:
    case UVI_S32:
    case UVI_F32:
        return 4;
    case UVI_U64:
    case UVI_S64:
    case UVI_F64:
    case UVI_C32:
        return 8;
    case UVI_C64:
        return 16;
    default:
        return 0;
    }
}

// Walks serialized PMTs the way pmt::deserialize reads them, checking every length.
class pmt_walker
{
public:
    pmt_walker(const std::uint8_t* data,
               std::size_t size,
               const zmq_message_limits& limits,
               zmq_symbol_budget& symbols)
        : d_data(data), d_size(size), d_limits(limits), d_symbols(symbols)
    {
    }

    // Consumes one PMT; false when it is not a valid, bounded one.
    bool one(unsigned depth)
    {
        if (depth > d_limits.max_depth)
            return false;
        std::uint8_t tag;
        if (!take_u8(&tag))
            return false;
        switch (tag) {
        case PST_TRUE:
        case PST_FALSE:
        case PST_NULL:
            return true;
        case PST_INT32:
            return skip(4);
        case PST_DOUBLE:
        case PST_UINT64:
        case PST_INT64:
            return skip(8);
        case PST_COMPLEX:
            return skip(16);
        case PST_SYMBOL:
            return symbol();
        case PST_PAIR:
            return pair_chain(depth, false);
        case PST_DICT:
            return pair_chain(depth, true);
        case PST_TUPLE:
            // pmt::deserialize cannot build an empty tuple (to_tuple of an empty list).
            return sequence(depth, 1, d_limits.max_tuple);
        case PST_VECTOR:
            return sequence(depth, 0, remaining());
        case PST_UNIFORM_VECTOR:
            return uniform_vector();
        default:
            return false;
        }
    }

    std::size_t position() const { return d_pos; }

private:
    std::size_t remaining() const { return d_size - d_pos; }

    bool skip(std::size_t n)
    {
        if (n > remaining())
            return false;
        d_pos += n;
        return true;
    }

    bool take_u8(std::uint8_t* v)
    {
        if (remaining() < 1)
            return false;
        *v = d_data[d_pos++];
        return true;
    }

    bool take_u32(std::uint32_t* v)
    {
        if (remaining() < 4)
            return false;
        *v = read_big_u32(d_data + d_pos);
        d_pos += 4;
        return true;
    }

    bool symbol()
    {
        if (remaining() < 2)
            return false;
        const std::size_t len = (std::size_t(d_data[d_pos]) << 8) | d_data[d_pos + 1];
        d_pos += 2;
        if (len > max_symbol_bytes || len > remaining())
            return false;
        const std::string name(reinterpret_cast<const char*>(d_data + d_pos), len);
        d_pos += len;
        return d_symbols.admit(name);
    }

    // A tuple or vector: u32 count, then that many PMTs (each at least one byte).
    bool sequence(unsigned depth, std::size_t min_items, std::size_t max_items)
    {
        std::uint32_t n;
        if (!take_u32(&n) || n < min_items || n > max_items || n > remaining())
            return false;
        for (std::uint32_t i = 0; i < n; ++i)
            if (!one(depth + 1))
                return false;
        return true;
    }

    // car, then PST_PAIR (another car follows), PST_NULL (end) or the cdr PMT. A dict
    // must be a proper list of pairs: its entries are built with dcons (which refuses
    // anything but a pair) and its cdr is another dict or the end, so that what comes out
    // can be handed to pmt::dict_add and friends (which throw on an improper dict).
    bool pair_chain(unsigned depth, bool dict)
    {
        for (;;) {
            if (dict && !next_is_pair())
                return false;
            if (!one(depth + 1))
                return false;
            if (remaining() < 1)
                return false;
            const std::uint8_t next = d_data[d_pos];
            if (next == PST_PAIR) {
                ++d_pos;
                continue;
            }
            if (next == PST_NULL) {
                ++d_pos;
                return true;
            }
            if (dict && next != PST_DICT)
                return false;
            return one(depth + 1);
        }
    }

    bool next_is_pair() const
    {
        return remaining() >= 1 &&
               (d_data[d_pos] == PST_PAIR || d_data[d_pos] == PST_DICT);
    }

    // u8 subtype, u32 count, u8 pad count, the pad bytes, the elements.
    bool uniform_vector()
    {
        std::uint8_t subtype, npad;
        std::uint32_t n;
        if (!take_u8(&subtype) || !take_u32(&n) || !take_u8(&npad) || !skip(npad))
            return false;
        const std::size_t element = uniform_element_bytes(subtype);
        if (element == 0 || n > remaining() / element)
            return false;
        return skip(std::size_t(n) * element);
    }

    const std::uint8_t* d_data;
    std::size_t d_size;
    std::size_t d_pos = 0;
    const zmq_message_limits& d_limits;
    zmq_symbol_budget& d_symbols;
};

// A read-only streambuf over bytes that passed the walk, for pmt::deserialize.
struct span_buf : std::streambuf {
    span_buf(const std::uint8_t* data, std::size_t size)
    {
        char* p = const_cast<char*>(reinterpret_cast<const char*>(data));
        setg(p, p, p + size);
    }
};

struct tag_span {
    std::uint64_t offset;
    std::size_t begin; // key, value and srcid: bytes [begin, end) of the message
    std::size_t end;
};

zmq_message dropped(zmq_message_status status)
{
    zmq_message m;
    m.status = status;
    return m;
}

// Checks the header and every tag's bytes; on success `spans` holds the tags' places
// and `*payload` the first payload byte.
zmq_message_status walk_header(const std::uint8_t* data,
                               std::size_t size,
                               const zmq_message_limits& limits,
                               zmq_symbol_budget& symbols,
                               std::uint64_t* first_item,
                               std::vector<tag_span>& spans,
                               std::size_t* payload)
{
    if (size < header_bytes)
        return zmq_message_status::truncated_header;
    if (read_host<std::uint16_t>(data) != header_magic)
        return zmq_message_status::bad_magic;
    if (data[2] != header_version)
        return zmq_message_status::bad_version;
    *first_item = read_host<std::uint64_t>(data + 3);
    const auto ntags = read_host<std::uint64_t>(data + 11);
    std::size_t pos = header_bytes;
    if (ntags > limits.max_tags || ntags > (size - pos) / min_tag_bytes)
        return zmq_message_status::too_many_tags;
    spans.reserve(ntags);
    for (std::uint64_t i = 0; i < ntags; ++i) {
        if (size - pos < 8)
            return zmq_message_status::bad_tag;
        const auto offset = read_host<std::uint64_t>(data + pos);
        pos += 8;
        pmt_walker walk(data + pos, size - pos, limits, symbols);
        if (!walk.one(0) || !walk.one(0) || !walk.one(0))
            return zmq_message_status::bad_tag;
        spans.push_back({ offset, pos, pos + walk.position() });
        pos += walk.position();
    }
    *payload = pos;
    return zmq_message_status::ok;
}

} // namespace

const char* to_string(zmq_message_status status)
{
    switch (status) {
    case zmq_message_status::ok:
        return "ok";
    case zmq_message_status::empty:
        return "empty";
    case zmq_message_status::oversized:
        return "oversized";
    case zmq_message_status::truncated_header:
        return "truncated_header";
    case zmq_message_status::bad_magic:
        return "bad_magic";
    case zmq_message_status::bad_version:
        return "bad_version";
    case zmq_message_status::too_many_tags:
        return "too_many_tags";
    case zmq_message_status::bad_tag:
        return "bad_tag";
    case zmq_message_status::partial_item:
        return "partial_item";
    case zmq_message_status::bad_framing:
        return "bad_framing";
    }
    return "unknown";
}

bool zmq_symbol_budget::admit(const std::string& symbol)
{
    if (d_seen.count(symbol))
        return true;
    if (d_seen.size() >= d_capacity)
        return false;
    d_seen.insert(symbol);
    return true;
}

std::size_t serialized_pmt_length(const std::uint8_t* data,
                                  std::size_t size,
                                  const zmq_message_limits& limits,
                                  zmq_symbol_budget& symbols)
{
    pmt_walker walk(data, size, limits, symbols);
    return walk.one(0) ? walk.position() : 0;
}

zmq_message parse_zmq_message(const std::uint8_t* data,
                              std::size_t size,
                              std::size_t item_bytes,
                              bool tagged,
                              const zmq_message_limits& limits,
                              zmq_symbol_budget& symbols)
{
    if (size == 0)
        return dropped(zmq_message_status::empty);
    if (size > limits.max_message_bytes)
        return dropped(zmq_message_status::oversized);
    std::uint64_t first_item = 0;
    std::vector<tag_span> spans;
    std::size_t payload = 0;
    if (tagged) {
        const auto status =
            walk_header(data, size, limits, symbols, &first_item, spans, &payload);
        if (status != zmq_message_status::ok)
            return dropped(status);
    }
    if (item_bytes == 0 || (size - payload) % item_bytes != 0)
        return dropped(zmq_message_status::partial_item);

    zmq_message m;
    m.payload_offset = payload;
    m.nitems = (size - payload) / item_bytes;
    for (const auto& s : spans) {
        if (s.offset < first_item || s.offset - first_item >= m.nitems) {
            ++m.tags_out_of_range;
            continue;
        }
        span_buf buf(data + s.begin, s.end - s.begin);
        gr::tag_t t;
        t.offset = s.offset - first_item;
        try {
            t.key = pmt::deserialize(buf);
            t.value = pmt::deserialize(buf);
            t.srcid = pmt::deserialize(buf);
        } catch (const std::exception&) {
            // The walk accepts only what deserialize reads; this guards a mismatch.
            return dropped(zmq_message_status::bad_tag);
        }
        m.tags.push_back(std::move(t));
    }
    return m;
}

} // namespace gpuradar
} // namespace gr
