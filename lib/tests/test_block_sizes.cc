/* Every block with a size parameter: zero and huge sizes are refused by our checks, in
 * make() before GNU Radio builds the io_signatures or anything is allocated, with the
 * parameter (and for huge sizes the memory) in the message; multiply_const refuses a
 * non-finite gain; pulse_doppler_processor says which window is wrong. */
#include <gnuradio/gpuradar/beamformer.h>
#include <gnuradio/gpuradar/cfar_1d.h>
#include <gnuradio/gpuradar/cfar_2d.h>
#include <gnuradio/gpuradar/corner_turn.h>
#include <gnuradio/gpuradar/doppler_filter.h>
#include <gnuradio/gpuradar/envelope.h>
#include <gnuradio/gpuradar/multiply_const.h>
#include <gnuradio/gpuradar/pulse_compression.h>
#include <gnuradio/gpuradar/pulse_doppler_processor.h>
#include <gnuradio/gpuradar/pulse_framer.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpuradar::test {
namespace {

namespace grr = gr::gpuradar;
constexpr unsigned two_20 = 1u << 20;

void make_doppler_filter(unsigned npulses,
                         unsigned nrange,
                         unsigned nfft,
                         unsigned channels)
{
    grr::doppler_filter::make(
        npulses, nrange, nfft, channels, "none", "rectangular", 4, 35, 6, true, "cpu");
}

//! pulse_doppler_processor's parameters that these tests vary; the rest are defaults.
struct pdp_args {
    unsigned nrange = 256, npulses = 8, nfft = 8, channels = 1;
    std::string range_window = "hann";
    int range_nbar = 4;
    double range_sll_db = 35, range_beta = 6;
    std::string doppler_window = "hann";
    int doppler_nbar = 4;
    double doppler_sll_db = 35, doppler_beta = 6;
};

grr::pulse_doppler_processor::sptr make_pdp(const pdp_args& a)
{
    grr::pulse_doppler_processor::params cfg;
    cfg.nrange = a.nrange;
    cfg.npulses = a.npulses;
    cfg.nfft = a.nfft;
    cfg.channels = a.channels;
    cfg.range_window = a.range_window;
    cfg.range_nbar = a.range_nbar;
    cfg.range_sll_db = a.range_sll_db;
    cfg.range_beta = a.range_beta;
    cfg.doppler_window = a.doppler_window;
    cfg.doppler_nbar = a.doppler_nbar;
    cfg.doppler_sll_db = a.doppler_sll_db;
    cfg.doppler_beta = a.doppler_beta;
    cfg.backend = "cpu";
    return grr::pulse_doppler_processor::make(cfg);
}

//! make_pdp with `edit` applied to the defaults.
template <typename Edit>
std::function<void()> pdp_with(Edit edit)
{
    return [edit] {
        pdp_args a;
        edit(a);
        make_pdp(a);
    };
}

struct refusal {
    const char* block;
    std::vector<std::string> texts; //!< each must appear in the message
    std::function<void()> make;
};

//! The message of the std::invalid_argument r.make() throws ("" and a failure if none).
std::string message_of(const refusal& r)
{
    try {
        r.make();
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    ADD_FAILURE() << r.block << " " << r.texts.front() << ": no std::invalid_argument";
    return "";
}

long peak_rss_kib()
{
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

void expect_ours(const refusal& r)
{
    const std::string m = message_of(r);
    EXPECT_EQ(m.rfind(std::string("gpuradar::") + r.block + ": ", 0), 0u) << m;
    EXPECT_EQ(m.find("io_signature"), std::string::npos) << m;
    for (const auto& t : r.texts)
        EXPECT_NE(m.find(t), std::string::npos) << t << " not in: " << m;
}

TEST(BlockSizes, test_001_zero_sizes_get_our_message_not_io_signature)
{
    const std::vector<refusal> cases = {
        { "corner_turn",
          { "npulses must be >= 1" },
          [] { grr::corner_turn::make(0, 8, 1, "cpu"); } },
        { "corner_turn",
          { "nrange must be >= 1" },
          [] { grr::corner_turn::make(8, 0, 1, "cpu"); } },
        { "corner_turn",
          { "channels must be >= 1" },
          [] { grr::corner_turn::make(8, 8, 0, "cpu"); } },
        { "doppler_filter",
          { "npulses must be >= 2" },
          [] { make_doppler_filter(0, 8, 8, 1); } },
        { "doppler_filter",
          { "nrange must be >= 1" },
          [] { make_doppler_filter(8, 0, 8, 1); } },
        { "doppler_filter",
          { "nfft must be >= npulses" },
          [] { make_doppler_filter(8, 8, 0, 1); } },
        { "doppler_filter",
          { "channels must be >= 1" },
          [] { make_doppler_filter(8, 8, 8, 0); } },
        { "pulse_compression",
          { "nrange must be >= 1" },
          [] { grr::pulse_compression::make(0, 8, 1); } },
        { "pulse_compression",
          { "npulses must be >= 1" },
          [] { grr::pulse_compression::make(256, 0, 1); } },
        { "pulse_compression",
          { "channels must be >= 1" },
          [] { grr::pulse_compression::make(256, 8, 0); } },
        { "pulse_doppler_processor",
          { "nrange must be >= 1" },
          [] { grr::pulse_doppler_processor::make(0, 8, 8); } },
        { "pulse_doppler_processor",
          { "npulses must be >= 1" },
          [] { grr::pulse_doppler_processor::make(256, 0, 8); } },
        { "pulse_doppler_processor",
          { "nfft must be >= 1" },
          [] { grr::pulse_doppler_processor::make(256, 8, 0); } },
        { "pulse_doppler_processor",
          { "channels must be >= 1" },
          [] { grr::pulse_doppler_processor::make(256, 8, 8, 0); } },
        { "cfar_1d", { "nrange must be >= 1" }, [] { grr::cfar_1d::make(0); } },
        { "cfar_1d", { "channels must be >= 1" }, [] { grr::cfar_1d::make(64, 0); } },
        { "cfar_1d",
          { "items_per_cpi must be >= 1" },
          [] { grr::cfar_1d::make(64, 1, 1, 8, 1e-6, "ca", 0, "clip", false, 0); } },
        { "cfar_1d",
          { "max_detections must be >= 1" },
          [] { grr::cfar_1d::make(64, 1, 1, 8, 1e-6, "ca", 0, "clip", false, 1, 0); } },
        { "cfar_2d", { "nrange must be >= 1" }, [] { grr::cfar_2d::make(0, 16); } },
        { "cfar_2d", { "ndoppler must be >= 1" }, [] { grr::cfar_2d::make(64, 0); } },
        { "cfar_2d", { "channels must be >= 1" }, [] { grr::cfar_2d::make(64, 16, 0); } },
        { "pulse_framer",
          { "nrange must be >= 1" },
          [] { grr::pulse_framer::make(100, 0, 0, 8, 1e6, 1e9, "free", "", 0, "cpu"); } },
        { "pulse_framer",
          { "npulses must be >= 1" },
          [] {
              grr::pulse_framer::make(100, 0, 50, 0, 1e6, 1e9, "free", "", 0, "cpu");
          } },
        { "envelope", { "vlen must be >= 1" }, [] { grr::envelope::make(0); } },
        { "multiply_const",
          { "vlen must be >= 1" },
          [] { grr::multiply_const::make(1.0f, 0); } },
    };
    for (const auto& c : cases)
        expect_ours(c);
}

TEST(BlockSizes, test_002_huge_sizes_are_refused_before_allocation)
{
    const std::vector<refusal> cases = {
        { "corner_turn",
          { "npulses * nrange * channels", "8192 GiB" },
          [] { grr::corner_turn::make(two_20, two_20, 1, "cpu"); } },
        // The CPI fits (4 GiB) but one item (2^29 samples) is beyond GNU Radio's int.
        { "corner_turn",
          { "channels * nrange", "one stream item", "4.00 GiB" },
          [] { grr::corner_turn::make(1, 1u << 29, 1, "cpu"); } },
        { "doppler_filter",
          { "nfft * nrange * channels", "GiB" },
          [] { make_doppler_filter(64, two_20, two_20, 1); } },
        { "pulse_compression",
          { "npulses * nrange * channels", "GiB" },
          [] {
              grr::pulse_compression::make(two_20,
                                           two_20,
                                           1,
                                           "lfm",
                                           {},
                                           5e6,
                                           10e-6,
                                           10e6,
                                           true,
                                           "rectangular",
                                           4,
                                           35,
                                           6,
                                           false,
                                           "auto",
                                           "cpu");
          } },
        { "pulse_doppler_processor",
          { "nfft * nrange * channels", "GiB" },
          pdp_with([](pdp_args& a) {
              a.nrange = two_20;
              a.npulses = a.nfft = 1024;
              a.channels = 16;
          }) },
        { "cfar_1d",
          { "items_per_cpi * channels * nrange", "GiB" },
          [] {
              grr::cfar_1d::make(
                  1u << 16, 1, 1, 8, 1e-6, "ca", 0, "clip", false, 1u << 16, 4096, "cpu");
          } },
        { "cfar_2d",
          { "nrange * ndoppler * channels", "GiB" },
          [] {
              grr::cfar_2d::make(two_20,
                                 two_20,
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
                                 "cpu");
          } },
        { "pulse_framer",
          { "npulses * nrange", "GiB" },
          [] {
              grr::pulse_framer::make(
                  two_20, 0, two_20, two_20, 1e6, 1e9, "free", "", 0, "cpu");
          } },
        { "pulse_framer",
          { "npulses * ceil(pri)", "GiB" },
          [] {
              grr::pulse_framer::make(1e9, 0, 16, 1024, 1e6, 1e9, "free", "", 0, "cpu");
          } },
        { "envelope",
          { "vlen", "one stream item", "GiB" },
          [] { grr::envelope::make(1u << 31, "square_law", false, "cpu"); } },
        { "multiply_const",
          { "vlen", "one stream item", "GiB" },
          [] { grr::multiply_const::make(1.0f, 1u << 31, "cpu"); } },
    };
    for (const auto& c : cases) {
        const long rss_before = peak_rss_kib();
        const auto t0 = std::chrono::steady_clock::now();
        expect_ours(c);
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        EXPECT_LT(seconds, 0.25) << c.block << " " << c.texts.front();
        EXPECT_LT(peak_rss_kib() - rss_before, 64 * 1024)
            << c.block << " " << c.texts.front();
    }
}

TEST(BlockSizes, test_002b_beamformer_sizes)
{
    expect_ours(
        { "beamformer", { "nchannels must be >= 1" }, [] {
             grr::beamformer::make(
                 0, 64, { 0.0 }, 0, -45, 45, 0.5, {}, 0, "taylor", 4, 35, 6, "cpu");
         } });
    expect_ours({ "beamformer", { "nchannels * nsamples", "one stream item", "GiB" }, [] {
                     grr::beamformer::make(1u << 16,
                                           1u << 16,
                                           { 0.0 },
                                           0,
                                           -45,
                                           45,
                                           0.5,
                                           {},
                                           0,
                                           "taylor",
                                           4,
                                           35,
                                           6,
                                           "cpu");
                 } });
    expect_ours({ "beamformer", { "nbeams * nchannels", "the beam weights", "GiB" }, [] {
                     grr::beamformer::make(1u << 16,
                                           1,
                                           {},
                                           1u << 16,
                                           -60,
                                           60,
                                           0.5,
                                           {},
                                           0,
                                           "taylor",
                                           4,
                                           35,
                                           6,
                                           "cpu");
                 } });
}

TEST(BlockSizes, test_003_multiply_const_refuses_a_non_finite_gain)
{
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float inf = std::numeric_limits<float>::infinity();
    for (const gr_complex k : { gr_complex(nan, 0),
                                gr_complex(0, nan),
                                gr_complex(inf, 0),
                                gr_complex(0, -inf) })
        expect_ours({ "multiply_const", { "k must be finite" }, [k] {
                         grr::multiply_const::make(k, 4, "cpu");
                     } });
    auto b = grr::multiply_const::make(gr_complex(2, -1), 4, "cpu");
    expect_ours({ "multiply_const", { "k must be finite" }, [&] {
                     b->set_k(gr_complex(nan, 1));
                 } });
    expect_ours({ "multiply_const", { "k must be finite" }, [&] {
                     b->set_k(gr_complex(1, inf));
                 } });
    EXPECT_EQ(b->k(), gr_complex(2, -1)); // the old gain stays
    b->set_k(gr_complex(0.5f, 0.25f));
    EXPECT_EQ(b->k(), gr_complex(0.5f, 0.25f));
}

TEST(BlockSizes, test_004_pulse_doppler_processor_names_the_bad_window)
{
    const char* const block = "pulse_doppler_processor";
    const std::vector<refusal> cases = {
        { block, { "range_window must be one of" }, pdp_with([](pdp_args& a) {
              a.range_window = "gauss";
          }) },
        { block, { "doppler_window must be one of" }, pdp_with([](pdp_args& a) {
              a.doppler_window = "gauss";
          }) },
        { block, { "range_nbar" }, pdp_with([](pdp_args& a) {
              a.range_window = a.doppler_window = "taylor";
              a.range_nbar = 0;
          }) },
        { block, { "doppler_nbar" }, pdp_with([](pdp_args& a) {
              a.range_window = a.doppler_window = "taylor";
              a.doppler_nbar = 0;
          }) },
        { block, { "range_sll_db" }, pdp_with([](pdp_args& a) {
              a.range_window = a.doppler_window = "chebyshev";
              a.range_sll_db = -1;
          }) },
        { block, { "doppler_sll_db" }, pdp_with([](pdp_args& a) {
              a.range_window = a.doppler_window = "chebyshev";
              a.doppler_sll_db = -1;
          }) },
        { block, { "range_beta" }, pdp_with([](pdp_args& a) {
              a.range_window = a.doppler_window = "kaiser";
              a.range_beta = -1;
          }) },
        { block, { "doppler_beta" }, pdp_with([](pdp_args& a) {
              a.range_window = a.doppler_window = "kaiser";
              a.doppler_beta = -1;
          }) },
    };
    for (const auto& c : cases)
        expect_ours(c);
    // The setters name theirs too.
    auto b = make_pdp(pdp_args());
    expect_ours(
        { block, { "range_nbar" }, [&] { b->set_range_window("taylor", 0, 35, 6); } });
    expect_ours({ block, { "doppler_beta" }, [&] {
                     b->set_doppler_window("kaiser", 4, 35, -2);
                 } });
}

} // namespace
} // namespace gpuradar::test
