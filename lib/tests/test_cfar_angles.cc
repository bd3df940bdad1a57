/*
 * The angle plumbing of cfar_2d (lib/cfar_angles.h, lib/beam_geometry_tag.h): the beam
 * geometry through a cpi dict and back, its rejection when it does not fit, one listing
 * per target across beams (a neighbouring cell, across the wrapping Doppler edge), and
 * azimuths that are the monopulse's on the cell's powers.
 */
#include "../beam_geometry_tag.h"
#include "../cfar_angles.h"
#include <gpuradar/kernels/array/beamformer.h>
#include <gtest/gtest.h>
#include <cmath>

namespace gpuradar::test {
namespace {

using gr::gpuradar::angle_source;
using gr::gpuradar::beam_geometry;
using gr::gpuradar::map_shape;
namespace k = ::gpuradar::kernels;

constexpr std::size_t nch = 6, nbeams = 7, ndoppler = 16;

beam_geometry fan()
{
    beam_geometry g;
    g.elements_wl = k::ula_positions(nch, 0.5, 1.0);
    g.angles_deg = k::beam_fan_deg(nbeams, -45, 45);
    g.elevations_deg.assign(nbeams, 0.0);
    g.weights = k::beamformer_weights(g.elements_wl, 1.0, g.angles_deg, {});
    return g;
}

TEST(CfarAngles, test_001_geometry_through_the_cpi_dict)
{
    const beam_geometry g = fan();
    const pmt::pmt_t dict = gr::gpuradar::add_beam_geometry(pmt::make_dict(), g);
    beam_geometry back;
    EXPECT_EQ(gr::gpuradar::read_beam_geometry(dict, nbeams, back), "");
    EXPECT_TRUE(back == g);
    // Another beam count, or no geometry at all: a reason, and nothing read.
    beam_geometry untouched;
    EXPECT_NE(gr::gpuradar::read_beam_geometry(dict, nbeams + 1, untouched)
                  .find("does not fit"),
              std::string::npos);
    EXPECT_NE(gr::gpuradar::read_beam_geometry(pmt::make_dict(), nbeams, untouched)
                  .find("beam_weights"),
              std::string::npos);
    EXPECT_TRUE(untouched.weights.empty());
}

//! A detection of beam `beam` (CPI 0) at (r, d) with `power` and unit noise.
k::cfar_detection det(std::uint32_t beam, std::uint32_t r, std::uint32_t d, float power)
{
    k::cfar_detection x;
    x.map = beam;
    x.range_bin = r;
    x.doppler_bin = d;
    x.power = power;
    x.noise = 1.0f;
    return x;
}

TEST(CfarAngles, test_002_one_listing_per_target_and_the_monopulse_azimuth)
{
    const beam_geometry g = fan();
    // A pure azimuth fan: the grid's numbers are the 1-D monopulse's, bit for bit.
    const k::monopulse mp(g.elements_wl, 1.0, g.weights, g.angles_deg);
    const k::grid_monopulse grid(
        g.elements_wl, 1.0, g.weights, { g.angles_deg, g.elevations_deg });
    // Beam 3 at (10, 0) and beam 4 at (11, 15): neighbours across the Doppler edge, one
    // target (beam 4 stronger). Beam 5 at (30, 0): another target. Beam 1 at (40, 2):
    // a NaN among its cell's beam powers, kept without an azimuth.
    const std::vector<k::cfar_detection> peaks = { det(3, 10, 0, 100.f),
                                                   det(4, 11, 15, 200.f),
                                                   det(5, 30, 0, 50.f),
                                                   det(1, 40, 2, 80.f) };
    std::vector<float> powers;
    for (std::size_t i = 0; i < peaks.size(); ++i)
        for (std::size_t b = 0; b < nbeams; ++b)
            powers.push_back(b == peaks[i].map % nbeams
                                 ? peaks[i].power
                                 : (i == 3 && b == 6 ? NAN : 10.0f + float(b + i)));
    std::vector<pmt::pmt_t> dicts;
    for (std::size_t i = 0; i < peaks.size(); ++i)
        dicts.push_back(
            pmt::dict_add(pmt::make_dict(), pmt::intern("index"), pmt::from_uint64(i)));
    std::size_t gathered = 0;
    angle_source src;
    src.monopulse = &grid;
    src.beam_powers = [&](const std::vector<k::cfar_detection>& d) {
        gathered = d.size();
        return powers;
    };
    const auto index_of = [](const pmt::pmt_t& d) {
        return pmt::to_uint64(pmt::dict_ref(d, pmt::intern("index"), pmt::PMT_NIL));
    };
    const auto out =
        gr::gpuradar::with_azimuths(peaks, dicts, { nbeams, ndoppler, true }, src);
    EXPECT_EQ(gathered, peaks.size());
    ASSERT_EQ(out.size(), 3u);
    EXPECT_EQ(index_of(out[0]), 1u);
    EXPECT_EQ(index_of(out[1]), 2u);
    EXPECT_EQ(index_of(out[2]), 3u);
    for (std::size_t n = 0; n < 2; ++n) {
        const std::size_t i = index_of(out[n]);
        const auto want =
            mp.estimate_from_powers(powers.data() + i * nbeams, peaks[i].map, 1.0);
        const auto az = pmt::dict_ref(out[n], pmt::intern("azimuth_deg"), pmt::PMT_NIL);
        const auto sd =
            pmt::dict_ref(out[n], pmt::intern("azimuth_std_deg"), pmt::PMT_NIL);
        ASSERT_TRUE(pmt::is_real(az));
        EXPECT_EQ(pmt::to_double(az), want.angle_deg);
        EXPECT_EQ(pmt::to_double(sd), want.std_deg);
        EXPECT_FALSE(pmt::dict_has_key(out[n], pmt::intern("elevation_deg")));
    }
    EXPECT_FALSE(pmt::dict_has_key(out[2], pmt::intern("azimuth_deg")));
    // Without the Doppler wrap, bins 0 and 15 do not touch: both listed.
    EXPECT_EQ(gr::gpuradar::with_azimuths(peaks, dicts, { nbeams, ndoppler, false }, src)
                  .size(),
              4u);
}

TEST(CfarAngles, test_003_a_beam_grid_gives_elevations_through_the_cpi_dict)
{
    // A 4 x 2 URA, 3 azimuths x 2 elevations: the elevations travel in the dict, a dict
    // without them reads as all 0, and a detection gains the grid's elevation.
    beam_geometry g;
    g.elements_wl = k::ura_positions(4, 2, 0.5, 0.5, 1.0);
    const auto dirs = k::beam_grid_deg({ -20.0, 0.0, 20.0 }, { -15.0, 15.0 });
    g.angles_deg = dirs.azimuths_deg;
    g.elevations_deg = dirs.elevations_deg;
    g.weights =
        k::steering_weights(g.elements_wl, 1.0, dirs, std::vector<double>(8, 1.0));
    const pmt::pmt_t dict = gr::gpuradar::add_beam_geometry(pmt::make_dict(), g);
    beam_geometry back;
    ASSERT_EQ(gr::gpuradar::read_beam_geometry(dict, 6, back), "");
    EXPECT_TRUE(back == g);
    const pmt::pmt_t no_el = pmt::dict_delete(dict, pmt::intern("beam_elevations_deg"));
    ASSERT_EQ(gr::gpuradar::read_beam_geometry(no_el, 6, back), "");
    EXPECT_EQ(back.elevations_deg, std::vector<double>(6, 0.0));
    const pmt::pmt_t short_el = pmt::dict_add(
        dict, pmt::intern("beam_elevations_deg"), pmt::init_f64vector(2, { 0.0, 1.0 }));
    EXPECT_NE(gr::gpuradar::read_beam_geometry(short_el, 6, back).find("elevations"),
              std::string::npos);

    const k::grid_monopulse grid(g.elements_wl, 1.0, g.weights, dirs);
    const std::vector<float> powers = { 2.f, 5.f, 3.f, 4.f, 9.f, 6.f };
    angle_source src;
    src.monopulse = &grid;
    src.beam_powers = [&](const std::vector<k::cfar_detection>&) { return powers; };
    const auto out = gr::gpuradar::with_azimuths(
        { det(4, 10, 3, 9.f) }, { pmt::make_dict() }, { 6, ndoppler, true }, src);
    ASSERT_EQ(out.size(), 1u);
    const auto want = grid.estimate_from_powers(powers.data(), 4, 1.0);
    const auto el = pmt::dict_ref(out[0], pmt::intern("elevation_deg"), pmt::PMT_NIL);
    const auto sd = pmt::dict_ref(out[0], pmt::intern("elevation_std_deg"), pmt::PMT_NIL);
    const auto az = pmt::dict_ref(out[0], pmt::intern("azimuth_deg"), pmt::PMT_NIL);
    ASSERT_TRUE(pmt::is_real(el) && pmt::is_real(sd) && pmt::is_real(az));
    EXPECT_EQ(pmt::to_double(el), want.elevation.angle_deg);
    EXPECT_EQ(pmt::to_double(sd), want.elevation.std_deg);
    EXPECT_EQ(pmt::to_double(az), want.azimuth.angle_deg);
    EXPECT_EQ(pmt::to_uint64(
                  pmt::dict_ref(out[0], pmt::intern("elevation_beam"), pmt::PMT_NIL)),
              want.elevation.beam);
    // The strongest beam is beam 4 (0 deg, +15 deg): estimates near it.
    EXPECT_GT(want.elevation.angle_deg, 0.0);
    EXPECT_LT(std::abs(want.azimuth.angle_deg), 10.0);
}

} // namespace
} // namespace gpuradar::test
