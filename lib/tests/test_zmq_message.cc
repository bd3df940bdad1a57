/*
 * The parser of gr-zeromq messages (lib/zmq_message.h) on good messages and on every kind
 * of bad one: it returns a reason instead of throwing, allocating or reading past the
 * end.
 */
#include "../zmq_message.h"
#include "zmq_wire.h"
#include <gtest/gtest.h>
#include <complex>

namespace gpuradar::test {
namespace {

using gr::gpuradar::parse_zmq_message;
using gr::gpuradar::serialized_pmt_length;
using gr::gpuradar::zmq_message;
using gr::gpuradar::zmq_message_limits;
using gr::gpuradar::zmq_message_status;
using gr::gpuradar::zmq_symbol_budget;
using cf = std::complex<float>;

constexpr std::size_t item = sizeof(cf);

zmq_message parse(const std::string& s, bool tagged = true, zmq_message_limits lim = {})
{
    zmq_symbol_budget symbols;
    return parse_zmq_message(reinterpret_cast<const std::uint8_t*>(s.data()),
                             s.size(),
                             item,
                             tagged,
                             lim,
                             symbols);
}

std::vector<cf> ramp(std::size_t n)
{
    std::vector<cf> v(n);
    for (std::size_t i = 0; i < n; ++i)
        v[i] = cf(float(i) + 0.5f, -float(i));
    return v;
}

pmt::pmt_t rx_time(std::uint64_t s, double frac)
{
    return pmt::make_tuple(pmt::from_uint64(s), pmt::from_double(frac));
}

TEST(ZmqMessage, TaggedMessageGivesItemsAndRelativeTags)
{
    const std::uint64_t first = 1000;
    pmt::pmt_t d = pmt::make_dict();
    d = pmt::dict_add(d, pmt::intern("index"), pmt::from_uint64(3));
    d = pmt::dict_add(d, pmt::intern("fs"), pmt::from_double(2e6));
    const std::vector<gr::tag_t> tags = {
        wire_tag(first, pmt::intern("rx_time"), rx_time(12, 0.25)),
        wire_tag(first + 7, pmt::intern("cpi"), d),
        wire_tag(first + 9, pmt::intern("v"), pmt::init_c32vector(2, ramp(2).data())),
    };
    const auto items = ramp(10);
    const std::string s = zmq_wire_message(first, tags, items);
    const auto m = parse(s);
    ASSERT_EQ(m.status, zmq_message_status::ok);
    EXPECT_EQ(m.nitems, 10u);
    EXPECT_EQ(m.payload_offset, s.size() - 10 * item);
    EXPECT_EQ(std::memcmp(s.data() + m.payload_offset, items.data(), 10 * item), 0);
    ASSERT_EQ(m.tags.size(), 3u);
    const std::uint64_t want_offsets[] = { 0, 7, 9 };
    for (std::size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(m.tags[i].offset, want_offsets[i]);
        EXPECT_TRUE(pmt::equal(m.tags[i].key, tags[i].key));
        EXPECT_TRUE(pmt::equal(m.tags[i].value, tags[i].value));
        EXPECT_TRUE(pmt::eq(m.tags[i].srcid, tags[i].srcid));
    }
}

TEST(ZmqMessage, UntaggedMessageIsAllPayload)
{
    const auto m = parse(zmq_wire_message(0, {}, ramp(5), false), false);
    ASSERT_EQ(m.status, zmq_message_status::ok);
    EXPECT_EQ(m.nitems, 5u);
    EXPECT_EQ(m.payload_offset, 0u);
}

TEST(ZmqMessage, TagsOutsideTheMessageAreDroppedAndCounted)
{
    const std::vector<gr::tag_t> tags = { wire_tag(99, pmt::intern("early"), pmt::PMT_T),
                                          wire_tag(104, pmt::intern("late"), pmt::PMT_T),
                                          wire_tag(101, pmt::intern("in"), pmt::PMT_T) };
    const auto m = parse(zmq_wire_message(100, tags, ramp(4)));
    ASSERT_EQ(m.status, zmq_message_status::ok);
    ASSERT_EQ(m.tags.size(), 1u);
    EXPECT_EQ(m.tags[0].offset, 1u);
    EXPECT_EQ(m.tags_out_of_range, 2u);
}

TEST(ZmqMessage, EachKindOfBadMessageHasItsReason)
{
    const std::string good = zmq_wire_message(0, {}, ramp(4));
    EXPECT_EQ(parse("").status, zmq_message_status::empty);
    EXPECT_EQ(parse("", false).status, zmq_message_status::empty);
    EXPECT_EQ(parse(good.substr(0, 18)).status, zmq_message_status::truncated_header);
    EXPECT_EQ(parse(zmq_tag_header(0, {}, 0xF05F) + std::string(32, 'x')).status,
              zmq_message_status::bad_magic);
    EXPECT_EQ(parse(zmq_tag_header(0, {}, 0x5FF0, 2)).status,
              zmq_message_status::bad_version);
    EXPECT_EQ(parse(good + "abc").status, zmq_message_status::partial_item);
    EXPECT_EQ(parse(std::string(13, 'z'), false).status,
              zmq_message_status::partial_item);
    zmq_message_limits small;
    small.max_message_bytes = good.size() - 1;
    EXPECT_EQ(parse(good, true, small).status, zmq_message_status::oversized);
    EXPECT_EQ(parse(std::string(64, '\xff')).status, zmq_message_status::bad_magic);
}

TEST(ZmqMessage, AbsurdTagCountIsRefusedBeforeAnyAllocation)
{
    // The 27-byte header claiming 2^32 tags: a count the bytes cannot hold.
    std::string s = zmq_tag_header(0, {});
    const std::uint64_t ntags = std::uint64_t(1) << 32;
    std::memcpy(&s[11], &ntags, sizeof ntags);
    s += std::string(8, '\0');
    ASSERT_EQ(s.size(), 27u);
    EXPECT_EQ(parse(s).status, zmq_message_status::too_many_tags);
    // A count the bytes could hold but above max_tags.
    std::vector<gr::tag_t> many;
    for (int i = 0; i < 5; ++i)
        many.push_back(wire_tag(0, pmt::intern("k"), pmt::PMT_T));
    zmq_message_limits lim;
    lim.max_tags = 4;
    EXPECT_EQ(parse(zmq_wire_message(0, many, ramp(1)), true, lim).status,
              zmq_message_status::too_many_tags);
    EXPECT_EQ(parse(zmq_wire_message(0, many, ramp(1))).status, zmq_message_status::ok);
}

TEST(ZmqMessage, TruncatedTagsAreBadTags)
{
    const std::vector<gr::tag_t> tags = { wire_tag(
        0, pmt::intern("rx_time"), rx_time(1, 0.5)) };
    const std::string header = zmq_tag_header(0, tags);
    // Every cut inside the tag (its offset or its PMTs) is either a bad tag or a payload
    // that is not whole items; never ok, never a crash.
    for (std::size_t cut = 19; cut < header.size(); ++cut) {
        const auto st = parse(header.substr(0, cut)).status;
        EXPECT_TRUE(st == zmq_message_status::bad_tag ||
                    st == zmq_message_status::too_many_tags)
            << "cut at " << cut << ": " << gr::gpuradar::to_string(st);
    }
}

// One serialized PMT from raw bytes.
std::size_t walk(const std::string& bytes, zmq_message_limits lim = {})
{
    zmq_symbol_budget symbols;
    return serialized_pmt_length(
        reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size(), lim, symbols);
}

TEST(ZmqMessage, PmtWalkerRefusesHugeClaimsAndDeepNesting)
{
    // Uniform c64 vector and generic vector claiming 2^32-1 items in a few bytes.
    EXPECT_EQ(walk(std::string("\x0a\x0b\xff\xff\xff\xff\x00", 7) + "abcd"), 0u);
    EXPECT_EQ(walk(std::string("\x08\xff\xff\xff\xff\x00\x00", 7)), 0u);
    // A tuple over max_tuple items.
    std::string tuple("\x0c\x00\x00\x01\x00", 5);
    tuple += std::string(256, '\x00');
    EXPECT_EQ(walk(tuple), 0u);
    // Symbols longer than the bytes left, or than pmt accepts.
    EXPECT_EQ(walk(std::string("\x02\x00\x10", 3) + "short"), 0u);
    EXPECT_EQ(walk(std::string("\x02\x08\x00", 3) + std::string(2048, 'a')), 0u);
    // Nested pairs deeper than max_depth.
    std::string deep;
    for (int i = 0; i < 100; ++i)
        deep += '\x07';
    deep += std::string(201, '\x06');
    EXPECT_EQ(walk(deep), 0u);
    // A dict entry that is not a pair (found by fuzz_waveform_message).
    EXPECT_EQ(walk(std::string("\x09\x03\x00\x00\x00\x01\x06", 7)), 0u);
    EXPECT_GT(walk(pmt::serialize_str(pmt::dict_add(
                  pmt::make_dict(), pmt::intern("k"), pmt::from_double(1.0)))),
              0u);
    // A dict whose chain ends in something other than a dict or the end (found by
    // fuzz_cpi_tag: pmt::dict_add throws on it).
    EXPECT_EQ(walk(std::string("\x09\x07\x02\x00\x01k\x00\x00", 8)), 0u);
    // An empty tuple: pmt::deserialize cannot build one.
    EXPECT_EQ(walk(std::string("\x0c\x00\x00\x00\x00", 5)), 0u);
    // Unknown serial tags.
    EXPECT_EQ(walk("\x3b"), 0u);
    EXPECT_EQ(walk("\x7f"), 0u);
    // And a valid one is measured exactly.
    const std::string rx = pmt::serialize_str(rx_time(5, 0.125));
    EXPECT_EQ(walk(rx + "trailing"), rx.size());
}

TEST(ZmqMessage, SymbolBudgetBoundsTheInternedSymbols)
{
    zmq_symbol_budget budget(2);
    EXPECT_TRUE(budget.admit("a"));
    EXPECT_TRUE(budget.admit("b"));
    EXPECT_TRUE(budget.admit("a"));
    EXPECT_FALSE(budget.admit("c"));
    EXPECT_EQ(budget.size(), 2u);
    const auto tags = std::vector<gr::tag_t>{ wire_tag(0, pmt::intern("c"), pmt::PMT_T) };
    const std::string s = zmq_wire_message(0, tags, ramp(1));
    const auto m = parse_zmq_message(reinterpret_cast<const std::uint8_t*>(s.data()),
                                     s.size(),
                                     item,
                                     true,
                                     zmq_message_limits{},
                                     budget);
    EXPECT_EQ(m.status, zmq_message_status::bad_tag);
}

} // namespace
} // namespace gpuradar::test
