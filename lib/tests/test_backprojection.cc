/* backprojection block: focus, restart vs accumulate, skipped geometry, bad input, CUDA.
 */
#include "invalid_argument_check.h"
#include "test_support.h"
#include <gnuradio/blocks/vector_sink.h>
#include <gnuradio/blocks/vector_source.h>
#include <gnuradio/gpuradar/backprojection.h>
#include <gnuradio/gpuradar/device_buffer.h>
#include <gnuradio/gpuradar/envelope.h>
#include <gnuradio/top_block.h>
#include <gpuradar/kernels/common/device_split.h>
#include <gpuradar/kernels/sar/backprojection.h>
#include <gpuradar/kernels/sar/sar_sim.h>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>

namespace gpuradar::test {
namespace {

namespace grr = gr::gpuradar;
namespace sim = kernels::sar_sim;
using kernels::image_grid;

//! expect_invalid with this block's prefix in the message.
template <typename F>
void expect_invalid_here(F&& f, const std::string& text)
{
    expect_invalid(std::forward<F>(f), text, "gpuradar::backprojection");
}

constexpr std::size_t n6 = kernels::backprojection::geometry_length;
constexpr double c0 = kernels::backprojection::speed_of_light;

//! A small X-band spotlight: 0.5 m range resolution, 0.25 m bins, 2 km stand-off at
//! 500 m altitude, an aperture giving ~0.5 m cross-range resolution; image 48 x 40 px
//! (not multiples of the 32-pixel tile) of 0.2 m around the scene centre.
struct scene {
    image_grid grid;
    sim::phase_history h;
};

scene make_scene(std::size_t npulses, std::uint32_t seed = 1)
{
    scene s;
    s.grid.nx = 48;
    s.grid.ny = 40;
    s.grid.dx = s.grid.dy = 0.2;
    s.grid.x0 = -0.2 * 24;
    s.grid.y0 = -0.2 * 20;
    s.grid.z = 0;
    sim::radar r;
    r.f0 = 10e9;
    r.bandwidth = 300e6;
    r.dr = 0.25;
    r.nbins = 200;
    r.gate_centre = sim::vec3{ 0, 0, 0 };
    r.noise_sigma = 0.01;
    r.seed = seed;
    const double slant = std::hypot(2000.0, 500.0);
    const double aperture = (c0 / r.f0) * slant / (2 * 0.5);
    const auto path = sim::straight_path(
        { -aperture / 2, -2000, 500 }, { aperture / 2, -2000, 500 }, npulses);
    const std::vector<sim::point_target> targets = {
        { { 0.3, -0.1, 0 }, { 1.0, 0.0 } },
        { { -2.9, 2.2, 0 }, { 0.0, 0.7 } },
        { { 3.1, -2.5, 0 }, { 0.5, 0.0 } },
    };
    s.h = sim::simulate(path, targets, r);
    return s;
}

struct params {
    std::string mode = "restart";
    std::string precision = "fast";
    std::string backend = "cpu";
    unsigned ppi = 0;
    std::vector<float> height;
    unsigned nz = 1;
    double dz = 1.0;
    int device = 0;
};

struct result {
    std::vector<gr_complex> images; // nimages x nz x ny x nx
    std::uint64_t skipped = 0, emitted = 0, nonfinite = 0;
    std::vector<gr::tag_t> tags;
};

std::vector<std::uint8_t> geometry_bytes(const std::vector<double>& g)
{
    std::vector<std::uint8_t> b(g.size() * sizeof(double));
    std::memcpy(b.data(), g.data(), b.size());
    return b;
}

//! pulses -> backprojection -> sink; the geometry comes as 48-byte items (6 doubles).
result run(const scene& s, const std::vector<double>& geometry, const params& p)
{
    auto tb = gr::make_top_block("backprojection");
    auto src = gr::blocks::vector_source_c::make(s.h.pulses, false, unsigned(s.h.nbins));
    auto geo = gr::blocks::vector_source_b::make(
        geometry_bytes(geometry), false, unsigned(n6 * sizeof(double)));
    auto bp = grr::backprojection::make(unsigned(s.h.nbins),
                                        unsigned(s.grid.nx),
                                        unsigned(s.grid.ny),
                                        s.grid.x0,
                                        s.grid.y0,
                                        s.grid.dx,
                                        s.grid.dy,
                                        s.grid.z,
                                        p.ppi,
                                        p.mode,
                                        p.precision,
                                        p.height,
                                        p.backend,
                                        p.nz,
                                        p.dz,
                                        p.device);
    EXPECT_EQ(bp->device(), p.device);
    auto snk = gr::blocks::vector_sink_c::make(unsigned(s.grid.nx));
    tb->connect(src, 0, bp, 0);
    tb->connect(geo, 0, bp, 1);
    tb->connect(bp, 0, snk, 0);
    tb->run();
    return { snk->data(),
             bp->skipped_pulses(),
             bp->images(),
             bp->nonfinite_samples(),
             snk->tags() };
}

//! The kernel (CPU) directly: pulses [first, first + n) into a fresh image.
std::vector<cfloat>
reference(const scene& s,
          const std::vector<double>& geometry,
          std::size_t first,
          std::size_t n,
          kernels::backprojection::precision p = kernels::backprojection::precision::fast)
{
    auto k = kernels::backprojection::make(kernels::backend::cpu, s.grid, s.h.nbins, p);
    std::vector<cfloat> img(std::size_t(s.grid.voxels()));
    k->run(s.h.pulses.data() + first * s.h.nbins,
           geometry.data() + first * n6,
           n,
           img.data());
    return img;
}

std::vector<cfloat> image_at(const result& r, const scene& s, std::size_t i)
{
    const std::size_t npix = std::size_t(s.grid.voxels());
    return std::vector<cfloat>(r.images.begin() + i * npix,
                               r.images.begin() + (i + 1) * npix);
}

//! The brightest pixel within 4 px of a target's true pixel (the targets are > 10 px
//! apart).
std::pair<sim::pixel, float>
peak_near(const std::vector<cfloat>& img, const scene& s, sim::vec3 p)
{
    const auto want = sim::nearest_pixel(s.grid, p);
    sim::pixel best_px{ -1, -1 };
    float best = -1;
    for (long long y = std::max(0LL, want.iy - 4);
         y <= std::min(s.grid.ny - 1, want.iy + 4);
         ++y)
        for (long long x = std::max(0LL, want.ix - 4);
             x <= std::min(s.grid.nx - 1, want.ix + 4);
             ++x)
            if (std::abs(img[y * s.grid.nx + x]) > best) {
                best = std::abs(img[y * s.grid.nx + x]);
                best_px = { x, y };
            }
    return { best_px, best };
}

void expect_focused(const std::vector<cfloat>& img, const scene& s)
{
    for (const auto& t : s.h.targets) {
        const auto want = sim::nearest_pixel(s.grid, t.position);
        const auto [px, value] = peak_near(img, s, t.position);
        EXPECT_LE(std::abs(px.ix - want.ix), 1) << "target at x=" << t.position.x;
        EXPECT_LE(std::abs(px.iy - want.iy), 1) << "target at y=" << t.position.y;
        // A focused target integrates coherently: ~|a| per pulse.
        EXPECT_GT(value, 0.5 * std::abs(t.amplitude) * double(s.h.npulses));
    }
}

void check_restart_and_accumulate(const char* backend, double tol)
{
    const std::size_t ppi = 96;
    const scene s = make_scene(2 * ppi + 17); // + a partial third image, never emitted
    params p;
    p.backend = backend;
    p.ppi = ppi;
    const auto restart = run(s, s.h.geometry, p);
    p.mode = "accumulate";
    const auto accumulate = run(s, s.h.geometry, p);
    ASSERT_EQ(restart.emitted, 2u);
    ASSERT_EQ(accumulate.emitted, 2u);
    ASSERT_EQ(restart.images.size(), 2 * std::size_t(s.grid.nx * s.grid.ny));
    ASSERT_EQ(accumulate.images.size(), restart.images.size());
    const auto first = reference(s, s.h.geometry, 0, ppi);
    const auto second = reference(s, s.h.geometry, ppi, ppi);
    const auto both = reference(s, s.h.geometry, 0, 2 * ppi);
    EXPECT_LE(rel_l2(image_at(restart, s, 0), first), tol);
    EXPECT_LE(rel_l2(image_at(restart, s, 1), second), tol);
    EXPECT_LE(rel_l2(image_at(accumulate, s, 0), first), tol);
    EXPECT_LE(rel_l2(image_at(accumulate, s, 1), both), tol)
        << "accumulate integrates on";
}

void check_skipped_geometry(const char* backend, double tol)
{
    const std::size_t n = 64;
    const scene s = make_scene(n);
    auto g = s.h.geometry;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    // One bad value per pulse, each field once, plus dr = 0 and dr < 0.
    const std::vector<std::pair<std::size_t, std::size_t>> bad = { { 3, 0 },  { 10, 1 },
                                                                   { 11, 2 }, { 20, 3 },
                                                                   { 40, 4 }, { 41, 5 } };
    for (auto [i, k] : bad)
        g[i * n6 + k] = (k % 2) ? inf : nan;
    g[50 * n6 + 4] = 0.0;
    g[51 * n6 + 4] = -0.25;
    params p;
    p.backend = backend;
    p.ppi = unsigned(n);
    const auto r = run(s, g, p);
    EXPECT_EQ(r.skipped, bad.size() + 2);
    ASSERT_EQ(r.emitted, 1u);
    for (const auto& v : r.images)
        ASSERT_TRUE(std::isfinite(v.real()) && std::isfinite(v.imag()));
    // The image of the good pulses alone (bad ones made non-finite for the kernel).
    auto g_ref = g;
    g_ref[50 * n6 + 4] = nan;
    g_ref[51 * n6 + 4] = nan;
    EXPECT_LE(rel_l2(image_at(r, s, 0), reference(s, g_ref, 0, n)), tol);
}

TEST(BackprojectionBlockCpu, test_001_point_targets_focus_at_true_pixels)
{
    const scene s = make_scene(160);
    params p;
    p.ppi = 160;
    for (const char* prec : { "fast", "accurate" }) {
        p.precision = prec;
        const auto r = run(s, s.h.geometry, p);
        ASSERT_EQ(r.emitted, 1u) << prec;
        ASSERT_EQ(r.images.size(), std::size_t(s.grid.nx * s.grid.ny));
        expect_focused(r.images, s);
    }
}

TEST(BackprojectionBlockCpu, test_002_restart_vs_accumulate)
{
    check_restart_and_accumulate("cpu", 1e-6);
}

TEST(BackprojectionBlockCpu, test_003_non_finite_geometry_skipped_and_counted)
{
    check_skipped_geometry("cpu", 1e-6);
}

TEST(BackprojectionBlockCpu, test_004_bad_parameters_name_the_parameter)
{
    using bp = grr::backprojection;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    // Boundaries pass.
    EXPECT_NO_THROW(
        bp::make(2, 1, 1, 0, 0, 1e-3, 1e-3, 0, 1, "restart", "fast", {}, "cpu"));
    EXPECT_NO_THROW(bp::make(2,
                             2,
                             3,
                             0,
                             0,
                             1,
                             1,
                             0,
                             1,
                             "accumulate",
                             "accurate",
                             std::vector<float>(6, 1.0f),
                             "cpu"));
    // One step beyond fails, naming the parameter.
    expect_invalid_here(
        [] { bp::make(1, 4, 4, 0, 0, 1, 1, 0, 1, "restart", "fast", {}, "cpu"); },
        "nbins");
    expect_invalid_here(
        [] { bp::make(8, 0, 4, 0, 0, 1, 1, 0, 1, "restart", "fast", {}, "cpu"); }, "nx");
    expect_invalid_here(
        [] { bp::make(8, 4, 0, 0, 0, 1, 1, 0, 1, "restart", "fast", {}, "cpu"); }, "ny");
    expect_invalid_here(
        [] { bp::make(8, 4, 4, 0, 0, 0, 1, 0, 1, "restart", "fast", {}, "cpu"); }, "dx");
    expect_invalid_here(
        [] { bp::make(8, 4, 4, 0, 0, 1, -1, 0, 1, "restart", "fast", {}, "cpu"); }, "dy");
    expect_invalid_here(
        [=] { bp::make(8, 4, 4, nan, 0, 1, 1, 0, 1, "restart", "fast", {}, "cpu"); },
        "x0");
    expect_invalid_here(
        [=] { bp::make(8, 4, 4, 0, 0, 1, 1, nan, 1, "restart", "fast", {}, "cpu"); },
        "z");
    expect_invalid_here(
        [] { bp::make(8, 4, 4, 0, 0, 1, 1, 0, 0, "restart", "fast", {}, "cpu"); },
        "pulses_per_image");
    expect_invalid_here(
        [] { bp::make(8, 4, 4, 0, 0, 1, 1, 0, 1, "restarts", "fast", {}, "cpu"); },
        "mode");
    expect_invalid_here(
        [] { bp::make(8, 4, 4, 0, 0, 1, 1, 0, 1, "restart", "exact", {}, "cpu"); },
        "precision");
    expect_invalid_here(
        [] {
            bp::make(8,
                     4,
                     4,
                     0,
                     0,
                     1,
                     1,
                     0,
                     1,
                     "restart",
                     "fast",
                     std::vector<float>(15, 0.0f),
                     "cpu");
        },
        "height");
    expect_invalid_here(
        [] { bp::make(8, 4, 4, 0, 0, 1, 1, 0, 1, "restart", "fast", {}, "gpu"); },
        "backend");
}

TEST(BackprojectionBlockCpu, test_005_geometry_of_the_wrong_length_is_refused)
{
    // Input 1 takes 6 doubles per item; 5 cannot be connected.
    auto tb = gr::make_top_block("bad_geometry");
    auto geo =
        gr::blocks::vector_source_b::make(std::vector<std::uint8_t>(80), false, 40);
    auto bp = grr::backprojection::make(
        8, 4, 4, 0, 0, 1, 1, 0, 1, "restart", "fast", {}, "cpu");
    EXPECT_ANY_THROW(tb->connect(geo, 0, bp, 1));
}

TEST(BackprojectionBlockCpu, test_006_height_map_changes_the_focus_height)
{
    // A target 3 m up focuses where the height map says 3 m, not on flat ground.
    scene s = make_scene(160);
    sim::radar r;
    r.f0 = 10e9;
    r.bandwidth = 300e6;
    r.dr = 0.25;
    r.nbins = 200;
    r.gate_centre = sim::vec3{ 0, 0, 0 };
    std::vector<sim::vec3> path(s.h.npulses);
    for (std::size_t i = 0; i < path.size(); ++i)
        path[i] = { s.h.geometry[i * n6],
                    s.h.geometry[i * n6 + 1],
                    s.h.geometry[i * n6 + 2] };
    s.h = sim::simulate(path, { { { 0.3, -0.1, 3.0 }, { 1.0, 0.0 } } }, r);
    auto image = [&](const std::vector<float>& height) {
        auto tb = gr::make_top_block("height");
        auto src =
            gr::blocks::vector_source_c::make(s.h.pulses, false, unsigned(s.h.nbins));
        auto geo =
            gr::blocks::vector_source_b::make(geometry_bytes(s.h.geometry), false, 48);
        auto bp = grr::backprojection::make(unsigned(s.h.nbins),
                                            unsigned(s.grid.nx),
                                            unsigned(s.grid.ny),
                                            s.grid.x0,
                                            s.grid.y0,
                                            s.grid.dx,
                                            s.grid.dy,
                                            0.0,
                                            unsigned(s.h.npulses),
                                            "restart",
                                            "fast",
                                            height,
                                            "cpu");
        auto snk = gr::blocks::vector_sink_c::make(unsigned(s.grid.nx));
        tb->connect(src, 0, bp, 0);
        tb->connect(geo, 0, bp, 1);
        tb->connect(bp, 0, snk, 0);
        tb->run();
        return snk->data();
    };
    expect_focused(image(std::vector<float>(std::size_t(s.grid.nx * s.grid.ny), 3.0f)),
                   s);
    // On flat ground (z = 0) the raised target lays over towards the radar (-y): about
    // 3 m x 500 m / 2000 m = 0.75 m, ~4 pixels.
    const auto flat = image({});
    const auto want = sim::nearest_pixel(s.grid, s.h.targets[0].position);
    EXPECT_LE(peak_near(flat, s, s.h.targets[0].position).first.iy, want.iy - 2);
}

//! The value of the uint64 tag `key` on item `offset`; -1 when there is none.
long long
tag_value(const std::vector<gr::tag_t>& tags, const char* key, std::uint64_t offset)
{
    for (const auto& t : tags)
        if (t.offset == offset && pmt::symbol_to_string(t.key) == key)
            return static_cast<long long>(pmt::to_uint64(t.value));
    return -1;
}

/*
 * accumulate: NaN/Inf samples in the first image's pulses and a bad geometry in the
 * second's: both images finite, equal to the kernel's images of the clean pulses, each
 * image's first item tagged with its own counts.
 */
void check_nonfinite_samples(const char* backend, double tol)
{
    const std::size_t ppi = 64;
    scene s = make_scene(2 * ppi);
    scene clean = s;
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float inf = std::numeric_limits<float>::infinity();
    const std::size_t nb = s.h.nbins;
    const std::vector<std::pair<std::size_t, cfloat>> bad = {
        { 5 * nb + nb / 2, { nan, 0.0f } },
        { 9 * nb + nb / 2 + 1, { 1.0f, inf } },
        { 40 * nb + 3, { -inf, nan } },
    };
    for (const auto& [i, v] : bad) {
        s.h.pulses[i] = v;
        clean.h.pulses[i] = cfloat(0, 0);
    }
    auto g = s.h.geometry;
    g[(ppi + 7) * n6 + 5] = 1e300; // f0 the precision cannot carry: skipped
    params p;
    p.backend = backend;
    p.ppi = unsigned(ppi);
    p.mode = "accumulate";
    const auto r = run(clean, g, p); // the same without the bad samples
    const auto rb = run(s, g, p);
    ASSERT_EQ(rb.emitted, 2u);
    for (const auto& v : rb.images)
        ASSERT_TRUE(std::isfinite(v.real()) && std::isfinite(v.imag()));
    EXPECT_EQ(rb.nonfinite, bad.size());
    EXPECT_EQ(rb.skipped, 1u);
    EXPECT_EQ(r.nonfinite, 0u);
    const std::uint64_t rows = std::uint64_t(s.grid.ny);
    EXPECT_EQ(tag_value(rb.tags, "nonfinite_samples", 0), 3);
    EXPECT_EQ(tag_value(rb.tags, "skipped_pulses", 0), 0);
    EXPECT_EQ(tag_value(rb.tags, "nonfinite_samples", rows), 0);
    EXPECT_EQ(tag_value(rb.tags, "skipped_pulses", rows), 1);
    EXPECT_LE(rel_l2(rb.images, r.images), tol);
    auto g_ref = g;
    g_ref[(ppi + 7) * n6 + 5] = std::numeric_limits<double>::quiet_NaN();
    EXPECT_LE(rel_l2(image_at(rb, s, 1), reference(clean, g_ref, 0, 2 * ppi)), tol);
}

TEST(BackprojectionBlockCpu, test_007_nonfinite_samples_zeroed_counted_and_tagged)
{
    check_nonfinite_samples("cpu", 1e-6);
}

TEST(BackprojectionBlockCpu, test_008_sizes_refused_before_allocation_with_memory)
{
    using bp = grr::backprojection;
    auto make = [](unsigned nbins, unsigned nx, unsigned ny, unsigned nz, double dz) {
        return bp::make(
            nbins, nx, ny, 0, 0, 1, 1, 0, 1, "restart", "fast", {}, "cpu", nz, dz);
    };
    // nbins * 8 bytes would overflow the port's int item size: refused first.
    expect_invalid_here([&] { make(1u << 31, 4, 4, 1, 1); }, "nbins");
    expect_invalid_here([&] { make(1u << 31, 4, 4, 1, 1); }, "GiB");
    expect_invalid_here([&] { make((1u << 24) + 1, 4, 4, 1, 1); }, "GiB");
    // 2^32 voxels (32 GiB): refused, not allocated.
    expect_invalid_here([&] { make(8, 1u << 16, 1u << 16, 1, 1); }, "nx*ny*nz");
    expect_invalid_here([&] { make(8, 1u << 12, 1u << 12, 256, 1); }, "32 GiB");
    expect_invalid_here([&] { make(8, (1u << 27) + 1, 1, 1, 1); }, "nx");
    expect_invalid_here([&] { make(8, (1u << 27) + 1, 1, 1, 1); }, "GiB");
    expect_invalid_here([&] { make(8, 4, 4, 0, 1); }, "nz");
    expect_invalid_here([&] { make(8, 4, 4, 65536, 1); }, "nz");
    expect_invalid_here([&] { make(8, 4, 4, 2, 0.0); }, "dz");
    expect_invalid_here([&] { make(8, 4, 4, 2, std::nan("")); }, "dz");
    EXPECT_NO_THROW(make(8, 4, 4, 2, 0.5));
}

//! A volume of 3 slices 1.5 m apart, over the flat grid and over a DEM.
void check_volume(const char* backend, double tol)
{
    scene s = make_scene(96);
    for (bool dem : { false, true }) {
        params p;
        p.backend = backend;
        p.ppi = 96;
        p.nz = 3;
        p.dz = 1.5;
        scene v = s;
        v.grid.nz = 3;
        v.grid.dz = 1.5;
        if (dem) {
            const std::size_t n = std::size_t(s.grid.nx * s.grid.ny);
            for (std::size_t i = 0; i < n; ++i)
                p.height.push_back(float(0.01 * double(i % 97)));
            v.grid.height.assign(p.height.begin(), p.height.end());
        }
        for (const char* prec : { "fast", "accurate" }) {
            p.precision = prec;
            const auto r = run(s, s.h.geometry, p);
            ASSERT_EQ(r.emitted, 1u);
            ASSERT_EQ(r.images.size(), std::size_t(v.grid.voxels()))
                << "nz*ny items of nx";
            EXPECT_LE(rel_l2(r.images,
                             reference(v,
                                       s.h.geometry,
                                       0,
                                       96,
                                       kernels::backprojection::parse_precision(prec))),
                      tol)
                << prec << (dem ? " DEM" : " flat");
        }
    }
}

TEST(BackprojectionBlockCpu, test_009_volume_and_dem_output_layout)
{
    check_volume("cpu", 1e-6);
}

//! The block with only `backend` and `device` chosen (the smallest valid grid).
grr::backprojection::sptr make_on(const char* backend, int device)
{
    return grr::backprojection::make(
        8, 4, 4, 0, 0, 1, 1, 0, 1, "restart", "fast", {}, backend, 1, 1.0, device);
}

TEST(BackprojectionBlockCpu, test_016_device_negative_refused_other_values_ignored)
{
    expect_invalid_here([] { make_on("cpu", -1); }, "device must be >= 0 (got -1)");
    // The CPU backend runs on the host whatever the index: the kernel's image, as
    // without it (the block's batches of pulses vary with scheduling, so the float
    // sums may differ in rounding only).
    const scene s = make_scene(160);
    const auto ref = reference(s, s.h.geometry, 0, 160);
    params p;
    p.ppi = 160;
    for (int device : { 0, 3 }) {
        p.device = device;
        const auto r = run(s, s.h.geometry, p);
        ASSERT_EQ(r.emitted, 1u) << device;
        EXPECT_LE(rel_l2(r.images, ref), 1e-6) << device;
    }
}

// ---- CUDA (ctest label gpu; skipped without a device) ----

TEST(BackprojectionBlockCuda, test_010_cuda_matches_cpu_through_device_buffers)
{
    GPURADAR_REQUIRE_CUDA();
    const scene s = make_scene(300);
    params p;
    p.ppi = 300;
    // fast: SER >= 60 dB against fp64 on both backends; accurate: >= 100 dB.
    for (auto [prec, tol] : { std::pair<const char*, double>{ "fast", 2e-3 },
                              std::pair<const char*, double>{ "accurate", 1e-5 } }) {
        p.precision = prec;
        p.backend = "cpu";
        const auto cpu = run(s, s.h.geometry, p);
        p.backend = "cuda";
        grr::device_buffer::reset_transfer_stats();
        const auto gpu = run(s, s.h.geometry, p);
        const auto stats = grr::device_buffer::transfer_stats();
        ASSERT_EQ(gpu.images.size(), cpu.images.size()) << prec;
        EXPECT_LE(rel_l2(gpu.images, cpu.images), tol) << prec;
        expect_focused(gpu.images, s);
        // The pulses cross PCIe once, the image once (the geometry is a host port).
        EXPECT_EQ(stats.h2d_bytes, s.h.pulses.size() * sizeof(gr_complex)) << prec;
        EXPECT_EQ(stats.d2h_bytes, gpu.images.size() * sizeof(gr_complex)) << prec;
    }
}

TEST(BackprojectionBlockCuda, test_011_restart_vs_accumulate)
{
    GPURADAR_REQUIRE_CUDA();
    check_restart_and_accumulate("cuda", 2e-3);
}

TEST(BackprojectionBlockCuda, test_012_non_finite_geometry_skipped_and_counted)
{
    GPURADAR_REQUIRE_CUDA();
    check_skipped_geometry("cuda", 2e-3);
}

TEST(BackprojectionBlockCuda, test_013_image_stays_on_the_device_into_the_envelope)
{
    GPURADAR_REQUIRE_CUDA();
    const scene s = make_scene(128);
    auto tb = gr::make_top_block("bp_env");
    auto src = gr::blocks::vector_source_c::make(s.h.pulses, false, unsigned(s.h.nbins));
    auto geo = gr::blocks::vector_source_b::make(geometry_bytes(s.h.geometry), false, 48);
    auto bp = grr::backprojection::make(unsigned(s.h.nbins),
                                        unsigned(s.grid.nx),
                                        unsigned(s.grid.ny),
                                        s.grid.x0,
                                        s.grid.y0,
                                        s.grid.dx,
                                        s.grid.dy,
                                        s.grid.z,
                                        128,
                                        "restart",
                                        "fast",
                                        {},
                                        "cuda");
    auto env = grr::envelope::make(unsigned(s.grid.nx), "square_law", false, "cuda");
    auto snk = gr::blocks::vector_sink_f::make(unsigned(s.grid.nx));
    tb->connect(src, 0, bp, 0);
    tb->connect(geo, 0, bp, 1);
    tb->connect(bp, 0, env, 0);
    tb->connect(env, 0, snk, 0);
    grr::device_buffer::reset_transfer_stats();
    tb->run();
    const auto stats = grr::device_buffer::transfer_stats();
    const auto img = reference(s, s.h.geometry, 0, 128);
    const auto pw = snk->data();
    ASSERT_EQ(pw.size(), img.size());
    std::vector<cfloat> a(pw.size()), b(pw.size());
    for (std::size_t i = 0; i < pw.size(); ++i) {
        a[i] = pw[i];
        b[i] = std::norm(img[i]);
    }
    EXPECT_LE(rel_l2(a, b), 4e-3);
    // Only the power map comes back to the host: the complex image never does.
    EXPECT_EQ(stats.d2h_bytes, pw.size() * sizeof(float));
}

TEST(BackprojectionBlockCuda, test_014_nonfinite_samples_and_volume)
{
    GPURADAR_REQUIRE_CUDA();
    check_nonfinite_samples("cuda", 2e-3);
    check_volume("cuda", 2e-3);
}

TEST(BackprojectionBlockCuda, test_017_device_zero_named_explicitly_and_out_of_range)
{
    GPURADAR_REQUIRE_CUDA();
    const int count = kernels::cuda_device_count();
    expect_invalid_here([&] { make_on("cuda", count); },
                        "device must be 0 to " + std::to_string(count - 1));
    expect_invalid_here([&] { make_on("cuda", -1); },
                        "device must be 0 to " + std::to_string(count - 1) + " (got -1)");
    // Device 0 named: the CPU's image within the bound of test_010, and focused.
    const scene s = make_scene(300);
    params p;
    p.ppi = 300;
    const auto cpu = run(s, s.h.geometry, p);
    p.backend = "cuda";
    p.device = 0;
    const auto named = run(s, s.h.geometry, p);
    ASSERT_EQ(named.images.size(), cpu.images.size());
    EXPECT_LE(rel_l2(named.images, cpu.images), 2e-3);
    expect_focused(named.images, s);
}

/*
 * Consecutive images of one run, each from fresh random pulses with its own number of
 * pulses that count (skipped geometry) and of non-finite samples: each equals the CPU
 * kernel's image of its own pulses and carries its own counts in its tags. On CUDA this
 * checks the overlap (pulses staged through two device areas while the kernel runs,
 * images copied out behind their kernels, counts read per image while the next image's
 * kernels run), with the device memory the block allocates poisoned first (0xFF bytes
 * are NaN, which rel_l2 never passes).
 */
void check_images_of_different_pulse_counts(const char* backend,
                                            std::size_t nbins,
                                            std::size_t ppi,
                                            std::size_t nimages,
                                            double tol)
{
    const std::size_t npulses = nimages * ppi + ppi / 2; // + a partial image
    scene s = make_scene(npulses);
    const std::uint32_t seed = std::random_device{}();
    SCOPED_TRACE(std::string(backend) + " seed " + std::to_string(seed) + " nbins " +
                 std::to_string(nbins) + " ppi " + std::to_string(ppi));
    s.h.nbins = nbins; // the geometry's gate covers the scene from bin 0
    s.h.pulses = random_complex(npulses * nbins, seed);
    auto g = s.h.geometry;
    std::mt19937 rng(seed);
    std::uniform_int_distribution<std::size_t> pulse_in_image(0, ppi - 1);
    std::uniform_int_distribution<std::size_t> bin(0, nbins - 1);
    std::vector<std::size_t> skipped(nimages), bad(nimages);
    for (std::size_t i = 0; i < nimages; ++i) {
        skipped[i] = (5 * i + 1) % (ppi / 5 + 1);
        bad[i] = (3 * i) % 5;
        std::vector<bool> skip(ppi, false);
        for (std::size_t k = 0; k < skipped[i];) {
            const std::size_t p = pulse_in_image(rng);
            if (!skip[p]) {
                skip[p] = true;
                g[(i * ppi + p) * n6] = std::numeric_limits<double>::quiet_NaN();
                ++k;
            }
        }
        for (std::size_t k = 0; k < bad[i];) {
            const std::size_t p = pulse_in_image(rng);
            cfloat& v = s.h.pulses[(i * ppi + p) * nbins + bin(rng)];
            if (!skip[p] && std::isfinite(v.real())) {
                v = cfloat(std::numeric_limits<float>::infinity(), 0.0f);
                ++k;
            }
        }
    }
    if (std::string(backend) == "cuda") {
        // Freed device memory is handed out again: the block's buffers start as NaN.
        kernels::cuda_stream st;
        kernels::device_memory pool(std::size_t(512) << 20);
        poison(pool, st);
        st.synchronize("test");
    }
    params p;
    p.backend = backend;
    p.ppi = unsigned(ppi);
    const auto r = run(s, g, p);
    ASSERT_EQ(r.emitted, nimages);
    ASSERT_EQ(r.images.size(), nimages * std::size_t(s.grid.voxels()));
    const std::uint64_t rows = std::uint64_t(s.grid.ny);
    std::size_t all_bad = 0, all_skipped = 0;
    for (std::size_t i = 0; i < nimages; ++i) {
        EXPECT_LE(rel_l2(image_at(r, s, i), reference(s, g, i * ppi, ppi)), tol)
            << "image " << i;
        EXPECT_EQ(tag_value(r.tags, "skipped_pulses", i * rows), (long long)skipped[i])
            << "image " << i;
        EXPECT_EQ(tag_value(r.tags, "nonfinite_samples", i * rows), (long long)bad[i])
            << "image " << i;
        all_bad += bad[i];
        all_skipped += skipped[i];
    }
    EXPECT_EQ(r.nonfinite, all_bad);
    EXPECT_EQ(r.skipped, all_skipped);
}

TEST(BackprojectionBlockCpu, test_019_images_of_different_pulse_counts_in_one_run)
{
    check_images_of_different_pulse_counts("cpu", 256, 160, 5, 1e-6);
    check_images_of_different_pulse_counts("cpu", 256, 10, 40, 1e-6);
}

TEST(BackprojectionBlockCuda, test_018_overlapped_images_of_different_pulse_counts)
{
    GPURADAR_REQUIRE_CUDA();
    // 2^15 bins (256 KiB pulses): an image takes two staging areas (128 pulses each),
    // the areas alternate within and across images.
    check_images_of_different_pulse_counts("cuda", std::size_t(1) << 15, 160, 5, 2e-3);
    // Short pulses and images: many images ready in one work() call (more than it
    // emits at once), images completed in the call after the one that started them.
    check_images_of_different_pulse_counts("cuda", 256, 10, 40, 2e-3);
}

} // namespace
} // namespace gpuradar::test
