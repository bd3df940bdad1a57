/* sar_focus block: a streamed strip focuses without seams (a target across an azimuth
 * block boundary like one inside a block; the stream equals whole-scene focusing), the
 * rows emitted, restarts at a `stripmap` tag, tags out, bad parameters, CUDA vs CPU. */
#include "impulse_response.h"
#include "invalid_argument_check.h"
#include "stream_tags.h"
#include "stripmap_scene.h"
#include "test_support.h"
#include <gnuradio/blocks/vector_sink.h>
#include <gnuradio/blocks/vector_source.h>
#include <gnuradio/top_block.h>
#include <gpuradar/kernels/sar/csa.h>
#include <pmt/pmt.h>

namespace gpuradar::test {
namespace {

namespace sim = kernels::stripmap_sim;
namespace grr = gr::gpuradar;

template <typename F>
void expect_invalid_here(F&& f, const std::string& text)
{
    expect_invalid(std::forward<F>(f), text, "gpuradar::sar_focus");
}

struct focused {
    std::vector<gr_complex> rows; // emitted rows x nrange
    std::vector<gr::tag_t> tags;
    grr::sar_focus::sptr focus;
};

//! stripmap_source (npulses) -> sar_focus -> sink.
focused stream(const kernels::stripmap_params& p,
               const std::vector<sim::point_target>& targets,
               std::size_t npulses,
               double noise_sigma,
               const std::string& backend = "cpu",
               unsigned int naz = 0)
{
    auto src = make_source(p, targets, noise_sigma, npulses);
    auto focus = make_sar_focus(p, naz, backend);
    auto snk = gr::blocks::vector_sink_c::make(unsigned(p.nrange));
    auto tb = gr::make_top_block("sar_focus");
    tb->connect(src, 0, focus, 0);
    tb->connect(focus, 0, snk, 0);
    tb->run();
    return { snk->data(), snk->tags(), focus };
}

//! Rows a strip of n pulses yields: whole blocks after the first overlap.
std::size_t rows_for(const grr::sar_focus& f, std::size_t n)
{
    const std::size_t ov = f.lead() + f.trail();
    return n < ov ? 0 : (n - ov) / f.stride() * f.stride();
}

//! Along-track position whose zero-Doppler line is output row `row` (+ fraction).
double y_of_row(const kernels::stripmap_params& p, const grr::sar_focus& f, double row)
{
    return (row + f.lead()) * p.velocity_mps / p.prf_hz;
}

//! Two targets at one range: across the boundary of blocks 0 and 1, and inside block 2.
void expect_boundary_like_inside(const kernels::stripmap_params& p)
{
    const auto f0 = make_sar_focus(p);
    const double stride = f0->stride();
    // Same range (same focusing), same sub-sample position: one target half-way
    // between the last row of block 0 and the first row of block 1, one in the
    // middle of block 2.
    const double r0 = p.near_range_m + 130.3 * p.range_spacing_m();
    const double at_boundary = stride - 0.5;
    const double inside = 2 * stride + std::floor(stride / 2) - 0.5;
    const std::vector<sim::point_target> targets = {
        target_at(p, r0, y_of_row(p, *f0, at_boundary)),
        target_at(p, r0, y_of_row(p, *f0, inside)),
    };
    const std::size_t npulses = f0->lead() + f0->trail() + 4 * f0->stride();
    const auto out = stream(p, targets, npulses, 0.02);
    std::printf("[ info ] squint %.2f rad: naz %u, lead %u, trail %u\n",
                p.squint_rad,
                f0->naz(),
                f0->lead(),
                f0->trail());
    const std::size_t rows = out.rows.size() / p.nrange;
    ASSERT_EQ(rows, 4 * f0->stride());
    const auto b =
        measure_target(out.rows, rows, p.nrange, std::size_t(at_boundary), 130);
    const auto m = measure_target(out.rows, rows, p.nrange, std::size_t(inside), 130);
    std::printf("[ info ] boundary: peak %.3f dB, az IRW %.3f PSLR %.2f ISLR %.2f, rg "
                "IRW %.3f PSLR %.2f; inside: peak %.3f dB, az IRW %.3f PSLR %.2f ISLR "
                "%.2f, rg IRW %.3f PSLR %.2f\n",
                b.first.peak_db,
                b.first.irw,
                b.first.pslr_db,
                b.first.islr_db,
                b.second.irw,
                b.second.pslr_db,
                m.first.peak_db,
                m.first.irw,
                m.first.pslr_db,
                m.first.islr_db,
                m.second.irw,
                m.second.pslr_db);
    EXPECT_NEAR(b.first.peak_db, m.first.peak_db, 0.2);
    // IRW within 0.2 dB: a width ratio within 10^(0.2/20).
    const double irw_ratio = std::pow(10.0, 0.2 / 20);
    EXPECT_LT(std::max(b.first.irw / m.first.irw, m.first.irw / b.first.irw), irw_ratio);
    EXPECT_LT(std::max(b.second.irw / m.second.irw, m.second.irw / b.second.irw),
              irw_ratio);
    EXPECT_NEAR(b.first.pslr_db, m.first.pslr_db, 0.2);
    EXPECT_NEAR(b.second.pslr_db, m.second.pslr_db, 0.2);
    // and both are focused: rectangular weighting, PSLR near -13.3 dB in both axes
    EXPECT_LT(m.first.pslr_db, -11.0);
    EXPECT_LT(m.second.pslr_db, -11.0);
}

TEST(SarFocusBlock, TargetAcrossABlockBoundaryFocusesLikeOneInsideABlock)
{
    expect_boundary_like_inside(small_stripmap());
}

TEST(SarFocusBlock, SquintedTargetAcrossABlockBoundaryFocusesLikeOneInsideABlock)
{
    // A forward squint: the aperture lies ahead of zero Doppler, the blocks lead by it.
    auto p = small_stripmap();
    p.squint_rad = 0.1;
    expect_boundary_like_inside(p);
}

TEST(SarFocusBlock, StreamedStripEqualsWholeSceneFocusing)
{
    const auto p = small_stripmap();
    const auto f0 = make_sar_focus(p, 256);
    // A strip of four blocks' worth, focused in one piece as the reference; targets
    // everywhere along it (also across block boundaries) and at several ranges.
    // The whole scene is a multiple of the block length, so that the processed Doppler
    // band (the bins within the 3 dB bandwidth) ends at the same frequency in both
    // (otherwise the two impulse responses differ by the band's quantisation, about
    // -40 dB re the peak at every target, seams or not).
    const std::size_t npulses = 4 * f0->naz();
    std::vector<sim::point_target> targets;
    for (int i = 0; i < 12; ++i)
        targets.push_back(
            target_at(p,
                      p.near_range_m + (20 + 19.0 * i) * p.range_spacing_m(),
                      (37.0 + 73.3 * i) * p.velocity_mps / p.prf_hz,
                      0.5 + 0.1 * i));
    for (int b = 1; b <= 3; ++b) // straddling each block boundary (between output rows)
        targets.push_back(target_at(p, 2400.0, y_of_row(p, *f0, b * f0->stride() - 0.5)));
    const auto out = stream(p, targets, npulses, 0.05, "cpu", f0->naz());
    const std::size_t rows = out.rows.size() / p.nrange;
    ASSERT_EQ(rows, rows_for(*f0, npulses));
    ASSERT_GE(rows, 3 * f0->stride());

    const auto raw = sim::simulate(p, targets, 0, npulses, 0.0, 0.05, 7);
    std::vector<kernels::cfloat> whole(raw.size());
    kernels::csa::make(kernels::backend::cpu, p, npulses, {})
        ->run(raw.data(), whole.data());
    // Output row j is the line of pulse j + lead.
    double peak = 0, err = 0;
    for (std::size_t j = 0; j < rows; ++j)
        for (std::size_t k = 0; k < p.nrange; ++k) {
            const auto ref = whole[(j + f0->lead()) * p.nrange + k];
            peak = std::max(peak, double(std::abs(ref)));
            err = std::max(err, double(std::abs(out.rows[j * p.nrange + k] - ref)));
        }
    const double err_db = 20 * std::log10(err / peak);
    std::printf("[ info ] streamed vs whole scene: worst difference %.1f dB re peak\n",
                err_db);
    // Without the guards the seams differ by about -36 dB (azimuth_blocks.h).
    EXPECT_LT(err_db, -40.0);
}

TEST(SarFocusBlock, RowsEmittedAndTheirTag)
{
    const auto p = small_stripmap();
    const auto f0 = make_sar_focus(p);
    const double dy = p.velocity_mps / p.prf_hz;
    for (std::size_t n :
         { std::size_t(f0->lead() + f0->trail() - 1),
           std::size_t(f0->lead() + f0->trail() + 2 * f0->stride()),
           std::size_t(f0->lead() + f0->trail() + 3 * f0->stride() - 1) }) {
        const auto out = stream(p, { target_at(p, 2300, 40.0) }, n, 0.05);
        EXPECT_EQ(out.rows.size() / p.nrange, rows_for(*f0, n)) << n << " pulses";
        EXPECT_EQ(out.focus->blocks(), rows_for(*f0, n) / f0->stride());
        if (rows_for(*f0, n) == 0) {
            EXPECT_TRUE(out.tags.empty());
            continue;
        }
        ASSERT_EQ(out.tags.size(), 1u);
        EXPECT_EQ(out.tags[0].offset, 0u);
        const auto& d = out.tags[0].value;
        EXPECT_EQ(pmt::to_uint64(pmt::dict_ref(d, pmt::intern("pulse"), pmt::PMT_NIL)),
                  f0->lead());
        EXPECT_DOUBLE_EQ(
            pmt::to_double(pmt::dict_ref(d, pmt::intern("y0"), pmt::PMT_NIL)),
            f0->lead() * dy);
    }
}

//! The pulses of `p` with `targets`, n of them, as a vector source with `tags`.
gr::blocks::vector_source_c::sptr tagged_pulses(const kernels::stripmap_params& p,
                                                std::size_t n,
                                                const std::vector<gr::tag_t>& tags)
{
    const auto raw = sim::simulate(p, { target_at(p, 2300, 40.0) }, 0, n, 0.0, 0.05, 3);
    return gr::blocks::vector_source_c::make(
        std::vector<gr_complex>(raw.begin(), raw.end()), false, unsigned(p.nrange), tags);
}

TEST(SarFocusBlock, NewStripAtATagRestartsWithoutMixingTheTwo)
{
    const auto p = small_stripmap();
    const auto f0 = make_sar_focus(p);
    const std::size_t ov = f0->lead() + f0->trail(), st = f0->stride();
    const std::size_t cut = ov + 2 * st + st / 3; // inside the third block
    const std::size_t n = cut + ov + 2 * st + 7;
    const std::vector<gr::tag_t> tags = { strip_tag(0, p.fc_hz, 5.0, 100),
                                          strip_tag(cut, p.fc_hz, -20.0, 9000) };
    auto focus = make_sar_focus(p);
    auto snk = gr::blocks::vector_sink_c::make(unsigned(p.nrange));
    auto tb = gr::make_top_block("sar_focus");
    tb->connect(tagged_pulses(p, n, tags), 0, focus, 0);
    tb->connect(focus, 0, snk, 0);
    tb->run();
    EXPECT_EQ(focus->restarts(), 1u);
    EXPECT_EQ(focus->mismatched_tags(), 0u);
    const std::size_t first = rows_for(*f0, cut), second = rows_for(*f0, n - cut);
    ASSERT_EQ(snk->data().size() / p.nrange, first + second);
    const auto out_tags = snk->tags();
    ASSERT_EQ(out_tags.size(), 2u);
    const double dy = p.velocity_mps / p.prf_hz;
    const std::uint64_t want_offset[] = { 0, first };
    const double want_y0[] = { 5.0 + f0->lead() * dy, -20.0 + f0->lead() * dy };
    const std::uint64_t want_pulse[] = { 100 + f0->lead(), 9000 + f0->lead() };
    for (int i = 0; i < 2; ++i) {
        const auto& d = out_tags[i].value;
        EXPECT_EQ(out_tags[i].offset, want_offset[i]);
        EXPECT_DOUBLE_EQ(
            pmt::to_double(pmt::dict_ref(d, pmt::intern("y0"), pmt::PMT_NIL)),
            want_y0[i]);
        EXPECT_EQ(pmt::to_uint64(pmt::dict_ref(d, pmt::intern("pulse"), pmt::PMT_NIL)),
                  want_pulse[i]);
    }
}

TEST(SarFocusBlock, MismatchedTagIsCountedAndFocusingGoesOn)
{
    const auto p = small_stripmap();
    const auto f0 = make_sar_focus(p);
    const std::size_t n = f0->lead() + f0->trail() + 2 * f0->stride();
    auto focus = make_sar_focus(p);
    auto snk = gr::blocks::vector_sink_c::make(unsigned(p.nrange));
    auto tb = gr::make_top_block("sar_focus");
    tb->connect(tagged_pulses(p, n, { strip_tag(0, 5.3e9, 0.0, 0) }), 0, focus, 0);
    tb->connect(focus, 0, snk, 0);
    tb->run();
    EXPECT_EQ(focus->mismatched_tags(), 1u);
    EXPECT_EQ(focus->restarts(), 0u);
    EXPECT_EQ(snk->data().size() / p.nrange, rows_for(*f0, n));
}

TEST(SarFocusBlock, BlockGeometryFollowsTheAperture)
{
    auto p = small_stripmap();
    const double far = p.near_range_m + double(p.nrange - 1) * p.range_spacing_m();
    const auto f = make_sar_focus(p);
    // lead and trail cover half the far-range aperture each, plus guards
    EXPECT_GE(f->lead(), p.aperture_pulses(far) / 2);
    EXPECT_GE(f->trail(), p.aperture_pulses(far) / 2);
    EXPECT_LE(f->lead(), p.aperture_pulses(far) / 2 * 1.5 + 3);
    EXPECT_EQ(f->stride(), f->naz() - f->lead() - f->trail());
    EXPECT_GE(f->naz(), 4 * (f->lead() + f->trail()));
    // A forward squint of 0.1 rad puts the whole beam ahead of zero Doppler here (the
    // shift R tan(squint) exceeds half the aperture at every range): every row needs
    // pulses before it, none after.
    p.squint_rad = 0.1;
    const auto s = make_sar_focus(p);
    const double shift_far = far * std::tan(0.1) * p.prf_hz / p.velocity_mps;
    const double shift_near = p.near_range_m * std::tan(0.1) * p.prf_hz / p.velocity_mps;
    ASSERT_GT(shift_near, p.aperture_pulses(far) / 2);
    EXPECT_GE(s->lead(), shift_far + p.aperture_pulses(far) / 2);
    EXPECT_EQ(s->trail(), 0u);
    // an explicit naz is kept
    EXPECT_EQ(make_sar_focus(p, 500)->naz(), 500u);
}

TEST(SarFocusBlock, BadParametersNameThemselves)
{
    const auto p = small_stripmap();
    const auto f0 = make_sar_focus(p);
    const unsigned ov = f0->lead() + f0->trail();
    expect_invalid_here([&] { make_sar_focus(p, ov); },
                        "naz must be > " + std::to_string(ov));
    expect_invalid_here([&] { make_sar_focus(p, 10); }, "synthetic aperture");
    expect_invalid_here([&] { make_sar_focus(p, 0, "cpu", "rda"); },
                        "algorithm 'rda' is not implemented yet (allowed: csa)");
    expect_invalid_here([&] { make_sar_focus(p, 0, "cpu", "omega_k"); },
                        "not implemented yet (allowed: csa)");
    expect_invalid_here([&] { make_sar_focus(p, 0, "cpu", "fft"); },
                        "algorithm must be one of csa (got 'fft')");
    expect_invalid_here([&] { make_sar_focus(p, 0, "cpu", "csa", "bogus"); },
                        "range_window");
    expect_invalid_here([&] { make_sar_focus(p, 0, "gpu"); }, "backend");
    auto bad = p;
    bad.prf_hz = 50.0;
    expect_invalid_here([&] { make_sar_focus(bad); }, "prf");
    bad = p;
    bad.pulse_width_s = 10e-6; // longer than the 256-sample window
    expect_invalid_here([&] { make_sar_focus(bad); }, "pulse_width");
}

TEST(SarFocusBlockCuda, CudaMatchesCpuThroughDeviceBuffers)
{
    GPURADAR_REQUIRE_CUDA();
    const auto p = small_stripmap();
    std::vector<sim::point_target> targets;
    for (int i = 0; i < 6; ++i)
        targets.push_back(target_at(p, 2050 + 90.0 * i, 20.0 + 61.7 * i));
    const std::size_t n = 900;
    const auto cpu = stream(p, targets, n, 0.05, "cpu");
    const auto gpu = stream(p, targets, n, 0.05, "cuda");
    ASSERT_EQ(gpu.rows.size(), cpu.rows.size());
    ASSERT_GT(cpu.rows.size(), 0u);
    double peak = 0, err = 0;
    for (std::size_t i = 0; i < cpu.rows.size(); ++i) {
        peak = std::max(peak, double(std::abs(cpu.rows[i])));
        err = std::max(err, double(std::abs(gpu.rows[i] - cpu.rows[i])));
    }
    EXPECT_LT(20 * std::log10(err / peak), -80.0);
    EXPECT_EQ(gpu.tags.size(), 1u);
}

} // namespace
} // namespace gpuradar::test
