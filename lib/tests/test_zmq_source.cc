/*
 * zmq_source in a running flowgraph, fed by a real ZMQ PUSH socket: good messages
 * interleaved with garbage, empty, odd-length, bad-magic, 2^32-tag, truncated and
 * oversized ones. Every good item and tag arrives in order, each bad message is counted
 * under its reason, the flowgraph keeps running and stops promptly, memory stays bounded.
 */
#include "common/sample_convert_codes.h"
#include "invalid_argument_check.h"
#include "test_support.h"
#include "zmq_wire.h"
#include <gnuradio/blocks/vector_sink.h>
#include <gnuradio/gpuradar/zmq_source.h>
#include <gnuradio/top_block.h>
#include <unistd.h>
#include <zmq.hpp>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>

namespace gpuradar::test {
namespace {

using gr::gpuradar::zmq_source;
using cf = std::complex<float>;

// A private directory for ipc:// endpoints, removed with its sockets at the end.
struct private_dir {
    std::string path;
    private_dir()
    {
        char tmpl[] = "/tmp/gpuradar-zmq-XXXXXX";
        path = mkdtemp(tmpl);
    }
    ~private_dir() { std::system(("rm -rf '" + path + "'").c_str()); }
    std::string endpoint(const char* name) const { return "ipc://" + path + "/" + name; }
};

long rss_kib()
{
    std::ifstream f("/proc/self/status");
    std::string key;
    long value = 0;
    while (f >> key) {
        if (key == "VmRSS:") {
            f >> value;
            return value;
        }
        f.ignore(1 << 12, '\n');
    }
    return value;
}

template <typename Pred>
bool wait_for(Pred done, double seconds = 10.0)
{
    const auto end =
        std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (!done()) {
        if (std::chrono::steady_clock::now() > end)
            return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return true;
}

void send(zmq::socket_t& s, const std::string& bytes)
{
    s.send(zmq::buffer(bytes), zmq::send_flags::none);
}

struct fixture {
    private_dir dir;
    zmq::context_t ctx{ 1 };
    zmq::socket_t push{ ctx, ZMQ_PUSH };
    zmq_source::sptr src;
    gr::blocks::vector_sink_c::sptr sink = gr::blocks::vector_sink_c::make();
    gr::top_block_sptr tb = gr::make_top_block("zmq_source_test");

    explicit fixture(std::size_t max_bytes = std::size_t(1) << 20)
    {
        push.set(zmq::sockopt::linger, 0);
        push.bind(dir.endpoint("rx"));
        src = zmq_source::make(
            sizeof(cf), 1, dir.endpoint("rx"), "pull", false, true, 20, max_bytes);
        tb->connect(src, 0, sink, 0);
        tb->start();
    }
    ~fixture()
    {
        tb->stop();
        tb->wait();
    }
};

TEST(ZmqSource, GoodDataArrivesThroughEveryKindOfBadMessage)
{
    fixture f;
    const auto a = random_complex(300, 1), b = random_complex(77, 2),
               c = random_complex(5, 3);
    const auto t_a =
        wire_tag(1000,
                 pmt::intern("rx_time"),
                 pmt::make_tuple(pmt::from_uint64(4), pmt::from_double(0.5)));
    const auto t_b = wire_tag(1300 + 76, pmt::intern("cpi"), pmt::from_uint64(9));
    std::string huge_count = zmq_tag_header(0, {}) + std::string(8, '\0');
    const std::uint64_t ntags = std::uint64_t(1) << 32;
    std::memcpy(&huge_count[11], &ntags, sizeof ntags);
    const std::string good_b = zmq_wire_message(1300, { t_b }, b);
    std::mt19937 rng(5);
    std::string garbage(4096, '\0');
    for (auto& ch : garbage)
        ch = char(rng());
    garbage[0] = 0; // not the magic

    const long rss_before = rss_kib();
    send(f.push, zmq_wire_message(1000, { t_a }, a));
    send(f.push, garbage);
    send(f.push, "");
    send(f.push, good_b + "x");                                        // odd length
    send(f.push, zmq_tag_header(0, {}, 0x1234) + std::string(8, 'y')); // bad magic
    send(f.push, huge_count);                                          // 2^32 tags
    send(f.push, good_b.substr(0, 30));             // truncated in a tag
    send(f.push, zmq_tag_header(0, {}, 0x5FF0, 7)); // bad version
    send(f.push, good_b);
    for (int i = 0; i < 200; ++i) // a flood: more than one work() call's worth
        send(f.push, garbage.substr(0, 1 + i));
    send(f.push, zmq_wire_message(2000, {}, c));

    const std::size_t want = a.size() + b.size() + c.size();
    ASSERT_TRUE(wait_for([&] { return f.sink->data().size() >= want; }))
        << "got " << f.sink->data().size() << " of " << want << " items";
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    auto expected = a;
    expected.insert(expected.end(), b.begin(), b.end());
    expected.insert(expected.end(), c.begin(), c.end());
    EXPECT_EQ(f.sink->data(), expected);

    const auto tags = f.sink->tags();
    ASSERT_EQ(tags.size(), 2u);
    EXPECT_EQ(tags[0].offset, 0u);
    EXPECT_TRUE(pmt::equal(tags[0].value, t_a.value));
    EXPECT_EQ(tags[1].offset, a.size() + 76);
    EXPECT_EQ(pmt::to_uint64(tags[1].value), 9u);

    EXPECT_EQ(f.src->received_messages(), 3u);
    EXPECT_EQ(f.src->received_items(), want);
    const auto drops = f.src->drop_counts();
    EXPECT_EQ(drops.at("empty"), 1u);
    EXPECT_EQ(drops.at("partial_item"), 1u);
    EXPECT_EQ(drops.at("bad_magic"),
              1u + 1u + (200u - 18u)); // garbage, 0x1234, flood >= 19 B
    EXPECT_EQ(drops.at("too_many_tags"), 1u);
    EXPECT_EQ(drops.at("bad_tag"), 1u); // the message cut inside its tag
    EXPECT_EQ(drops.at("bad_version"), 1u);
    EXPECT_EQ(drops.at("truncated_header"), 18u); // flood messages of 1..18 bytes
    EXPECT_EQ(f.src->dropped_messages(), 1u + 1u + 1u + 1u + 1u + 1u + 1u + 200u);
    EXPECT_LT(rss_kib() - rss_before, 64 * 1024) << "RSS grew by more than 64 MiB";
}

TEST(ZmqSource, OversizedMessageIsRefusedAndLaterDataStillArrives)
{
    fixture f(4096);
    const auto a = random_complex(64, 7), big = random_complex(1 << 16, 8);
    send(f.push, zmq_wire_message(0, {}, a));
    ASSERT_TRUE(wait_for([&] { return f.sink->data().size() >= a.size(); }));
    const long rss_before = rss_kib();
    send(f.push, zmq_wire_message(64, {}, big)); // 512 KiB > 4 KiB: libzmq refuses it
    // The refusal closes the sender's connection, and what was queued on it is lost with
    // it; the sender reconnects. Offer fresh messages b_k until they arrive: the items
    // after a must be whole messages b_j, b_j+1, ... in order.
    std::vector<std::vector<cf>> offered;
    for (int k = 0; k < 50 && f.sink->data().size() == a.size(); ++k) {
        offered.push_back(random_complex(32, 100 + k));
        send(f.push, zmq_wire_message(0, {}, offered.back()));
        wait_for([&] { return f.sink->data().size() > a.size(); }, 0.2);
    }
    f.tb->stop();
    f.tb->wait();
    const auto got = f.sink->data();
    EXPECT_GE(f.src->reconnects(), 1u);
    ASSERT_GT(got.size(), a.size()) << "data after the oversized message did not arrive";
    ASSERT_EQ((got.size() - a.size()) % 32, 0u);
    EXPECT_TRUE(std::equal(a.begin(), a.end(), got.begin()));
    std::size_t k = 0;
    for (std::size_t pos = a.size(); pos < got.size(); pos += 32) {
        while (k < offered.size() &&
               !std::equal(offered[k].begin(), offered[k].end(), got.begin() + pos))
            ++k;
        ASSERT_LT(k, offered.size()) << "items at " << pos << " are no offered message";
        ++k;
    }
    EXPECT_LT(rss_kib() - rss_before, 64 * 1024);
}

TEST(ZmqSource, StopsPromptlyWithNoSender)
{
    private_dir dir;
    auto src = zmq_source::make(sizeof(cf), 1, dir.endpoint("none"), "pull", true);
    auto sink = gr::blocks::vector_sink_c::make();
    auto tb = gr::make_top_block("zmq_idle");
    tb->connect(src, 0, sink, 0);
    tb->start();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const auto t0 = std::chrono::steady_clock::now();
    tb->stop();
    tb->wait();
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
    EXPECT_EQ(sink->data().size(), 0u);
}

// An SDR's integers on the wire (input_type sc16 / sc8): items of vlen interleaved int
// I, Q samples come out as gr_complex at 1.0 = full scale, bit for bit the codes' exact
// values, tags on their items; a message that is not whole wire items is dropped as
// partial_item.
TEST(ZmqSource, IntegerWireFormatsArriveAsComplex)
{
    const unsigned vlen = 3;
    for (const char* type : { "sc16", "sc8" }) {
        SCOPED_TRACE(type);
        const bool is16 = std::string(type) == "sc16";
        private_dir dir;
        zmq::context_t ctx{ 1 };
        zmq::socket_t push{ ctx, ZMQ_PUSH };
        push.set(zmq::sockopt::linger, 0);
        push.bind(dir.endpoint("rx"));
        auto src = zmq_source::make(sizeof(cf),
                                    vlen,
                                    dir.endpoint("rx"),
                                    "pull",
                                    false,
                                    true,
                                    20,
                                    std::size_t(1) << 20,
                                    -1,
                                    "",
                                    "",
                                    "",
                                    type);
        auto sink = gr::blocks::vector_sink_c::make(vlen);
        auto tb = gr::make_top_block("zmq_integers");
        tb->connect(src, 0, sink, 0);
        tb->start();
        const std::size_t items_a = 40, items_b = 7;
        const auto q16 = random_codes<std::int16_t>((items_a + items_b) * vlen, 41);
        const auto q8 = random_codes<std::int8_t>((items_a + items_b) * vlen, 42);
        const std::size_t sample_bytes = is16 ? 4 : 2;
        const std::string codes =
            is16 ? std::string(reinterpret_cast<const char*>(q16.data()), q16.size() * 2)
                 : std::string(reinterpret_cast<const char*>(q8.data()), q8.size());
        const auto tag = wire_tag(500 + 5, pmt::intern("cpi"), pmt::from_uint64(3));
        const std::vector<char> part_a(codes.begin(),
                                       codes.begin() + items_a * vlen * sample_bytes);
        const std::vector<char> part_b(codes.begin() + items_a * vlen * sample_bytes,
                                       codes.end());
        send(push, zmq_wire_message(500, { tag }, part_a));
        // One sample short of whole items: refused whole.
        send(
            push,
            zmq_wire_message(
                540, {}, std::vector<char>(part_b.begin(), part_b.end() - sample_bytes)));
        send(push, zmq_wire_message(540, {}, part_b));
        const std::size_t want_samples = (items_a + items_b) * vlen;
        EXPECT_TRUE(wait_for([&] { return sink->data().size() >= want_samples; }))
            << "got " << sink->data().size() << " of " << want_samples << " samples";
        tb->stop();
        tb->wait();
        const auto exact = is16 ? exact_values(q16) : exact_values(q8);
        EXPECT_EQ(sink->data(), exact);
        const auto tags = sink->tags();
        ASSERT_EQ(tags.size(), 1u);
        EXPECT_EQ(tags[0].offset, 5u);
        EXPECT_EQ(src->drop_counts().at("partial_item"), 1u);
        EXPECT_EQ(src->received_items(), items_a + items_b);
    }
}

TEST(ZmqSource, BadParametersNameTheParameter)
{
    const std::string ep = "ipc:///tmp/gpuradar-unused";
    expect_invalid([&] { zmq_source::make(0, 1, ep); }, "itemsize");
    expect_invalid([&] { zmq_source::make(8, 0, ep); }, "vlen");
    expect_invalid([&] { zmq_source::make(8, 1, "udp://x"); }, "address");
    expect_invalid([&] { zmq_source::make(8, 1, ep, "req"); }, "socket_type");
    expect_invalid([&] { zmq_source::make(8, 1, ep, "pull", false, true, 0); },
                   "timeout_ms");
    expect_invalid([&] { zmq_source::make(8, 1, ep, "pull", false, true, 100, 4); },
                   "max_message_bytes");
    expect_invalid(
        [&] { zmq_source::make(8, 1, ep, "pull", false, true, 100, 1024, -2); }, "hwm");
    expect_invalid(
        [&] {
            zmq_source::make(8, 1, ep, "pull", false, true, 100, 1024, -1, "", "short");
        },
        "curve_server_key");
    expect_invalid(
        [&] {
            zmq_source::make(
                8, 1, ep, "pull", false, true, 100, 1024, -1, "", "", "", "cs16");
        },
        "input_type must be one of fc32, sc16, sc8");
    expect_invalid(
        [&] {
            zmq_source::make(
                4, 1, ep, "pull", false, true, 100, 1024, -1, "", "", "", "sc16");
        },
        "itemsize must be 8");
    // The wire item bounds max_message_bytes: sc8 items of 100 samples are 200 bytes.
    expect_invalid(
        [&] {
            zmq_source::make(
                8, 100, ep, "pull", false, true, 100, 199, -1, "", "", "", "sc8");
        },
        "max_message_bytes");
}

} // namespace
} // namespace gpuradar::test
