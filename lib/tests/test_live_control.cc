/*
 * Live control: setters called while a flowgraph runs take effect at the next CPI (pulse,
 * for the scene source) and never inside one. The gated source holds the stream at a
 * known CPI while the setter is called, so each CPI's output is compared bit for bit with
 * blocks made with the old and with the new parameters. Bad setter values throw
 * std::invalid_argument naming the parameter and keep the old value. CPU backend.
 */
#include "gated_source.h"
#include "invalid_argument_check.h"
#include "test_support.h"
#include <gnuradio/blocks/head.h>
#include <gnuradio/blocks/message_debug.h>
#include <gnuradio/blocks/vector_sink.h>
#include <gnuradio/blocks/vector_source.h>
#include <gnuradio/gpuradar/cfar_1d.h>
#include <gnuradio/gpuradar/cfar_2d.h>
#include <gnuradio/gpuradar/pulse_doppler_processor.h>
#include <gnuradio/gpuradar/pulse_framer.h>
#include <gnuradio/gpuradar/radar_scene_source.h>
#include <gnuradio/top_block.h>
#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <random>
#include <thread>

namespace gpuradar::test {
namespace {

namespace grr = gr::gpuradar;
using namespace std::chrono_literals;

constexpr double fs = 10e6, bw = 5e6, pw = 2e-6;
constexpr unsigned np = 8, nr = 64, nfft = 16, ncpi = 6, switch_cpi = 3;

template <class T>
std::vector<char> as_bytes(const std::vector<T>& v)
{
    std::vector<char> b(v.size() * sizeof(T));
    std::memcpy(b.data(), v.data(), b.size());
    return b;
}

//! Waits until `sink` holds n items (the blocks before it have finished those CPIs).
template <class Sink>
void wait_for_items(const Sink& sink, std::size_t n)
{
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    while (sink->data().size() < n && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(1ms);
    ASSERT_GE(sink->data().size(), n) << "the flowgraph stalled";
}

/*!
 * Runs `block` (one stream in, one float-vector stream out of `out_vlen`) on `data`:
 * first the CPIs before `switch_cpi`, then `change()`, then the rest. Returns the output.
 */
std::vector<float> run_gated(gr::basic_block_sptr block,
                             const std::vector<char>& data,
                             std::size_t in_itemsize,
                             std::size_t in_per_cpi,
                             std::size_t out_vlen,
                             std::size_t out_per_cpi,
                             const std::function<void()>& change)
{
    auto tb = gr::make_top_block("live");
    auto src = gated_source::make(data, in_itemsize, {});
    auto snk = gr::blocks::vector_sink_f::make(out_vlen);
    tb->connect(src, 0, block, 0);
    tb->connect(block, 0, snk, 0);
    tb->start();
    src->open_to(switch_cpi * in_per_cpi);
    wait_for_items(snk, switch_cpi * out_per_cpi * out_vlen);
    if (change)
        change();
    src->open_all();
    tb->wait();
    return snk->data();
}

//! CPI c of a run's output.
std::vector<float> cpi_of(const std::vector<float>& y, std::size_t cpi_floats, unsigned c)
{
    return { y.begin() + c * cpi_floats, y.begin() + (c + 1) * cpi_floats };
}

//! Before the switch every CPI equals the old run, from it on the new one (bit for bit).
void expect_switch_at_boundary(const std::vector<float>& live,
                               const std::vector<float>& old_ref,
                               const std::vector<float>& new_ref,
                               std::size_t cpi_floats)
{
    ASSERT_EQ(live.size(), ncpi * cpi_floats);
    ASSERT_EQ(old_ref.size(), live.size());
    ASSERT_EQ(new_ref.size(), live.size());
    for (unsigned c = 0; c < ncpi; ++c) {
        const auto got = cpi_of(live, cpi_floats, c);
        const auto& ref = c < switch_cpi ? old_ref : new_ref;
        EXPECT_EQ(got, cpi_of(ref, cpi_floats, c))
            << "CPI " << c << " should use the " << (c < switch_cpi ? "old" : "new")
            << " parameters";
        // The change is visible: the two configurations differ on this CPI.
        EXPECT_NE(cpi_of(old_ref, cpi_floats, c), cpi_of(new_ref, cpi_floats, c));
    }
}

// ---- pulse_doppler_processor ----

struct pd_config {
    std::string mti = "none", range_window = "rectangular",
                doppler_window = "rectangular";
    bool db = false;
};

grr::pulse_doppler_processor::sptr make_processor(const pd_config& c)
{
    grr::pulse_doppler_processor::params cfg;
    cfg.nrange = nr;
    cfg.npulses = np;
    cfg.nfft = nfft;
    cfg.bandwidth = bw;
    cfg.pulse_width = pw;
    cfg.samp_rate = fs;
    cfg.range_window = c.range_window;
    cfg.range_nbar = 5;
    cfg.range_sll_db = 30;
    cfg.mti = c.mti;
    cfg.doppler_window = c.doppler_window;
    cfg.doppler_nbar = 5;
    cfg.doppler_sll_db = 30;
    cfg.db = c.db;
    cfg.backend = "cpu";
    return grr::pulse_doppler_processor::make(cfg);
}

std::vector<cfloat> pulses() { return random_complex(std::size_t(ncpi) * np * nr, 91); }

std::vector<float>
run_processor(const pd_config& c,
              const std::function<void(grr::pulse_doppler_processor&)>& change)
{
    auto pd = make_processor(c);
    return run_gated(pd,
                     as_bytes(pulses()),
                     sizeof(cfloat) * nr,
                     np,
                     nfft,
                     nr,
                     change ? std::function<void()>([&] { change(*pd); }) : nullptr);
}

void check_processor_change(const pd_config& from,
                            const pd_config& to,
                            const std::function<void(grr::pulse_doppler_processor&)>& set)
{
    const auto live = run_processor(from, set);
    expect_switch_at_boundary(live,
                              run_processor(from, nullptr),
                              run_processor(to, nullptr),
                              std::size_t(nr) * nfft);
}

TEST(LiveControl, test_001_processor_mti_changes_at_the_next_cpi)
{
    pd_config to;
    to.mti = "two_pulse";
    check_processor_change({}, to, [](auto& pd) { pd.set_mti("two_pulse"); });
}

TEST(LiveControl, test_002_processor_doppler_window_changes_at_the_next_cpi)
{
    pd_config to;
    to.doppler_window = "taylor";
    check_processor_change(
        {}, to, [](auto& pd) { pd.set_doppler_window("taylor", 5, 30, 6); });
}

TEST(LiveControl, test_003_processor_range_window_and_db_change_at_the_next_cpi)
{
    pd_config to;
    to.range_window = "hann";
    to.db = true;
    check_processor_change({}, to, [](auto& pd) {
        pd.set_range_window("hann", 5, 30, 6);
        pd.set_db(true);
    });
}

TEST(LiveControl, test_004_processor_bad_values_raise_and_keep_the_old_ones)
{
    pd_config to;
    to.mti = "two_pulse";
    const auto live = run_processor({}, [](auto& pd) {
        expect_invalid([&] { pd.set_mti("four_pulse"); }, "mti");
        expect_invalid([&] { pd.set_range_window("welch", 4, 35, 6); }, "window");
        expect_invalid([&] { pd.set_doppler_window("taylor", 0, 35, 6); }, "nbar");
        expect_invalid([&] { pd.set_doppler_window("kaiser", 4, 35, -1); }, "beta");
        pd.set_mti("two_pulse"); // a good change after the bad ones still lands
    });
    expect_switch_at_boundary(live,
                              run_processor({}, nullptr),
                              run_processor(to, nullptr),
                              std::size_t(nr) * nfft);
}

// Setters racing with work(): every CPI is wholly one configuration or the other.
TEST(LiveControl, test_005_processor_never_mixes_two_windows_in_a_cpi)
{
    const unsigned many = 40;
    std::vector<cfloat> x;
    const auto one = random_complex(std::size_t(np) * nr, 5);
    for (unsigned c = 0; c < many; ++c)
        x.insert(x.end(), one.begin(), one.end()); // the same CPI: two possible outputs
    auto run_fixed = [&](const std::string& w) {
        pd_config c;
        c.doppler_window = w;
        auto tb = gr::make_top_block("fixed");
        auto src = gr::blocks::vector_source_c::make(one, false, nr);
        auto pd = make_processor(c);
        auto snk = gr::blocks::vector_sink_f::make(nfft);
        tb->connect(src, 0, pd, 0);
        tb->connect(pd, 0, snk, 0);
        tb->run();
        return snk->data();
    };
    const auto rect = run_fixed("rectangular"), hann = run_fixed("hann");
    ASSERT_NE(rect, hann);

    auto tb = gr::make_top_block("race");
    auto src = gr::blocks::vector_source_c::make(x, false, nr);
    auto pd = make_processor({});
    auto snk = gr::blocks::vector_sink_f::make(nfft);
    tb->connect(src, 0, pd, 0);
    tb->connect(pd, 0, snk, 0);
    std::atomic<bool> done{ false };
    std::thread toggler([&] {
        for (unsigned i = 0; !done; ++i)
            pd->set_doppler_window(i % 2 ? "rectangular" : "hann", 4, 35, 6);
    });
    tb->run();
    done = true;
    toggler.join();
    const auto y = snk->data();
    ASSERT_EQ(y.size(), std::size_t(many) * nr * nfft);
    for (unsigned c = 0; c < many; ++c) {
        const auto got = cpi_of(y, std::size_t(nr) * nfft, c);
        EXPECT_TRUE(got == rect || got == hann) << "CPI " << c << " mixes two windows";
    }
}

// ---- cfar_2d / cfar_1d ----

//! Exponential (square-law noise) maps with a few strong cells, ncpi CPIs.
std::vector<float> power_maps(unsigned cells_per_cpi)
{
    std::mt19937 g(17);
    std::exponential_distribution<float> e(1.0f);
    std::vector<float> m(std::size_t(ncpi) * cells_per_cpi);
    for (auto& v : m)
        v = e(g);
    for (std::size_t i = 7; i < m.size(); i += 97)
        m[i] *= 30.0f; // targets of assorted strength
    return m;
}

std::vector<float> run_cfar2d(double pfa,
                              const std::string& variant,
                              int guard_range,
                              const std::function<void(grr::cfar_2d&)>& change)
{
    auto cf = grr::cfar_2d::make(nr,
                                 nfft,
                                 1,
                                 guard_range,
                                 4,
                                 1,
                                 2,
                                 pfa,
                                 variant,
                                 0,
                                 "clip",
                                 "wrap",
                                 false,
                                 4096,
                                 "cpu");
    // The mask is uint8: convert to float for the shared comparison.
    auto tb = gr::make_top_block("cfar");
    auto src =
        gated_source::make(as_bytes(power_maps(nr * nfft)), sizeof(float) * nfft, {});
    auto snk = gr::blocks::vector_sink_b::make(nfft);
    tb->connect(src, 0, cf, 0);
    tb->connect(cf, 0, snk, 0);
    tb->start();
    src->open_to(switch_cpi * nr);
    wait_for_items(snk, std::size_t(switch_cpi) * nr * nfft);
    if (change)
        change(*cf);
    src->open_all();
    tb->wait();
    const auto m = snk->data();
    return { m.begin(), m.end() };
}

TEST(LiveControl, test_010_cfar_2d_pfa_changes_at_the_next_cpi)
{
    const auto live = run_cfar2d(1e-2, "ca", 1, [](auto& cf) { cf.set_pfa(1e-5); });
    expect_switch_at_boundary(live,
                              run_cfar2d(1e-2, "ca", 1, nullptr),
                              run_cfar2d(1e-5, "ca", 1, nullptr),
                              std::size_t(nr) * nfft);
}

TEST(LiveControl, test_011_cfar_2d_variant_and_guard_change_at_the_next_cpi)
{
    const auto live = run_cfar2d(1e-2, "ca", 1, [](auto& cf) {
        cf.set_variant("os");
        cf.set_guard_range(2);
    });
    expect_switch_at_boundary(live,
                              run_cfar2d(1e-2, "ca", 1, nullptr),
                              run_cfar2d(1e-2, "os", 2, nullptr),
                              std::size_t(nr) * nfft);
}

TEST(LiveControl, test_012_cfar_bad_values_raise_and_keep_the_old_ones)
{
    const auto live = run_cfar2d(1e-2, "ca", 1, [](auto& cf) {
        const double alpha = cf.alpha();
        expect_invalid([&] { cf.set_pfa(1.5); }, "pfa");
        expect_invalid([&] { cf.set_pfa(0.0); }, "pfa");
        expect_invalid([&] { cf.set_variant("median"); }, "variant");
        expect_invalid([&] { cf.set_guard_range(-1); }, "guard_range");
        expect_invalid([&] { cf.set_train_doppler(-2); }, "train_doppler");
        EXPECT_EQ(cf.alpha(), alpha);
    });
    EXPECT_EQ(live, run_cfar2d(1e-2, "ca", 1, nullptr))
        << "the bad values changed nothing";

    auto c1 = grr::cfar_1d::make(nr, 1, 1, 8, 1e-3, "ca", 0, "clip", false, 1, 64, "cpu");
    expect_invalid([&] { c1->set_pfa(-1); }, "pfa");
    expect_invalid([&] { c1->set_train(0); }, "train");
    expect_invalid([&] { c1->set_variant("x"); }, "variant");
    const int n = c1->training_cells();
    c1->set_train(4); // pending until the next group: the running window is unchanged
    EXPECT_EQ(c1->training_cells(), n);
}

// ---- radar_scene_source and pulse_framer ----

TEST(LiveControl, test_020_scene_targets_and_noise_change_at_a_pulse_start)
{
    constexpr double sfs = 1e6, prf = 1e3; // PRI: 1000 samples
    constexpr std::size_t total = 300000;  // 0.3 s paced
    auto make = [&](const std::vector<double>& ranges, double noise, bool paced) {
        return grr::radar_scene_source::make(sfs,
                                             3e9,
                                             prf,
                                             2e5,
                                             20e-6,
                                             {},
                                             ranges,
                                             { 10.0 },
                                             { 20.0 },
                                             "snr_db",
                                             0,
                                             noise,
                                             0,
                                             0,
                                             0,
                                             0,
                                             paced,
                                             0,
                                             0,
                                             7);
    };
    auto run = [&](grr::radar_scene_source::sptr src,
                   const std::function<void()>& change) {
        auto tb = gr::make_top_block("scene");
        auto head = gr::blocks::head::make(sizeof(gr_complex), total);
        auto snk = gr::blocks::vector_sink_c::make();
        tb->connect(src, 0, head, 0);
        tb->connect(head, 0, snk, 0);
        tb->start();
        if (change) {
            std::this_thread::sleep_for(100ms);
            change();
        }
        tb->wait();
        return snk->data();
    };
    auto live_src = make({ 9000.0 }, 1.0, true);
    const auto live = run(live_src, [&] {
        expect_invalid(
            [&] {
                live_src->set_targets({ 1.0, 2.0 }, { 0.0 }, { 1.0 });
            },
            "velocities");
        expect_invalid([&] { live_src->set_noise_power(-1.0); }, "noise_power");
        live_src->set_targets({ 45000.0 }, { 10.0 }, { 20.0 });
        live_src->set_noise_power(4.0);
    });
    const auto old_ref = run(make({ 9000.0 }, 1.0, false), nullptr);
    const auto new_ref = run(make({ 45000.0 }, 4.0, false), nullptr);
    ASSERT_EQ(live.size(), total);
    std::size_t b = 0; // first sample that differs from the old scene
    while (b < total && live[b] == old_ref[b])
        ++b;
    ASSERT_GT(b, 0u);
    ASSERT_LT(b, total) << "the change never landed";
    EXPECT_EQ(b % 1000, 0u) << "the scene changed inside a pulse interval";
    for (std::size_t i = b; i < total; ++i)
        ASSERT_EQ(live[i], new_ref[i]) << "sample " << i << " after the change";
}

TEST(LiveControl, test_021_framer_threshold_checked_like_make)
{
    auto fr = grr::pulse_framer::make(
        100, 0, 50, 4, 1e6, 1e9, "threshold", "trigger", 0.5, "cpu");
    expect_invalid([&] { fr->set_threshold(0.0); }, "threshold");
    expect_invalid([&] { fr->set_threshold(-3.0); }, "threshold");
    // The kept level still frames: a pulse of |x|^2 = 0.64 (between the rejected values
    // and a raised level) triggers at 0.5 but not at 1.0.
    auto frame = [&](double level) {
        auto f = grr::pulse_framer::make(
            100, 0, 50, 4, 1e6, 1e9, "threshold", "trigger", 0.5, "cpu");
        if (level != 0.5)
            f->set_threshold(level);
        std::vector<gr_complex> x(100 * 12, gr_complex(0, 0));
        for (std::size_t k = 0; k < 12; ++k)
            x[k * 100 + 10] = gr_complex(0.8f, 0.0f);
        auto tb = gr::make_top_block("fr");
        auto src = gr::blocks::vector_source_c::make(x);
        auto snk = gr::blocks::vector_sink_c::make(50);
        tb->connect(src, 0, f, 0);
        tb->connect(f, 0, snk, 0);
        tb->run();
        return f->emitted_cpis();
    };
    EXPECT_GT(frame(0.5), 0u);
    EXPECT_EQ(frame(1.0), 0u) << "set_threshold was ignored";
}

} // namespace
} // namespace gpuradar::test
