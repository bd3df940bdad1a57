/* Messages in gr-zeromq's wire format (tag header + items), for the zmq_source tests and
 * the fuzz seed corpus: written here from the format's description, so a test compares
 * the parser with an independent writer (the Python QA also uses GNU Radio's own sink).
 */
#ifndef INCLUDED_GPURADAR_TEST_ZMQ_WIRE_H
#define INCLUDED_GPURADAR_TEST_ZMQ_WIRE_H

#include <gnuradio/tags.h>
#include <pmt/pmt.h>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

namespace gpuradar::test {

template <typename T>
void append_host(std::string& s, T v)
{
    s.append(reinterpret_cast<const char*>(&v), sizeof v);
}

//! The tag header: magic, version, first item's offset, tag count, then each tag.
inline std::string zmq_tag_header(std::uint64_t first_item,
                                  const std::vector<gr::tag_t>& tags,
                                  std::uint16_t magic = 0x5FF0,
                                  std::uint8_t version = 1)
{
    std::string s;
    append_host<std::uint16_t>(s, magic);
    append_host<std::uint8_t>(s, version);
    append_host<std::uint64_t>(s, first_item);
    append_host<std::uint64_t>(s, tags.size());
    for (const auto& t : tags) {
        append_host<std::uint64_t>(s, t.offset);
        std::stringbuf sb;
        pmt::serialize(t.key, sb);
        pmt::serialize(t.value, sb);
        pmt::serialize(t.srcid, sb);
        s += sb.str();
    }
    return s;
}

//! Header (when tagged) followed by the raw bytes of `items`.
template <typename T>
std::string zmq_wire_message(std::uint64_t first_item,
                             const std::vector<gr::tag_t>& tags,
                             const std::vector<T>& items,
                             bool tagged = true)
{
    std::string s = tagged ? zmq_tag_header(first_item, tags) : std::string();
    s.append(reinterpret_cast<const char*>(items.data()), items.size() * sizeof(T));
    return s;
}

//! A tag with srcid set, as a sink forwards it.
inline gr::tag_t
wire_tag(std::uint64_t offset, const pmt::pmt_t& key, const pmt::pmt_t& value)
{
    gr::tag_t t;
    t.offset = offset;
    t.key = key;
    t.value = value;
    t.srcid = pmt::intern("src");
    return t;
}

} // namespace gpuradar::test

#endif
