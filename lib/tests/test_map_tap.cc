/*
 * pulse_doppler_processor's map tap: every Nth CPI's map is published on the `map` port,
 * bit for bit the CPI's stream output, with the metadata of its cpi tag; on the GPU
 * (suite *Cuda*) the copy is counted as device-to-host bytes and the stream is unchanged.
 */
#include "test_support.h"
#include <gnuradio/blocks/message_debug.h>
#include <gnuradio/blocks/vector_sink.h>
#include <gnuradio/blocks/vector_source.h>
#include <gnuradio/gpuradar/device_buffer.h>
#include <gnuradio/gpuradar/pulse_doppler_processor.h>
#include <gnuradio/top_block.h>
#include <pmt/pmt.h>
#include <cmath>
#include <cstring>

namespace gpuradar::test {
namespace {

namespace grr = gr::gpuradar;

constexpr double fs = 10e6, bw = 5e6, pw = 4e-6, prf = 2e3, fc = 3e9, r0 = 1234.5;
constexpr unsigned np = 8, nr = 96, nfft = 16, ch = 2, ncpi = 7, every = 3;
constexpr std::uint64_t first_index = 40;

// The cpi tag of CPI c: every field the tap reads, rx_time as UHD writes it.
gr::tag_t full_cpi_tag(unsigned c)
{
    pmt::pmt_t d = pmt::make_dict();
    auto add = [&d](const char* k, const pmt::pmt_t& v) {
        d = pmt::dict_add(d, pmt::mp(k), v);
    };
    add("index", pmt::from_uint64(first_index + c));
    add("npulses", pmt::from_uint64(np));
    add("nrange", pmt::from_uint64(nr));
    add("fs", pmt::from_double(fs));
    add("prf", pmt::from_double(prf));
    add("fc", pmt::from_double(fc));
    add("r0", pmt::from_double(r0));
    add("rx_time", pmt::make_tuple(pmt::from_uint64(100 + c), pmt::from_double(0.25)));
    gr::tag_t t;
    t.offset = std::uint64_t(c) * np;
    t.key = pmt::mp("cpi");
    t.value = d;
    return t;
}

struct tap_run {
    std::vector<float> stream;
    std::vector<pmt::pmt_t> messages;
    grr::device_buffer::stats transfers;
};

tap_run run_tapped(const char* backend, unsigned tap_every)
{
    const auto x = random_complex(std::size_t(ncpi) * np * ch * nr, 77);
    std::vector<gr::tag_t> tags;
    for (unsigned c = 0; c < ncpi; ++c)
        tags.push_back(full_cpi_tag(c));
    auto tb = gr::make_top_block("tap");
    auto src = gr::blocks::vector_source_c::make(x, false, ch * nr, tags);
    grr::pulse_doppler_processor::params cfg;
    cfg.nrange = nr;
    cfg.npulses = np;
    cfg.nfft = nfft;
    cfg.channels = ch;
    cfg.bandwidth = bw;
    cfg.pulse_width = pw;
    cfg.samp_rate = fs;
    cfg.range_window = "hamming";
    cfg.doppler_window = "hann";
    cfg.backend = backend;
    cfg.tap_every = tap_every;
    auto pd = grr::pulse_doppler_processor::make(cfg);
    auto snk = gr::blocks::vector_sink_f::make(ch * nfft);
    auto msgs = gr::blocks::message_debug::make();
    tb->connect(src, 0, pd, 0);
    tb->connect(pd, 0, snk, 0);
    tb->msg_connect(pd, "map", msgs, "store");
    grr::device_buffer::reset_transfer_stats();
    tb->run();
    tap_run r;
    r.transfers = grr::device_buffer::transfer_stats();
    r.stream = snk->data();
    for (int i = 0; i < msgs->num_messages(); ++i)
        r.messages.push_back(msgs->get_message(i));
    return r;
}

double meta_double(const pmt::pmt_t& meta, const char* key)
{
    return pmt::to_double(pmt::dict_ref(meta, pmt::mp(key), pmt::PMT_NIL));
}
std::uint64_t meta_u64(const pmt::pmt_t& meta, const char* key)
{
    return pmt::to_uint64(pmt::dict_ref(meta, pmt::mp(key), pmt::PMT_NIL));
}

// Every `every`-th CPI is tapped, equal bit for bit to its stream output, with its
// metadata.
void check_taps(const tap_run& r)
{
    const std::size_t map_floats = std::size_t(nr) * ch * nfft;
    ASSERT_EQ(r.stream.size(), ncpi * map_floats);
    const unsigned expected = (ncpi + every - 1) / every;
    ASSERT_EQ(r.messages.size(), expected);
    for (unsigned i = 0; i < expected; ++i) {
        const unsigned c = i * every;
        const pmt::pmt_t meta = pmt::car(r.messages[i]);
        const pmt::pmt_t map = pmt::cdr(r.messages[i]);
        ASSERT_TRUE(pmt::is_f32vector(map));
        ASSERT_EQ(pmt::length(map), map_floats);
        std::size_t len = 0;
        const float* got = pmt::f32vector_elements(map, len);
        EXPECT_EQ(std::memcmp(
                      got, r.stream.data() + c * map_floats, map_floats * sizeof(float)),
                  0)
            << "tap " << i << " differs from CPI " << c << "'s stream output";
        if (c + 1 < ncpi) // not a copy of a neighbouring CPI (the data differ per CPI)
            EXPECT_NE(std::memcmp(got,
                                  r.stream.data() + (c + 1) * map_floats,
                                  map_floats * sizeof(float)),
                      0);
        EXPECT_EQ(meta_u64(meta, "cpi"), first_index + c);
        EXPECT_EQ(meta_u64(meta, "nrange"), nr);
        EXPECT_EQ(meta_u64(meta, "ndoppler"), nfft);
        EXPECT_EQ(meta_u64(meta, "channels"), ch);
        EXPECT_DOUBLE_EQ(meta_double(meta, "fs"), fs);
        EXPECT_DOUBLE_EQ(meta_double(meta, "prf"), prf);
        EXPECT_DOUBLE_EQ(meta_double(meta, "fc"), fc);
        EXPECT_DOUBLE_EQ(meta_double(meta, "r0_m"), r0);
        EXPECT_DOUBLE_EQ(meta_double(meta, "rx_time"), 100.0 + c + 0.25);
        EXPECT_TRUE(pmt::to_bool(pmt::dict_ref(meta, pmt::mp("fftshift"), pmt::PMT_F)));
        EXPECT_FALSE(pmt::to_bool(pmt::dict_ref(meta, pmt::mp("db"), pmt::PMT_T)));
        EXPECT_EQ(
            pmt::symbol_to_string(pmt::dict_ref(meta, pmt::mp("envelope"), pmt::PMT_NIL)),
            "square_law");
    }
}

TEST(MapTap, test_001_every_nth_cpi_equals_its_stream_output)
{
    const auto r = run_tapped("cpu", every);
    check_taps(r);
    EXPECT_EQ(r.transfers.d2h_bytes, 0u) << "the CPU backend copies nothing across PCIe";
}

TEST(MapTap, test_002_off_by_default_and_stream_unchanged)
{
    const auto off = run_tapped("cpu", 0);
    EXPECT_TRUE(off.messages.empty());
    const auto on = run_tapped("cpu", every);
    EXPECT_EQ(on.stream, off.stream) << "tapping changes nothing on the stream";
    const auto all = run_tapped("cpu", 1);
    EXPECT_EQ(all.messages.size(), ncpi);
}

TEST(MapTapCuda, test_010_tap_equals_gpu_stream_and_is_counted)
{
    GPURADAR_REQUIRE_CUDA();
    const auto r = run_tapped("cuda", every);
    check_taps(r);
    const std::size_t map_bytes = std::size_t(nr) * ch * nfft * sizeof(float);
    const unsigned tapped = (ncpi + every - 1) / every;
    EXPECT_EQ(r.transfers.d2h_bytes, (ncpi + tapped) * map_bytes)
        << "the stream output once, plus one copy per tapped CPI";
    const auto cpu = run_tapped("cpu", 0);
    ASSERT_EQ(cpu.stream.size(), r.stream.size());
    double num = 0, den = 0;
    for (std::size_t i = 0; i < cpu.stream.size(); ++i) {
        num += double(r.stream[i] - cpu.stream[i]) * (r.stream[i] - cpu.stream[i]);
        den += double(cpu.stream[i]) * cpu.stream[i];
    }
    EXPECT_LE(std::sqrt(num / den), 1e-5) << "the GPU stream still matches the CPU";
}

} // namespace
} // namespace gpuradar::test
