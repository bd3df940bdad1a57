/* radar_scene_source block: simulator -> framer (echo of a target at range R at gate bin
 * round(2R fs/c) - gate_start, every pulse, rx_time and threshold anchoring), UHD-style
 * tags, truth messages, pacing, bad input naming the parameter or entry. */
#include "invalid_argument_check.h"
#include "test_support.h"
#include <gnuradio/blocks/head.h>
#include <gnuradio/blocks/message_debug.h>
#include <gnuradio/blocks/vector_sink.h>
#include <gnuradio/gpuradar/pulse_framer.h>
#include <gnuradio/gpuradar/radar_scene_source.h>
#include <gnuradio/top_block.h>
#include <pmt/pmt.h>
#include <chrono>
#include <cmath>

namespace gpuradar::test {
namespace {

namespace grr = gr::gpuradar;

//! expect_invalid with this block's prefix in the message.
template <typename F>
void expect_invalid_here(F&& f, const std::string& text)
{
    expect_invalid(std::forward<F>(f), text, "gpuradar::radar_scene_source");
}

constexpr double c0 = 299792458.0;

pmt::pmt_t field(const pmt::pmt_t& d, const char* k)
{
    return pmt::dict_ref(d, pmt::intern(k), pmt::PMT_NIL);
}

struct framed {
    std::vector<gr_complex> data;
    std::vector<gr::tag_t> tags;
    std::vector<pmt::pmt_t> truth;
};

framed scene_to_framer(grr::radar_scene_source::sptr src,
                       grr::pulse_framer::sptr fr,
                       unsigned nrange,
                       std::uint64_t nsamples)
{
    auto tb = gr::make_top_block("scene_framer");
    auto head = gr::blocks::head::make(sizeof(gr_complex), nsamples);
    auto snk = gr::blocks::vector_sink_c::make(nrange);
    auto dbg = gr::blocks::message_debug::make();
    tb->connect(src, 0, head, 0);
    tb->connect(head, 0, fr, 0);
    tb->connect(fr, 0, snk, 0);
    tb->msg_connect(src, "truth", dbg, "store");
    tb->run();
    framed f{ snk->data(), snk->tags(), {} };
    for (int i = 0; i < dbg->num_messages(); ++i)
        f.truth.push_back(dbg->get_message(i));
    return f;
}

void check_echo_bin(
    double pri, double fs, double range, unsigned gs, unsigned nr, unsigned np)
{
    const double prf = fs / pri;
    auto src = grr::radar_scene_source::make(fs,
                                             10e9,
                                             prf,
                                             fs / 4,
                                             64 / fs,
                                             {},
                                             { range },
                                             { 0.0 },
                                             { 20.0 },
                                             "snr_db",
                                             0.0,
                                             0.0);
    auto fr = grr::pulse_framer::make(pri, gs, nr, np, fs, 10e9, "rx_time");
    const auto f = scene_to_framer(src, fr, nr, std::uint64_t(pri * np * 5) + 1);
    const std::int64_t bin = std::llround(2 * range / c0 * fs) - gs;
    ASSERT_GT(bin, 0);
    ASSERT_LT(bin, std::int64_t(nr));
    ASSERT_GE(f.data.size(), 4u * np * nr);
    const double a = 10.0; // 20 dB over a reference power of 1 (noise-free scene)
    for (std::size_t p = 0; p < f.data.size() / nr; ++p) {
        const gr_complex* g = f.data.data() + p * nr;
        ASSERT_EQ(g[bin - 1], gr_complex(0, 0)) << "pulse " << p;
        ASSERT_NEAR(std::abs(g[bin]), a, 1e-4) << "pulse " << p;
        ASSERT_NEAR(std::abs(g[std::min<std::int64_t>(bin + 63, nr - 1)]), a, 1e-4);
    }
    // r0 + bin * c/(2 fs) is the target range within half a bin.
    const double r0 = pmt::to_double(field(f.tags[0].value, "r0"));
    EXPECT_NEAR(r0 + bin * c0 / (2 * fs), range, c0 / (4 * fs));
}

TEST(RadarSceneSourceCpu, test_001_echo_at_expected_gate_bin)
{
    check_echo_bin(1000.0, 10e6, 7500.0, 100, 800, 8);         // integer PRI
    check_echo_bin(10000.0 / 3.0, 10e6, 12345.0, 0, 3000, 16); // fractional PRI
    check_echo_bin(777.77, 5e6, 20000.0, 600, 170, 3);         // gate late in the PRI
}

TEST(RadarSceneSourceCpu, test_002_threshold_trigger_on_leakage)
{
    // Integer PRI: with a fractional one, the edge of a later pulse carries that pulse's
    // rounding, so the schedule from it may be a sample off (documented).
    const double fs = 4e6, pri = 2000.0, range = 9000.0;
    const unsigned gs = 70, nr = 1200, np = 4;
    // Leakage 60 dB over the noise, the framer's level 40 dB over it: above the echo
    // (30 dB), which must not trigger. The stream starts inside a leakage pulse, which is
    // no rising edge: the framer anchors on pulse 1.
    auto src = grr::radar_scene_source::make(fs,
                                             1e9,
                                             fs / pri,
                                             1e6,
                                             16e-6,
                                             {},
                                             { range },
                                             { 0.0 },
                                             { 30.0 },
                                             "snr_db",
                                             0.0,
                                             1.0,
                                             1000.0);
    auto fr = grr::pulse_framer::make(pri, gs, nr, np, fs, 1e9, "threshold", "", 1e4);
    const auto f = scene_to_framer(src, fr, nr, std::uint64_t(pri * np * 6));
    const std::int64_t bin = std::llround(2 * range / c0 * fs) - gs;
    ASSERT_GE(f.data.size(), 4u * np * nr);
    for (std::size_t p = 0; p < f.data.size() / nr; ++p) {
        const gr_complex* g = f.data.data() + p * nr;
        // 30 dB SNR: the echo starts exactly at the bin (|x| ~ 31.6 vs noise ~ 1).
        EXPECT_LT(std::abs(g[bin - 1]), 8.0) << "pulse " << p;
        EXPECT_GT(std::abs(g[bin]), 20.0) << "pulse " << p;
    }
    EXPECT_EQ(fr->dropped_cpis(), 0u);
}

TEST(RadarSceneSourceCpu, test_003_tags_and_truth_messages)
{
    const double fs = 1e6, prf = 1e3;
    auto src = grr::radar_scene_source::make(fs,
                                             3e9,
                                             prf,
                                             2e5,
                                             20e-6,
                                             {},
                                             { 3000.0, 6000.0 },
                                             { 15.0, -40.0 },
                                             { 10.0, 5.0 },
                                             "snr_db",
                                             0.0,
                                             1.0,
                                             0.0,
                                             0.0,
                                             0.0,
                                             0.0,
                                             false,
                                             10,
                                             1234.5);
    auto tb = gr::make_top_block("scene");
    auto head = gr::blocks::head::make(sizeof(gr_complex), 50000); // pulses 0..49
    auto snk = gr::blocks::vector_sink_c::make();
    auto dbg = gr::blocks::message_debug::make();
    tb->connect(src, 0, head, 0);
    tb->connect(head, 0, snk, 0);
    tb->msg_connect(src, "truth", dbg, "store");
    tb->run();
    // UHD-style tags on sample 0.
    std::map<std::string, pmt::pmt_t> tags;
    for (const auto& t : snk->tags()) {
        EXPECT_EQ(t.offset, 0u);
        tags[pmt::symbol_to_string(t.key)] = t.value;
    }
    ASSERT_EQ(tags.count("rx_time"), 1u);
    EXPECT_EQ(pmt::to_uint64(pmt::tuple_ref(tags["rx_time"], 0)), 1234u);
    EXPECT_DOUBLE_EQ(pmt::to_double(pmt::tuple_ref(tags["rx_time"], 1)), 0.5);
    EXPECT_DOUBLE_EQ(pmt::to_double(tags["rx_rate"]), fs);
    EXPECT_DOUBLE_EQ(pmt::to_double(tags["rx_freq"]), 3e9);
    // Truth: 2 targets at pulses 0, 10, 20, 30, 40 (and later ones: the source runs
    // ahead of the head block by up to a buffer; truth follows what it generated).
    ASSERT_GE(dbg->num_messages(), 10);
    EXPECT_EQ(dbg->num_messages() % 2, 0);
    for (int i = 0; i < 10; ++i) {
        const pmt::pmt_t m = dbg->get_message(i);
        const std::uint64_t tgt = pmt::to_uint64(field(m, "target"));
        const std::uint64_t k = pmt::to_uint64(field(m, "pulse"));
        EXPECT_EQ(tgt, std::uint64_t(i % 2));
        EXPECT_EQ(k, std::uint64_t(10 * (i / 2)));
        EXPECT_EQ(pmt::to_uint64(field(m, "sample")), k * 1000);
        const double v = tgt == 0 ? 15.0 : -40.0, r0 = tgt == 0 ? 3000.0 : 6000.0;
        const double t = k * 1e-3;
        EXPECT_NEAR(pmt::to_double(field(m, "range_m")), r0 - v * t, 1e-9);
        EXPECT_NEAR(pmt::to_double(field(m, "doppler_hz")), 2 * v * 3e9 / c0, 1e-9);
        EXPECT_NEAR(
            pmt::to_double(field(m, "delay_samples")), 2 * (r0 - v * t) * fs / c0, 1e-9);
        EXPECT_DOUBLE_EQ(pmt::to_double(field(m, "snr_db")), tgt == 0 ? 10.0 : 5.0);
        const pmt::pmt_t rx = field(m, "rx_time");
        EXPECT_NEAR(pmt::to_uint64(pmt::tuple_ref(rx, 0)) +
                        pmt::to_double(pmt::tuple_ref(rx, 1)),
                    1234.5 + t,
                    1e-9);
    }
    EXPECT_EQ(src->waveform().size(), 20u);
    EXPECT_DOUBLE_EQ(src->pri_samples(), 1000.0);
}

TEST(RadarSceneSourceCpu, test_004_paced_runs_in_real_time)
{
    const double fs = 1e6;
    auto src = grr::radar_scene_source::make(fs,
                                             1e9,
                                             1e3,
                                             1e5,
                                             1e-4,
                                             {},
                                             {},
                                             {},
                                             {},
                                             "snr_db",
                                             0.0,
                                             1.0,
                                             0.0,
                                             0.0,
                                             0.0,
                                             0.0,
                                             true);
    auto tb = gr::make_top_block("paced");
    auto head = gr::blocks::head::make(sizeof(gr_complex), 200000); // 0.2 s
    auto snk = gr::blocks::vector_sink_c::make();
    tb->connect(src, 0, head, 0);
    tb->connect(head, 0, snk, 0);
    const auto t0 = std::chrono::steady_clock::now();
    tb->run();
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_GE(s, 0.18);
    EXPECT_LT(s, 1.0);
    EXPECT_EQ(snk->data().size(), 200000u);
}

TEST(RadarSceneSourceCpu, test_005_bad_parameters_name_them)
{
    using S = grr::radar_scene_source;
    auto mk = [](std::vector<double> r,
                 std::vector<double> v,
                 std::vector<double> a,
                 std::string unit = "snr_db") {
        S::make(1e6, 1e9, 1e3, 1e5, 1e-4, {}, r, v, a, unit);
    };
    EXPECT_NO_THROW(mk({ 100, 200 }, { 1, 2 }, { 3, 4 }));
    expect_invalid_here([&] { mk({ 100, -200 }, { 1, 2 }, { 3, 4 }); }, "ranges[1]");
    expect_invalid_here([&] { mk({ 100, 200 }, { 1 }, { 3, 4 }); }, "velocities");
    expect_invalid_here([&] { mk({ 100, 200 }, { 1, 2 }, { 3, 4, 5 }); }, "amplitudes");
    expect_invalid_here([&] { mk({ 100 }, { NAN }, { 3 }); }, "velocities[0]");
    expect_invalid_here([&] { mk({ 100 }, { 1 }, { -3 }, "rcs_m2"); }, "amplitudes[0]");
    expect_invalid_here([&] { mk({ 100 }, { 1 }, { 3 }, "watts"); }, "amplitude_unit");
    expect_invalid_here([] { S::make(0, 1e9, 1e3, 1e5, 1e-4, {}, {}, {}, {}); }, "fs");
    expect_invalid_here([] { S::make(1e6, 0, 1e3, 1e5, 1e-4, {}, {}, {}, {}); }, "fc");
    expect_invalid_here([] { S::make(1e6, 1e9, 0, 1e5, 1e-4, {}, {}, {}, {}); }, "prf");
    // A 100-sample pulse fits a PRI of 100 samples, not of 99.
    EXPECT_NO_THROW(S::make(1e6, 1e9, 1e4, 1e5, 1e-4, {}, {}, {}, {}));
    expect_invalid_here([] { S::make(1e6, 1e9, 1e6 / 99, 1e5, 1e-4, {}, {}, {}, {}); },
                        "prf");
    expect_invalid_here([] { S::make(1e6, 1e9, 1e3, 2e6, 1e-4, {}, {}, {}, {}); },
                        "bandwidth");
    expect_invalid_here([] { S::make(1e6, 1e9, 1e3, 1e5, 0.0, {}, {}, {}, {}); },
                        "pulse_width");
    expect_invalid_here(
        [] { S::make(1e6, 1e9, 1e3, 1e5, 1e-4, {}, {}, {}, {}, "snr_db", 0, -1.0); },
        "noise_power");
    expect_invalid_here(
        [] {
            S::make(1e6,
                    1e9,
                    1e3,
                    1e5,
                    1e-4,
                    {},
                    {},
                    {},
                    {},
                    "snr_db",
                    0,
                    1.0,
                    0,
                    0,
                    0,
                    0,
                    false,
                    0,
                    -1.0);
        },
        "start_time");
    // A given waveform replaces the LFM (its parameters are then not used).
    EXPECT_NO_THROW(
        S::make(1e6, 1e9, 1e3, 0, 0, { gr_complex(1, 0), gr_complex(0, 1) }, {}, {}, {}));
}

} // namespace
} // namespace gpuradar::test
