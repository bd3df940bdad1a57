/*
 * cfar_2d and cfar_1d blocks in GNU Radio flowgraphs: detections PDU (bins, range_m,
 * velocity_mps, rx_time from the cpi tag), mask and threshold against the kernels, CPI
 * framing (partial and mis-shaped CPIs dropped), NaN/Inf cells, bad parameters; on the
 * GPU (suites *Cuda*) CUDA vs CPU through device buffers.
 */
#include "cfar_test_support.h"
#include "invalid_argument_check.h"
#include "test_support.h"
#include <gnuradio/blocks/head.h>
#include <gnuradio/blocks/message_debug.h>
#include <gnuradio/blocks/null_sink.h>
#include <gnuradio/blocks/vector_sink.h>
#include <gnuradio/blocks/vector_source.h>
#include <gnuradio/gpuradar/cfar_1d.h>
#include <gnuradio/gpuradar/cfar_2d.h>
#include <gnuradio/gpuradar/device_buffer.h>
#include <gnuradio/gpuradar/envelope.h>
#include <gnuradio/top_block.h>
#include <gpuradar/kernels/detection/cfar_1d.h>
#include <gpuradar/kernels/detection/cfar_2d.h>
#include <pmt/pmt.h>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>

namespace gpuradar::test {
namespace {

namespace grr = gr::gpuradar;
constexpr double c_light = 299792458.0;

pmt::pmt_t field(const pmt::pmt_t& dict, const char* key)
{
    return pmt::dict_ref(dict, pmt::intern(key), pmt::PMT_NIL);
}
bool has(const pmt::pmt_t& dict, const char* key)
{
    return pmt::dict_has_key(dict, pmt::intern(key));
}
std::uint64_t u64(const pmt::pmt_t& dict, const char* key)
{
    return pmt::to_uint64(field(dict, key));
}
double dbl(const pmt::pmt_t& dict, const char* key)
{
    return pmt::to_double(field(dict, key));
}

//! A `cpi` tag; `extra` adds fields (fs, prf, ...).
gr::tag_t cpi_tag(std::uint64_t offset,
                  std::uint64_t index,
                  const std::function<pmt::pmt_t(pmt::pmt_t)>& extra = {})
{
    pmt::pmt_t d = pmt::make_dict();
    d = pmt::dict_add(d, pmt::intern("index"), pmt::from_uint64(index));
    if (extra)
        d = extra(d);
    gr::tag_t t;
    t.offset = offset;
    t.key = pmt::intern("cpi");
    t.value = d;
    return t;
}

pmt::pmt_t add_u64(pmt::pmt_t d, const char* k, std::uint64_t v)
{
    return pmt::dict_add(d, pmt::intern(k), pmt::from_uint64(v));
}
pmt::pmt_t add_dbl(pmt::pmt_t d, const char* k, double v)
{
    return pmt::dict_add(d, pmt::intern(k), pmt::from_double(v));
}

struct run_result {
    std::vector<std::uint8_t> mask;
    std::vector<float> threshold;
    std::vector<gr::tag_t> tags;
    std::vector<pmt::pmt_t> pdus;
};

struct cfar2d_cfg {
    unsigned nrange = 40, ndoppler = 24, channels = 1;
    int gr = 1, tr = 4, gd = 1, td = 2;
    double pfa = 1e-4;
    std::string variant = "ca";
    int os_k = 0;
    std::string range_edge = "clip", doppler_edge = "wrap";
    bool local_max = false;
    unsigned max_det = 4096;
};

grr::cfar_2d::sptr make_2d(const cfar2d_cfg& c, const char* backend)
{
    return grr::cfar_2d::make(c.nrange,
                              c.ndoppler,
                              c.channels,
                              c.gr,
                              c.tr,
                              c.gd,
                              c.td,
                              c.pfa,
                              c.variant,
                              c.os_k,
                              c.range_edge,
                              c.doppler_edge,
                              c.local_max,
                              c.max_det,
                              backend);
}

//! source -> block -> mask sink (+ threshold sink) and a message store on `detections`.
run_result run_block(gr::block_sptr blk,
                     unsigned vlen,
                     const std::vector<float>& x,
                     const std::vector<gr::tag_t>& tags,
                     bool with_threshold)
{
    auto tb = gr::make_top_block("cfar");
    auto src = gr::blocks::vector_source_f::make(x, false, vlen, tags);
    auto mask = gr::blocks::vector_sink_b::make(vlen);
    auto thr = gr::blocks::vector_sink_f::make(vlen);
    auto dbg = gr::blocks::message_debug::make();
    tb->connect(src, 0, blk, 0);
    tb->connect(blk, 0, mask, 0);
    if (with_threshold)
        tb->connect(blk, 1, thr, 0);
    tb->msg_connect(blk, "detections", dbg, "store");
    tb->run();
    run_result r{ mask->data(), thr->data(), mask->tags(), {} };
    for (std::size_t i = 0; i < dbg->num_messages(); ++i)
        r.pdus.push_back(dbg->get_message(i));
    return r;
}

std::vector<pmt::pmt_t> detections_of(const pmt::pmt_t& pdu)
{
    std::vector<pmt::pmt_t> out;
    const pmt::pmt_t v = pmt::cdr(pdu);
    for (std::size_t i = 0; i < pmt::length(v); ++i)
        out.push_back(pmt::vector_ref(v, i));
    return out;
}

kernels::cfar_2d_params kernel_params(const cfar2d_cfg& c)
{
    kernels::cfar_2d_params p;
    p.nrange = c.nrange;
    p.ndoppler = c.ndoppler;
    p.channels = c.channels;
    p.guard_range = c.gr;
    p.train_range = c.tr;
    p.guard_doppler = c.gd;
    p.train_doppler = c.td;
    p.pfa = c.pfa;
    p.variant = kernels::parse_cfar_variant(c.variant);
    const int n = (2 * (c.gr + c.tr) + 1) * (2 * (c.gd + c.td) + 1) -
                  (2 * c.gr + 1) * (2 * c.gd + 1);
    p.os_k = c.os_k ? c.os_k : kernels::cfar_default_os_k(n);
    p.range_edge = kernels::parse_cfar_edge(c.range_edge, "range_edge");
    p.doppler_edge = kernels::parse_cfar_edge(c.doppler_edge, "doppler_edge");
    p.local_max = c.local_max;
    p.max_detections = c.max_det;
    return p;
}

//! The kernel's CPU mask and threshold of one CPI.
std::pair<std::vector<std::uint8_t>, std::vector<float>> kernel_cpi(const cfar2d_cfg& c,
                                                                    const float* cpi)
{
    auto k = kernels::cfar_2d::make(kernels::backend::cpu, kernel_params(c));
    const std::size_t n = std::size_t(c.nrange) * c.channels * c.ndoppler;
    std::vector<std::uint8_t> m(n);
    std::vector<float> t(n);
    k->run(cpi, m.data(), t.data(), 1);
    return { m, t };
}

// Exponential noise of mean 1 with strong point targets; one CPI per tag, the tag
// carrying fs, prf, fc, r0, ndoppler, fftshift and rx_time.
TEST(CfarBlocksCpu, test_001_injected_targets_reported_with_range_and_velocity)
{
    cfar2d_cfg c;
    c.nrange = 64;
    c.ndoppler = 32;
    c.pfa = 1e-6;
    c.local_max = true;
    const std::size_t cpi_cells = std::size_t(c.nrange) * c.ndoppler;
    auto x = exponential_map(2 * cpi_cells, 101);
    struct target {
        unsigned cpi, r, d;
    };
    const std::vector<target> targets = {
        { 0, 10, 5 }, { 0, 40, 20 }, { 1, 3, 31 }, { 1, 63, 0 }
    };
    for (const auto& t : targets)
        x[t.cpi * cpi_cells + std::size_t(t.r) * c.ndoppler + t.d] = 1e4f; // 40 dB
    const double fs = 10e6, prf = 2e3, fc = 10e9, r0 = 1500.0;
    auto fields = [&](bool shift) {
        return [=](pmt::pmt_t d) {
            d = add_u64(d, "npulses", 30); // fewer pulses than Doppler bins (zero padded)
            d = add_u64(d, "nrange", 64);
            d = add_u64(d, "ndoppler", 32);
            d = add_dbl(d, "fs", fs);
            d = add_dbl(d, "prf", prf);
            d = add_dbl(d, "fc", fc);
            d = add_dbl(d, "r0", r0);
            d = pmt::dict_add(d, pmt::intern("fftshift"), pmt::from_bool(shift));
            d = pmt::dict_add(
                d,
                pmt::intern("rx_time"),
                pmt::make_tuple(pmt::from_uint64(100), pmt::from_double(0.25)));
            return d;
        };
    };
    const std::vector<gr::tag_t> tags = { cpi_tag(0, 7, fields(true)),
                                          cpi_tag(c.nrange, 8, fields(false)) };
    auto blk = make_2d(c, "cpu");
    const auto res = run_block(blk, c.ndoppler, x, tags, false);
    ASSERT_EQ(res.mask.size(), 2 * cpi_cells);
    ASSERT_EQ(res.pdus.size(), 2u);
    for (unsigned cpi = 0; cpi < 2; ++cpi) {
        const pmt::pmt_t meta = pmt::car(res.pdus[cpi]);
        EXPECT_EQ(u64(meta, "cpi"), 7u + cpi);
        EXPECT_EQ(u64(meta, "nonfinite"), 0u);
        EXPECT_FALSE(pmt::to_bool(field(meta, "overflow")));
        EXPECT_DOUBLE_EQ(dbl(meta, "fs"), fs); // the tag's fields travel in the metadata
        const auto dets = detections_of(res.pdus[cpi]);
        EXPECT_EQ(u64(meta, "ndetections"), dets.size());
        std::vector<target> want;
        for (const auto& t : targets)
            if (t.cpi == cpi)
                want.push_back(t);
        ASSERT_EQ(dets.size(), want.size()) << "cpi " << cpi; // 4096 cells at 1e-6: no FA
        for (std::size_t i = 0; i < want.size(); ++i) { // sorted by (range, Doppler)
            const auto& d = dets[i];
            EXPECT_EQ(u64(d, "range_bin"), want[i].r);
            EXPECT_EQ(u64(d, "doppler_bin"), want[i].d);
            EXPECT_EQ(u64(d, "channel"), 0u);
            EXPECT_EQ(u64(d, "cpi"), 7u + cpi);
            EXPECT_DOUBLE_EQ(dbl(d, "power"), 1e4);
            const double thr = dbl(d, "threshold"), noise = dbl(d, "noise");
            const int wr = c.gr + c.tr;
            if (int(want[i].r) >= wr && int(want[i].r) < int(c.nrange) - wr)
                EXPECT_NEAR(thr / noise, blk->alpha(), 1e-4 * blk->alpha())
                    << "interior cells use the full window's alpha";
            else // clipped in range: a smaller window, a larger alpha
                EXPECT_GT(thr / noise, blk->alpha());
            EXPECT_NEAR(dbl(d, "snr_db"), 10 * std::log10(1e4 / noise), 1e-9);
            EXPECT_NEAR(dbl(d, "range_m"), r0 + want[i].r * c_light / (2 * fs), 1e-6);
            // cpi 0: fftshift (zero Doppler at bin 16); cpi 1: unshifted, bins >= 16
            // negative.
            const int m = int(want[i].d);
            const int k = cpi == 0 ? m - 16 : (m >= 16 ? m - 32 : m);
            EXPECT_NEAR(dbl(d, "velocity_mps"), k * prf / 32 * c_light / (2 * fc), 1e-9)
                << "bin " << m;
            const pmt::pmt_t rx = field(d, "rx_time");
            ASSERT_TRUE(pmt::is_tuple(rx));
            EXPECT_EQ(pmt::to_uint64(pmt::tuple_ref(rx, 0)), 100u);
            EXPECT_DOUBLE_EQ(pmt::to_double(pmt::tuple_ref(rx, 1)), 0.25);
        }
    }
    // Spot values: r = 10 -> 1500 + 10 * 14.9896229 m; d = 5 shifted -> -11 bins.
    const auto d0 = detections_of(res.pdus[0])[0];
    EXPECT_NEAR(dbl(d0, "range_m"), 1649.896229, 1e-6);
    EXPECT_NEAR(dbl(d0, "velocity_mps"), -11 * 62.5 * 0.0149896229, 1e-9);
    // The cpi tags are passed on at the first item of each CPI.
    ASSERT_EQ(res.tags.size(), 2u);
    EXPECT_EQ(res.tags[0].offset, 0u);
    EXPECT_EQ(res.tags[1].offset, c.nrange);
    EXPECT_EQ(u64(res.tags[1].value, "index"), 8u);
    EXPECT_EQ(blk->dropped_cpis(), 0u);
}

// The block's mask and threshold are the kernel's, for every variant and edge mode, two
// channels, untagged CPIs (indexed from 0).
TEST(CfarBlocksCpu, test_002_mask_and_threshold_match_the_kernel)
{
    const char* variants[] = { "ca", "go", "so", "os" };
    const char* edges[][2] = { { "clip", "wrap" },
                               { "wrap", "clip" },
                               { "clip", "clip" } };
    std::uint64_t seed = 200;
    for (const char* v : variants)
        for (const auto& e : edges) {
            cfar2d_cfg c;
            c.nrange = 37;
            c.ndoppler = 19;
            c.channels = 2;
            c.variant = v;
            c.range_edge = e[0];
            c.doppler_edge = e[1];
            c.pfa = 1e-2; // many detections: a real comparison
            c.local_max = seed % 2;
            const std::size_t cpi_cells = std::size_t(c.nrange) * c.channels * c.ndoppler;
            const auto x = exponential_map(3 * cpi_cells, ++seed);
            const auto res =
                run_block(make_2d(c, "cpu"), c.channels * c.ndoppler, x, {}, true);
            ASSERT_EQ(res.mask.size(), x.size());
            ASSERT_EQ(res.threshold.size(), x.size());
            ASSERT_EQ(res.pdus.size(), 3u);
            for (unsigned cpi = 0; cpi < 3; ++cpi) {
                const auto [m, t] = kernel_cpi(c, x.data() + cpi * cpi_cells);
                std::size_t count = 0;
                for (std::size_t i = 0; i < cpi_cells; ++i) {
                    ASSERT_EQ(res.mask[cpi * cpi_cells + i], m[i])
                        << v << " " << e[0] << "/" << e[1] << " cpi " << cpi << " cell "
                        << i;
                    ASSERT_EQ(res.threshold[cpi * cpi_cells + i], t[i]);
                    count += m[i];
                }
                const auto dets = detections_of(res.pdus[cpi]);
                EXPECT_EQ(dets.size(), count);
                EXPECT_EQ(u64(pmt::car(res.pdus[cpi]), "cpi"), cpi);
                for (const auto& d : dets) { // every listed cell is set in the mask
                    const std::size_t cell =
                        (u64(d, "range_bin") * c.channels + u64(d, "channel")) *
                            c.ndoppler +
                        u64(d, "doppler_bin");
                    EXPECT_EQ(m[cell], 1);
                    EXPECT_FALSE(has(d, "range_m")); // no fs without a tag
                    EXPECT_FALSE(has(d, "velocity_mps"));
                }
                ASSERT_EQ(res.tags.size(), 3u);
                EXPECT_EQ(res.tags[cpi].offset, cpi * c.nrange);
                EXPECT_EQ(u64(res.tags[cpi].value, "index"), cpi);
            }
        }
}

// A tag inside a CPI (items lost upstream) drops the partial CPI and realigns; a tag of
// another shape drops its CPI; other tags move with their CPI.
TEST(CfarBlocksCpu, test_003_partial_and_misshaped_cpis_dropped)
{
    cfar2d_cfg c;
    c.nrange = 20;
    c.ndoppler = 8;
    c.tr = 3;
    c.td = 1;
    const std::size_t item = c.ndoppler;
    const std::size_t items = 5 + 3 * c.nrange;
    const auto x = exponential_map(items * item, 300);
    auto shape = [&](unsigned nd) {
        return [=](pmt::pmt_t d) {
            d = add_u64(d, "nrange", 20);
            return add_u64(d, "ndoppler", nd);
        };
    };
    gr::tag_t other;
    other.offset = 5 + 3;
    other.key = pmt::intern("marker");
    other.value = pmt::from_long(42);
    const std::vector<gr::tag_t> tags = {
        cpi_tag(0, 0, shape(8)),               // cut short at item 5
        cpi_tag(5, 1, shape(8)),               // kept: items 5..24
        other,                                 // inside CPI 1
        cpi_tag(5 + c.nrange, 2, shape(9)),    // wrong ndoppler: dropped
        cpi_tag(5 + 2 * c.nrange, 3, shape(8)) // kept
    };
    auto blk = make_2d(c, "cpu");
    const auto res = run_block(blk, c.ndoppler, x, tags, false);
    EXPECT_EQ(blk->dropped_cpis(), 2u);
    ASSERT_EQ(res.mask.size(), 2 * c.nrange * item);
    const std::size_t firsts[] = { 5, 5 + 2 * c.nrange };
    for (int k = 0; k < 2; ++k) {
        const auto [m, t] = kernel_cpi(c, x.data() + firsts[k] * item);
        for (std::size_t i = 0; i < m.size(); ++i)
            ASSERT_EQ(res.mask[k * c.nrange * item + i], m[i])
                << "cpi " << k << " cell " << i;
    }
    ASSERT_EQ(res.pdus.size(), 2u);
    EXPECT_EQ(u64(pmt::car(res.pdus[0]), "cpi"), 1u);
    EXPECT_EQ(u64(pmt::car(res.pdus[1]), "cpi"), 3u);
    ASSERT_EQ(res.tags.size(), 3u);
    EXPECT_EQ(res.tags[0].offset, 0u);
    EXPECT_EQ(u64(res.tags[0].value, "index"), 1u);
    EXPECT_EQ(res.tags[1].offset, 3u); // the marker, 3 items into the kept CPI
    EXPECT_EQ(pmt::to_long(res.tags[1].value), 42);
    EXPECT_EQ(res.tags[2].offset, c.nrange);
    EXPECT_EQ(u64(res.tags[2].value, "index"), 3u);
}

// NaN and +-Inf cells never crash, are never detections, and are counted per CPI.
TEST(CfarBlocksCpu, test_004_nonfinite_cells_never_detected_and_counted)
{
    cfar2d_cfg c;
    c.nrange = 30;
    c.ndoppler = 16;
    c.pfa = 1e-3;
    const std::size_t cpi_cells = std::size_t(c.nrange) * c.ndoppler;
    auto x = exponential_map(2 * cpi_cells, 400);
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float inf = std::numeric_limits<float>::infinity();
    const std::vector<std::size_t> bad0 = { 5, 77, 200, 201 };
    x[bad0[0]] = nan;
    x[bad0[1]] = inf;
    x[bad0[2]] = -inf;
    x[bad0[3]] = nan;
    x[cpi_cells + 100] = inf; // CPI 1: one
    x[403] = 1e5f;            // a target far from the bad cells (row 25)
    x[150] = 1e5f;            // a target with a NaN among its training cells (row 12)
    auto blk = make_2d(c, "cpu");
    const auto res = run_block(blk, c.ndoppler, x, {}, true);
    ASSERT_EQ(res.mask.size(), x.size());
    for (std::size_t i : bad0)
        EXPECT_EQ(res.mask[i], 0) << i;
    EXPECT_EQ(res.mask[cpi_cells + 100], 0);
    EXPECT_EQ(res.mask[403], 1);
    // NaN training cells stand for +Inf interference: ca cannot detect beside them.
    EXPECT_EQ(res.mask[150], 0);
    EXPECT_TRUE(std::isinf(res.threshold[150]));
    EXPECT_EQ(blk->nonfinite_cells(), 5u);
    ASSERT_EQ(res.pdus.size(), 2u);
    EXPECT_EQ(u64(pmt::car(res.pdus[0]), "nonfinite"), 4u);
    EXPECT_EQ(u64(pmt::car(res.pdus[1]), "nonfinite"), 1u);
    for (const auto& pdu : res.pdus)
        for (const auto& d : detections_of(pdu))
            EXPECT_TRUE(std::isfinite(dbl(d, "power")));
    const auto [m, t] = kernel_cpi(c, x.data());
    for (std::size_t i = 0; i < cpi_cells; ++i)
        ASSERT_EQ(res.mask[i], m[i]) << i;
}

// The threshold port is optional; the mask does not depend on it; overflow is reported.
TEST(CfarBlocksCpu, test_005_threshold_optional_and_overflow)
{
    cfar2d_cfg c;
    c.pfa = 0.2; // many detections
    c.max_det = 5;
    const auto x = exponential_map(std::size_t(c.nrange) * c.ndoppler, 500);
    auto blk_a = make_2d(c, "cpu");
    const auto a = run_block(blk_a, c.ndoppler, x, {}, false);
    const auto b = run_block(make_2d(c, "cpu"), c.ndoppler, x, {}, true);
    EXPECT_EQ(a.mask, b.mask);
    EXPECT_TRUE(a.threshold.empty());
    ASSERT_EQ(a.pdus.size(), 1u);
    const pmt::pmt_t meta = pmt::car(a.pdus[0]);
    EXPECT_TRUE(pmt::to_bool(field(meta, "overflow")));
    EXPECT_EQ(detections_of(a.pdus[0]).size(), 5u);
    std::size_t set = 0;
    for (auto v : a.mask)
        set += v;
    EXPECT_EQ(u64(meta, "found"), set);
    EXPECT_EQ(blk_a->overflowed_cpis(), 1u);
}

// A long stream of tagged CPIs, some cut short at random points (lost items), across
// many work() calls: every complete CPI comes out once, in order, with its own mask.
TEST(CfarBlocksCpu, test_008_long_stream_with_random_gaps)
{
    cfar2d_cfg c;
    c.nrange = 13;
    c.ndoppler = 8;
    c.gr = 1;
    c.tr = 2;
    c.pfa = 1e-2;
    const std::size_t item = c.ndoppler;
    fast_rng rng(800);
    std::vector<gr::tag_t> tags;
    std::vector<std::size_t> kept; // first item of each complete CPI
    std::size_t pos = 0;
    for (std::uint64_t index = 0; index < 200; ++index) {
        tags.push_back(cpi_tag(pos, index));
        const bool cut = rng.next() % 4 == 0;
        const std::size_t len = cut ? 1 + rng.next() % (c.nrange - 1) : c.nrange;
        if (!cut)
            kept.push_back(pos);
        pos += len;
    }
    const auto x = exponential_map(pos * item, 801);
    auto blk = make_2d(c, "cpu");
    const auto res = run_block(blk, c.ndoppler, x, tags, false);
    EXPECT_EQ(blk->dropped_cpis(), 200 - kept.size());
    ASSERT_EQ(res.mask.size(), kept.size() * c.nrange * item);
    ASSERT_EQ(res.pdus.size(), kept.size());
    for (std::size_t k = 0; k < kept.size(); ++k) {
        const auto [m, t] = kernel_cpi(c, x.data() + kept[k] * item);
        for (std::size_t i = 0; i < m.size(); ++i)
            ASSERT_EQ(res.mask[k * c.nrange * item + i], m[i]) << "cpi " << k;
        EXPECT_EQ(res.tags[k].offset, k * c.nrange);
        EXPECT_EQ(u64(res.tags[k].value, "index"), u64(pmt::car(res.pdus[k]), "cpi"));
    }
}

TEST(CfarBlocksBadInput, test_006_cfar_2d_parameters_named)
{
    using P = cfar2d_cfg;
    auto mk = [](std::function<void(P&)> f) {
        return [f] {
            P c;
            f(c);
            make_2d(c, "cpu");
        };
    };
    expect_invalid(mk([](P& c) { c.gr = -1; }), "guard_range");
    expect_invalid(mk([](P& c) { c.tr = -1; }), "train_range");
    expect_invalid(mk([](P& c) { c.gd = -1; }), "guard_doppler");
    expect_invalid(mk([](P& c) { c.td = -1; }), "train_doppler");
    expect_invalid(mk([](P& c) { c.tr = 0, c.td = 0; }), "train_range + train_doppler");
    expect_invalid(mk([](P& c) { c.pfa = 0; }), "pfa");
    expect_invalid(mk([](P& c) { c.pfa = 1; }), "pfa");
    expect_invalid(mk([](P& c) { c.variant = "cfar"; }), "variant");
    expect_invalid(mk([](P& c) { c.range_edge = "zero"; }), "range_edge");
    expect_invalid(mk([](P& c) { c.doppler_edge = "zero"; }), "doppler_edge");
    expect_invalid(mk([](P& c) { c.nrange = 0; }), "nrange");
    expect_invalid(mk([](P& c) { c.ndoppler = 0; }), "ndoppler");
    expect_invalid(mk([](P& c) { c.channels = 0; }), "channels");
    expect_invalid(mk([](P& c) { c.max_det = 0; }), "max_detections");
    expect_invalid([] { make_2d(cfar2d_cfg{}, "gpu"); }, "backend");
    // os_k: N passes, N + 1 and -1 throw, 0 is the default round(3N/4).
    cfar2d_cfg os;
    os.variant = "os"; // window 11 x 7 minus guard 3 x 3: N = 68
    os.os_k = 68;
    EXPECT_NO_THROW(make_2d(os, "cpu"));
    os.os_k = 69;
    expect_invalid([&] { make_2d(os, "cpu"); }, "os_k");
    os.os_k = -1;
    expect_invalid([&] { make_2d(os, "cpu"); }, "os_k");
    os.os_k = 0;
    EXPECT_EQ(make_2d(os, "cpu")->os_k(), 51);
    EXPECT_EQ(make_2d(os, "cpu")->training_cells(), 68);
    // A clipped window as wide as the map passes, one wider fails naming the extent.
    cfar2d_cfg w;
    w.nrange = 11; // 2 (1 + 4) + 1 = 11
    EXPECT_NO_THROW(make_2d(w, "cpu"));
    w.tr = 5;
    expect_invalid([&] { make_2d(w, "cpu"); }, "nrange");
    cfar2d_cfg wd;
    wd.ndoppler = 7; // 2 (1 + 2) + 1 = 7, wrapped: must not meet itself
    EXPECT_NO_THROW(make_2d(wd, "cpu"));
    wd.ndoppler = 6;
    expect_invalid([&] { make_2d(wd, "cpu"); }, "ndoppler");
}

TEST(CfarBlocksBadInput, test_007_vector_length_mismatch_at_connect)
{
    auto tb = gr::make_top_block("mismatch");
    auto src = gr::blocks::vector_source_f::make(std::vector<float>(25, 1.f), false, 25);
    auto blk = grr::cfar_2d::make(
        40, 24, 1, 1, 4, 1, 2, 1e-4, "ca", 0, "clip", "wrap", false, 4096, "cpu");
    try {
        tb->connect(src, 0, blk, 0);
        ADD_FAILURE() << "connect accepted vlen 25 into ndoppler 24";
    } catch (const std::exception& e) {
        EXPECT_NE(std::string(e.what()).find("itemsize mismatch"), std::string::npos)
            << e.what();
    }
}

// cfar_1d: targets on lines, groups of items_per_cpi items, tags give cpi, item, range_m.
TEST(CfarBlocksCpu, test_010_cfar_1d_targets_groups_and_kernel_mask)
{
    const unsigned nrange = 300, ch = 2, group = 4;
    const std::size_t item = std::size_t(nrange) * ch;
    const std::size_t nitems = 13; // tag at 0 and 8 -> groups 0..3, 4..7, 8..11; 12 left
    auto x = exponential_map(nitems * item, 600);
    // (item, channel, bin)
    const std::vector<std::array<unsigned, 3>> targets = { { 1, 0, 50 },
                                                           { 6, 1, 299 },
                                                           { 9, 0, 0 } };
    for (const auto& t : targets)
        x[t[0] * item + t[1] * nrange + t[2]] = 1e5f;
    auto fs_tag = [](pmt::pmt_t d) {
        d = add_u64(d, "nrange", 300);
        d = add_u64(d, "channels", 2);
        d = add_dbl(d, "fs", 5e6);
        return add_dbl(d, "r0", 0.0);
    };
    const std::vector<gr::tag_t> tags = { cpi_tag(0, 3, fs_tag), cpi_tag(8, 4, fs_tag) };
    auto blk = grr::cfar_1d::make(
        nrange, ch, 2, 16, 1e-6, "go", 0, "clip", true, group, 4096, "cpu");
    const auto res = run_block(blk, ch * nrange, x, tags, true);
    ASSERT_EQ(res.mask.size(), 12 * item);
    ASSERT_EQ(res.pdus.size(), 3u);
    // Group 0: cpi 3 items 0..3; group 1: cpi 3 items 4..7; group 2: cpi 4 items 0..3.
    const std::uint64_t want_cpi[] = { 3, 3, 4 }, want_first[] = { 0, 4, 0 };
    std::vector<std::array<std::uint64_t, 4>> got; // cpi, item, channel, bin
    for (int g = 0; g < 3; ++g) {
        const pmt::pmt_t meta = pmt::car(res.pdus[g]);
        EXPECT_EQ(u64(meta, "cpi"), want_cpi[g]);
        EXPECT_EQ(u64(meta, "first_item"), want_first[g]);
        for (const auto& d : detections_of(res.pdus[g])) {
            got.push_back({ u64(d, "cpi"),
                            u64(d, "item"),
                            u64(d, "channel"),
                            u64(d, "range_bin") });
            EXPECT_EQ(u64(d, "doppler_bin"), 0u);
            EXPECT_NEAR(
                dbl(d, "range_m"), u64(d, "range_bin") * c_light / (2 * 5e6), 1e-6);
            EXPECT_FALSE(has(d, "velocity_mps"));
        }
    }
    const std::vector<std::array<std::uint64_t, 4>> want = { { 3, 1, 0, 50 },
                                                             { 3, 6, 1, 299 },
                                                             { 4, 1, 0, 0 } };
    EXPECT_EQ(got, want);
    // The mask and threshold are the kernel's.
    kernels::cfar_1d_params p;
    p.nrange = nrange;
    p.channels = ch;
    p.guard = 2;
    p.train = 16;
    p.pfa = 1e-6;
    p.variant = kernels::cfar_variant::go;
    p.local_max = true;
    p.max_items = 12;
    auto k = kernels::cfar_1d::make(kernels::backend::cpu, p);
    std::vector<std::uint8_t> m(12 * item);
    std::vector<float> t(12 * item);
    k->run(x.data(), m.data(), t.data(), 12);
    EXPECT_EQ(res.mask, m);
    EXPECT_EQ(res.threshold, t);
    ASSERT_EQ(res.tags.size(), 2u); // the cpi tags where they came in
    EXPECT_EQ(res.tags[1].offset, 8u);
}

TEST(CfarBlocksCpu, test_011_cfar_1d_untagged_groups_and_partial_group)
{
    const unsigned nrange = 64;
    const auto x = exponential_map(10 * nrange, 700);
    // A tag at item 3 cuts the first group of 4 short; then groups at 3 and 7; item 11
    // would be the next group, incomplete at the end.
    auto blk =
        grr::cfar_1d::make(nrange, 1, 1, 8, 1e-3, "so", 0, "wrap", false, 4, 4096, "cpu");
    const auto res = run_block(blk, nrange, x, { cpi_tag(3, 0) }, false);
    EXPECT_EQ(blk->dropped_cpis(), 1u);
    ASSERT_EQ(res.mask.size(), 4u * nrange); // items 3..6; 7..9 incomplete
    ASSERT_EQ(res.pdus.size(), 1u);
    auto blk2 =
        grr::cfar_1d::make(nrange, 1, 1, 8, 1e-3, "ca", 0, "clip", false, 1, 4096, "cpu");
    const auto res2 = run_block(blk2, nrange, x, {}, false);
    ASSERT_EQ(res2.pdus.size(), 10u);
    ASSERT_EQ(res2.tags.size(), 10u);
    for (std::uint64_t i = 0; i < 10; ++i) {
        EXPECT_EQ(u64(pmt::car(res2.pdus[i]), "cpi"), i);
        EXPECT_EQ(u64(res2.tags[i].value, "index"), i);
    }
}

TEST(CfarBlocksBadInput, test_012_cfar_1d_parameters_named)
{
    auto mk = [](unsigned nrange,
                 int guard,
                 int train,
                 double pfa,
                 const char* variant,
                 int os_k,
                 const char* edge,
                 unsigned group,
                 unsigned max_det) {
        return [=] {
            grr::cfar_1d::make(nrange,
                               1,
                               guard,
                               train,
                               pfa,
                               variant,
                               os_k,
                               edge,
                               false,
                               group,
                               max_det,
                               "cpu");
        };
    };
    expect_invalid(mk(64, -1, 8, 1e-3, "ca", 0, "clip", 1, 10), "guard");
    expect_invalid(mk(64, 1, 0, 1e-3, "ca", 0, "clip", 1, 10), "train");
    expect_invalid(mk(64, 1, 8, 0.0, "ca", 0, "clip", 1, 10), "pfa");
    expect_invalid(mk(64, 1, 8, 1.5, "ca", 0, "clip", 1, 10), "pfa");
    expect_invalid(mk(64, 1, 8, 1e-3, "xx", 0, "clip", 1, 10), "variant");
    expect_invalid(mk(64, 1, 8, 1e-3, "ca", 0, "pad", 1, 10), "edge");
    expect_invalid(mk(64, 1, 8, 1e-3, "os", 17, "clip", 1, 10), "os_k");
    EXPECT_NO_THROW(mk(64, 1, 8, 1e-3, "os", 16, "clip", 1, 10)());
    expect_invalid(mk(64, 1, 8, 1e-3, "ca", 0, "clip", 0, 10), "items_per_cpi");
    expect_invalid(mk(64, 1, 8, 1e-3, "ca", 0, "clip", 1, 0), "max_detections");
    expect_invalid(mk(0, 1, 8, 1e-3, "ca", 0, "clip", 1, 10), "nrange");
    EXPECT_NO_THROW(mk(19, 1, 8, 1e-3, "ca", 0, "clip", 1, 10)()); // 2 (1 + 8) + 1 = 19
    expect_invalid(mk(18, 1, 8, 1e-3, "ca", 0, "clip", 1, 10), "nrange");
}

// ---- GPU: CUDA against the CPU through device buffers -------------------------------

// Host source -> envelope (square law) -> cfar_2d, both on `backend`.
struct chain_result {
    run_result r;
    grr::device_buffer::stats stats;
};

chain_result run_chain(const cfar2d_cfg& c,
                       const std::vector<gr_complex>& x,
                       const std::vector<gr::tag_t>& tags,
                       const char* backend)
{
    const unsigned vlen = c.channels * c.ndoppler;
    auto tb = gr::make_top_block("cfar_chain");
    auto src = gr::blocks::vector_source_c::make(x, false, vlen, tags);
    auto env = grr::envelope::make(vlen, "square_law", false, backend);
    auto blk = make_2d(c, backend);
    auto mask = gr::blocks::vector_sink_b::make(vlen);
    auto thr = gr::blocks::vector_sink_f::make(vlen);
    auto dbg = gr::blocks::message_debug::make();
    tb->connect(src, 0, env, 0);
    tb->connect(env, 0, blk, 0);
    tb->connect(blk, 0, mask, 0);
    tb->connect(blk, 1, thr, 0);
    tb->msg_connect(blk, "detections", dbg, "store");
    grr::device_buffer::reset_transfer_stats();
    tb->run();
    chain_result out{ { mask->data(), thr->data(), mask->tags(), {} },
                      grr::device_buffer::transfer_stats() };
    for (std::size_t i = 0; i < dbg->num_messages(); ++i)
        out.r.pdus.push_back(dbg->get_message(i));
    return out;
}

void compare_cuda_cpu(const cfar2d_cfg& c, std::size_t ncpi, std::uint32_t seed)
{
    const std::size_t cells = std::size_t(c.nrange) * c.channels * c.ndoppler * ncpi;
    const auto x = random_complex(cells, seed);
    std::vector<gr::tag_t> tags;
    for (std::size_t i = 0; i < ncpi; ++i)
        tags.push_back(cpi_tag(
            i * c.nrange, 10 + i, [](pmt::pmt_t d) { return add_dbl(d, "fs", 20e6); }));
    const auto gpu = run_chain(c, x, tags, "cuda");
    const auto cpu = run_chain(c, x, tags, "cpu");
    ASSERT_EQ(gpu.r.mask.size(), cells);
    ASSERT_EQ(cpu.r.mask.size(), cells);
    ASSERT_EQ(gpu.r.threshold.size(), cells);
    std::size_t differ = 0, detections = 0;
    for (std::size_t i = 0; i < cells; ++i) {
        detections += cpu.r.mask[i];
        if (gpu.r.mask[i] != cpu.r.mask[i]) {
            ++differ;
            const double p = std::norm(std::complex<double>(x[i]));
            ASSERT_TRUE(may_differ(p, gpu.r.threshold[i], cpu.r.threshold[i]))
                << "cell " << i << " power " << p << " thresholds " << gpu.r.threshold[i]
                << " / " << cpu.r.threshold[i];
        }
    }
    EXPECT_GT(detections, 0u);
    EXPECT_LE(differ, cells / 10000 + 2);
    ASSERT_EQ(gpu.r.pdus.size(), ncpi);
    for (std::size_t i = 0; i < ncpi; ++i) {
        EXPECT_EQ(u64(pmt::car(gpu.r.pdus[i]), "cpi"), 10 + i);
        const auto g = detections_of(gpu.r.pdus[i]), h = detections_of(cpu.r.pdus[i]);
        EXPECT_LE(std::max(g.size(), h.size()) - std::min(g.size(), h.size()), differ);
    }
    ASSERT_EQ(gpu.r.tags.size(), ncpi);
    // The data crosses PCIe once in (complex) and once out (mask and threshold).
    EXPECT_EQ(gpu.stats.h2d_bytes, cells * sizeof(gr_complex));
    EXPECT_EQ(gpu.stats.d2h_bytes, cells * (sizeof(std::uint8_t) + sizeof(float)));
}

TEST(CfarBlocksCuda, test_020_cuda_matches_cpu_through_device_buffers)
{
    GPURADAR_REQUIRE_CUDA();
    for (const char* v : { "ca", "go", "so", "os" }) {
        cfar2d_cfg c;
        c.nrange = 300;
        c.ndoppler = 64;
        c.channels = 2;
        c.variant = v;
        c.pfa = 1e-2;
        SCOPED_TRACE(v);
        compare_cuda_cpu(c, 3, 20);
    }
}

TEST(CfarBlocksCuda, test_021_pd_b_sized_cpis_and_local_max)
{
    GPURADAR_REQUIRE_CUDA();
    cfar2d_cfg c; // PD-B map: 16384 range bins x 256 Doppler, guard/train 1,5 x 1,1
    c.nrange = 16384;
    c.ndoppler = 256;
    c.gr = 1;
    c.tr = 5;
    c.gd = 1;
    c.td = 1;
    c.pfa = 1e-4;
    c.local_max = true;
    c.max_det = 65536;
    compare_cuda_cpu(c, 2, 21);
}

TEST(CfarBlocksCuda, test_022_cfar_1d_cuda_matches_cpu)
{
    GPURADAR_REQUIRE_CUDA();
    const unsigned nrange = 4000, ch = 2, group = 8;
    const auto x = exponential_map(std::size_t(5) * group * nrange * ch, 22);
    std::vector<std::uint8_t> masks[2];
    std::vector<float> thrs[2];
    const char* backends[] = { "cuda", "cpu" };
    for (int b = 0; b < 2; ++b) {
        auto blk = grr::cfar_1d::make(
            nrange, ch, 2, 16, 1e-2, "ca", 0, "clip", false, group, 65536, backends[b]);
        const auto res = run_block(blk, nrange * ch, x, {}, true);
        masks[b] = res.mask;
        thrs[b] = res.threshold;
        EXPECT_EQ(res.pdus.size(), 5u);
    }
    ASSERT_EQ(masks[0].size(), x.size());
    for (std::size_t i = 0; i < x.size(); ++i)
        if (masks[0][i] != masks[1][i])
            ASSERT_TRUE(may_differ(x[i], thrs[0][i], thrs[1][i])) << i;
}

// Not a benchmark (gpuradar_bench is): the wall time per CPI of a host-fed cfar_2d in a
// running flowgraph (host -> device copy of the map, the kernel, the mask back, the PDU),
// printed for the record; the test checks only that every CPI came through.
TEST(CfarBlocksCuda, test_023_host_fed_block_time_per_cpi_pd_b)
{
    GPURADAR_REQUIRE_CUDA();
    const unsigned nrange = 16384, ndoppler = 256, ncpi = 32;
    const auto map = exponential_map(std::size_t(nrange) * ndoppler, 23);
    for (const char* backend : { "cuda", "cpu" }) {
        const unsigned n = std::string(backend) == "cuda" ? ncpi : 2;
        auto tb = gr::make_top_block("cfar_rate");
        auto src = gr::blocks::vector_source_f::make(map, true, ndoppler);
        auto head =
            gr::blocks::head::make(ndoppler * sizeof(float), std::size_t(n) * nrange);
        auto blk = grr::cfar_2d::make(nrange,
                                      ndoppler,
                                      1,
                                      1,
                                      5,
                                      1,
                                      1,
                                      1e-6,
                                      "ca",
                                      0,
                                      "clip",
                                      "wrap",
                                      false,
                                      4096,
                                      backend);
        auto snk = gr::blocks::null_sink::make(ndoppler);
        auto dbg = gr::blocks::message_debug::make();
        tb->connect(src, 0, head, 0);
        tb->connect(head, 0, blk, 0);
        tb->connect(blk, 0, snk, 0);
        tb->msg_connect(blk, "detections", dbg, "store");
        const auto t0 = std::chrono::steady_clock::now();
        tb->run();
        const double ms = std::chrono::duration<double, std::milli>(
                              std::chrono::steady_clock::now() - t0)
                              .count();
        EXPECT_EQ(dbg->num_messages(), n);
        std::printf("{\"test\": \"cfar_2d block PD-B host-fed\", \"backend\": \"%s\", "
                    "\"cpis\": %u, \"ms_per_cpi\": %.3f}\n",
                    backend,
                    n,
                    ms / n);
    }
}

} // namespace
} // namespace gpuradar::test
