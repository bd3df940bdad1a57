/* stripmap_source block: the stream equals the simulator's pulses, the `stripmap` tag
 * carries the acquisition, max_pulses ends the stream, bad input names the parameter. */
#include "invalid_argument_check.h"
#include "stripmap_scene.h"
#include "test_support.h"
#include <gnuradio/blocks/head.h>
#include <gnuradio/blocks/vector_sink.h>
#include <gnuradio/top_block.h>
#include <pmt/pmt.h>

namespace gpuradar::test {
namespace {

namespace sim = kernels::stripmap_sim;

template <typename F>
void expect_invalid_here(F&& f, const std::string& text)
{
    expect_invalid(std::forward<F>(f), text, "gpuradar::stripmap_source");
}

double dict_double(const pmt::pmt_t& d, const char* k)
{
    return pmt::to_double(pmt::dict_ref(d, pmt::intern(k), pmt::PMT_NIL));
}

TEST(StripmapSource, StreamEqualsTheSimulatorAndEndsAfterMaxPulses)
{
    auto p = small_stripmap();
    p.squint_rad = 0.05; // a parameter the test would see ignored
    const std::vector<sim::point_target> targets = { target_at(p, 2200, 30.0, 1.0),
                                                     target_at(p, 2450, 60.0, 0.5) };
    const std::size_t n = 300; // several work() calls
    auto src = make_source(p, targets, 0.1, n, -12.5);
    auto snk = gr::blocks::vector_sink_c::make(unsigned(p.nrange));
    auto tb = gr::make_top_block("stripmap_source");
    tb->connect(src, 0, snk, 0);
    tb->run();
    const auto ref = sim::simulate(p, targets, 0, n, -12.5, 0.1, 7);
    const auto got = snk->data();
    ASSERT_EQ(got.size(), ref.size()); // exactly max_pulses
    for (std::size_t i = 0; i < ref.size(); ++i)
        ASSERT_EQ(got[i], ref[i]) << "sample " << i;
    EXPECT_EQ(src->pulses(), n);

    const auto tags = snk->tags();
    ASSERT_EQ(tags.size(), 1u);
    EXPECT_EQ(tags[0].offset, 0u);
    EXPECT_EQ(pmt::symbol_to_string(tags[0].key), "stripmap");
    const auto& d = tags[0].value;
    EXPECT_EQ(dict_double(d, "fc"), p.fc_hz);
    EXPECT_EQ(dict_double(d, "bandwidth"), p.bandwidth_hz);
    EXPECT_EQ(dict_double(d, "pulse_width"), p.pulse_width_s);
    EXPECT_EQ(dict_double(d, "fs"), p.fs_hz);
    EXPECT_EQ(dict_double(d, "prf"), p.prf_hz);
    EXPECT_EQ(dict_double(d, "velocity"), p.velocity_mps);
    EXPECT_EQ(dict_double(d, "altitude"), p.altitude_m);
    EXPECT_EQ(dict_double(d, "r0"), p.near_range_m);
    EXPECT_EQ(dict_double(d, "squint"), p.squint_rad);
    EXPECT_EQ(dict_double(d, "antenna_length"), p.antenna_length_m);
    EXPECT_EQ(dict_double(d, "y0"), -12.5);
    EXPECT_EQ(dict_double(d, "dy"), p.velocity_mps / p.prf_hz);
    EXPECT_EQ(pmt::to_uint64(pmt::dict_ref(d, pmt::intern("nrange"), pmt::PMT_NIL)),
              p.nrange);
    EXPECT_TRUE(pmt::to_bool(pmt::dict_ref(d, pmt::intern("up_chirp"), pmt::PMT_NIL)));
    EXPECT_NEAR(src->far_aperture_pulses(),
                p.aperture_pulses(p.near_range_m + 255 * p.range_spacing_m()),
                1e-9);
}

TEST(StripmapSource, SceneReachesTheSimulatorUnswapped)
{
    const auto p = small_stripmap();
    // nx != ny and x0 != y0: a swapped or ignored scene parameter changes the stream.
    sim::reflectivity_grid g;
    g.nx = 3;
    g.x0_m = target_at(p, 2300, 0.0).x_m;
    g.y0_m = 40.0;
    g.spacing_m = 1.5;
    for (int c = 0; c < 12; ++c)
        g.reflectivity.emplace_back(float(c % 5) * 0.25f, float(c % 3) * -0.5f);
    const std::size_t n = 150;
    auto src = make_source(p, {}, 0.0, n, 0.0, g);
    auto snk = gr::blocks::vector_sink_c::make(unsigned(p.nrange));
    auto tb = gr::make_top_block("stripmap_source");
    tb->connect(src, 0, snk, 0);
    tb->run();
    const auto ref = sim::simulate(p, {}, g, 0, n, 0.0, 0.0, 7);
    const auto got = snk->data();
    ASSERT_EQ(got.size(), ref.size());
    double energy = 0;
    for (std::size_t i = 0; i < ref.size(); ++i) {
        ASSERT_EQ(got[i], ref[i]) << "sample " << i;
        energy += std::norm(ref[i]);
    }
    EXPECT_GT(energy, 100.0); // the scene lies in the beam during these pulses
}

TEST(StripmapSource, BadSceneNamesItsParameter)
{
    const auto p = small_stripmap();
    auto make = [&](std::size_t nx, double spacing, float last) {
        sim::reflectivity_grid g;
        g.nx = nx;
        g.spacing_m = spacing;
        g.reflectivity.assign(6, { 1.0f, 0.0f });
        g.reflectivity.back() = { last, 0.0f };
        make_source(p, {}, 0.0, 1, 0.0, g);
    };
    expect_invalid_here([&] { make(4, 1.0, 1.0f); }, "scene_nx");
    expect_invalid_here([&] { make(0, 1.0, 1.0f); }, "scene_nx");
    expect_invalid_here([&] { make(2, -1.0, 1.0f); }, "scene_spacing");
    expect_invalid_here([&] { make(2, 1.0, NAN); }, "scene_reflectivity[5]");
}

TEST(StripmapSource, EndlessWhenMaxPulsesIsZero)
{
    const auto p = small_stripmap();
    auto src = make_source(p, { target_at(p, 2300, 10.0) }, 0.0, 0);
    auto head = gr::blocks::head::make(p.nrange * sizeof(gr_complex), 500);
    auto snk = gr::blocks::vector_sink_c::make(unsigned(p.nrange));
    auto tb = gr::make_top_block("stripmap_source");
    tb->connect(src, 0, head, 0);
    tb->connect(head, 0, snk, 0);
    tb->run();
    const auto got = snk->data();
    EXPECT_EQ(got.size(), 500 * p.nrange);
    EXPECT_GT(std::abs(got[20 * p.nrange + 100]) + std::abs(got[13 * p.nrange + 120]),
              0.0f);
}

TEST(StripmapSource, BadParametersNameThemselves)
{
    const auto p = small_stripmap();
    auto make = [&](std::vector<double> x,
                    std::vector<double> y,
                    std::vector<double> z,
                    std::vector<double> a,
                    double noise = 0.0,
                    double y0 = 0.0,
                    double prf = 200.0,
                    unsigned nrange = 256) {
        gr::gpuradar::stripmap_source::make(p.fc_hz,
                                            p.bandwidth_hz,
                                            p.pulse_width_s,
                                            true,
                                            p.fs_hz,
                                            prf,
                                            p.velocity_mps,
                                            p.altitude_m,
                                            p.near_range_m,
                                            nrange,
                                            0.0,
                                            p.antenna_length_m,
                                            x,
                                            y,
                                            z,
                                            a,
                                            noise,
                                            y0);
    };
    const double nan = std::nan("");
    expect_invalid_here([&] { make({ 1, 2 }, { 1 }, {}, {}); }, "target_y");
    expect_invalid_here([&] { make({ 1, nan }, { 1, 2 }, {}, {}); }, "target_x[1]");
    expect_invalid_here([&] { make({ 1 }, { INFINITY }, {}, {}); }, "target_y[0]");
    expect_invalid_here([&] { make({ 1 }, { 1 }, { 1, 2 }, {}); }, "target_z");
    expect_invalid_here([&] { make({ 1 }, { 1 }, {}, { nan }); }, "target_amplitude[0]");
    expect_invalid_here([&] { make({ 1 }, { 1 }, {}, {}, -1.0); }, "noise_sigma");
    expect_invalid_here([&] { make({ 1 }, { 1 }, {}, {}, 0.0, nan); }, "first_pulse_y");
    expect_invalid_here([&] { make({ 1 }, { 1 }, {}, {}, 0.0, 0.0, 50.0); }, "prf");
    expect_invalid_here([&] { make({ 1 }, { 1 }, {}, {}, 0.0, 0.0, 200.0, 1); },
                        "nrange");
}

TEST(StripmapSource, NamedParametersLeftUnsetAreRefusedByName)
{
    // stripmap_source::params: the acquisition fields without a default start at 0 and
    // make() names the first one left so; set, the block is the flat make()'s.
    gr::gpuradar::stripmap_source::params s;
    s.target_x = { 2300.0 };
    s.target_y = { 10.0 };
    expect_invalid_here([&] { gr::gpuradar::stripmap_source::make(s); }, "fc");
    s.acquisition = gr::gpuradar::acquisition_of(small_stripmap());
    s.acquisition.antenna_length = 0.0;
    expect_invalid_here([&] { gr::gpuradar::stripmap_source::make(s); },
                        "antenna_length");
    s.acquisition.antenna_length = small_stripmap().antenna_length_m;
    const auto src = gr::gpuradar::stripmap_source::make(s);
    EXPECT_GT(src->far_aperture_pulses(), 10.0);
}

} // namespace
} // namespace gpuradar::test
