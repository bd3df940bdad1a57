/* The messages of GNU Radio's gr-zeromq sinks, parsed without trusting them (internal).
 *
 * A zmq_push_sink / zmq_pub_sink with pass_tags sends, per message, a tag header and then
 * the items; without pass_tags, only the items. The header (little-endian, as the
 * sender's host writes it): u16 magic 0x5FF0, u8 version 1, u64 offset of the message's
 * first item in the sender's stream, u64 tag count, then per tag a u64 absolute item
 * offset and the key, value and srcid PMTs in PMT's serial form.
 *
 * pmt::deserialize trusts the lengths it reads (a vector header claiming 2^32 items
 * allocates them; nesting recurses without limit), so every PMT is first walked here with
 * every length checked against the bytes left, the nesting depth and the tuple length
 * bounded, and its symbols admitted by a bounded budget (PMT symbols are interned for the
 * life of the process). Only a PMT that passed the walk is handed to pmt::deserialize.
 * No GNU Radio scheduler is needed: the fuzz targets call parse_zmq_message directly.
 */
#ifndef INCLUDED_GPURADAR_ZMQ_MESSAGE_H
#define INCLUDED_GPURADAR_ZMQ_MESSAGE_H

#include <gnuradio/tags.h>
#include <pmt/pmt.h>
#include <unordered_set>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace gr {
namespace gpuradar {

//! Why a message was dropped (ok: it was not).
enum class zmq_message_status {
    ok,
    empty,            //!< no bytes at all
    oversized,        //!< more bytes than max_message_bytes
    truncated_header, //!< shorter than the 19-byte tag header
    bad_magic,        //!< the header does not start with 0x5FF0
    bad_version,      //!< header version other than 1
    too_many_tags,    //!< tag count above max_tags or above what the bytes can hold
    bad_tag,          //!< a tag's offset or PMTs truncated, malformed or over a bound
    partial_item,     //!< payload not a whole number of items
    bad_framing,      //!< message parts other than [topic,] payload (set by the source)
};

//! Short name of a status ("ok", "empty", "bad_magic", ...), for logs and counters.
const char* to_string(zmq_message_status status);

//! Bounds on one message; the defaults suit tags such as rx_time and the cpi dict.
struct zmq_message_limits {
    std::size_t max_message_bytes = std::size_t(64) << 20;
    std::size_t max_tags = 1024;
    unsigned max_depth = 64;    //!< PMT nesting (each dict/list entry counts one)
    std::size_t max_tuple = 64; //!< items per PMT tuple (pmt builds tuples in O(n^2))
};

/*!
 * The PMT symbols a receiver has admitted: at most `capacity` distinct strings over its
 * life, so a stream of fresh symbols cannot grow the process's symbol table forever.
 */
class zmq_symbol_budget
{
public:
    explicit zmq_symbol_budget(std::size_t capacity = 4096) : d_capacity(capacity) {}
    //! True when `symbol` was admitted before or fits in the budget (then admitted).
    bool admit(const std::string& symbol);
    std::size_t size() const { return d_seen.size(); }

private:
    std::size_t d_capacity;
    std::unordered_set<std::string> d_seen;
};

//! One parsed message: the payload's place in the message and its tags.
struct zmq_message {
    zmq_message_status status = zmq_message_status::ok;
    std::size_t payload_offset = 0; //!< first payload byte
    std::size_t nitems = 0;         //!< whole items in the payload
    //! Tags with offsets relative to the message's first item (0 .. nitems-1).
    std::vector<gr::tag_t> tags;
    //! Tags dropped because their offset lies outside this message's items.
    std::size_t tags_out_of_range = 0;
};

/*!
 * Parses one message of `size` bytes. `item_bytes` (> 0): bytes per item (itemsize *
 * vlen); `tagged`: the sender has pass_tags. Never throws on any input and allocates at
 * most a bounded multiple of `size` (and nothing when the status is not ok).
 */
zmq_message parse_zmq_message(const std::uint8_t* data,
                              std::size_t size,
                              std::size_t item_bytes,
                              bool tagged,
                              const zmq_message_limits& limits,
                              zmq_symbol_budget& symbols);

/*!
 * Length in bytes of the one serialized PMT at `data` (at most `size` bytes), or 0 when
 * it is truncated, malformed, nests deeper than limits.max_depth, has a longer tuple than
 * limits.max_tuple, or holds a symbol the budget refuses.
 */
std::size_t serialized_pmt_length(const std::uint8_t* data,
                                  std::size_t size,
                                  const zmq_message_limits& limits,
                                  zmq_symbol_budget& symbols);

} // namespace gpuradar
} // namespace gr

#endif
