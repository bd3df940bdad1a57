/*
 * pulse_compression, doppler_filter and pulse_doppler_processor blocks: outputs equal the
 * kernels', point targets land at their range and Doppler bins, cpi tags after every
 * block, waveform changes only between CPIs, partial CPIs dropped, bad input; on the GPU
 * (suites *Cuda*) the chain equals the CPU chain and crosses PCIe only at its ends.
 */
#include "common/sample_convert_codes.h"
#include "invalid_argument_check.h"
#include "stream_tags.h"
#include "test_support.h"
#include <gnuradio/blocks/vector_sink.h>
#include <gnuradio/blocks/vector_source.h>
#include <gnuradio/gpuradar/corner_turn.h>
#include <gnuradio/gpuradar/device_buffer.h>
#include <gnuradio/gpuradar/doppler_filter.h>
#include <gnuradio/gpuradar/envelope.h>
#include <gnuradio/gpuradar/pulse_compression.h>
#include <gnuradio/gpuradar/pulse_doppler_processor.h>
#include <gnuradio/top_block.h>
#include <gpuradar/kernels/pulse_doppler/doppler_filter.h>
#include <gpuradar/kernels/pulse_doppler/pulse_compression.h>
#include <pmt/pmt.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

namespace gpuradar::test {
namespace {

namespace grr = gr::gpuradar;
namespace k = ::gpuradar::kernels;

constexpr double fs = 10e6, bw = 5e6, pw = 4e-6; // a 40-sample LFM
constexpr double pi = 3.14159265358979323846;

std::vector<gr::tag_t> cpi_tags_of(const std::vector<gr::tag_t>& tags)
{
    std::vector<gr::tag_t> out;
    for (const auto& t : tags)
        if (pmt::eqv(t.key, pmt::mp("cpi")))
            out.push_back(t);
    std::sort(out.begin(), out.end(), gr::tag_t::offset_compare);
    return out;
}

std::uint64_t field(const gr::tag_t& t, const char* key)
{
    return pmt::to_uint64(pmt::dict_ref(t.value, pmt::mp(key), pmt::PMT_NIL));
}

// The kernels' CPU pulse compression of `pulses` pulses starting at pulse `first`.
std::vector<cfloat> compress_cpu(const std::vector<cfloat>& x,
                                 std::size_t first,
                                 unsigned np,
                                 unsigned nr,
                                 unsigned ch,
                                 const std::vector<cfloat>& waveform)
{
    auto pc =
        k::pulse_compression::make(k::backend::cpu, nr, std::size_t(np) * ch, waveform);
    std::vector<cfloat> y(std::size_t(np) * ch * nr);
    pc->run(x.data() + first * ch * nr, y.data());
    return y;
}

struct run_result {
    std::vector<gr_complex> data;
    std::vector<gr::tag_t> tags;
    std::uint64_t dropped;
};

run_result run_pulse_compression(const std::vector<cfloat>& x,
                                 const std::vector<gr::tag_t>& tags,
                                 unsigned np,
                                 unsigned nr,
                                 unsigned ch,
                                 const char* backend)
{
    auto tb = gr::make_top_block("pc");
    auto src = gr::blocks::vector_source_c::make(x, false, ch * nr, tags);
    auto pc = grr::pulse_compression::make(nr,
                                           np,
                                           ch,
                                           "lfm",
                                           {},
                                           bw,
                                           pw,
                                           fs,
                                           true,
                                           "rectangular",
                                           4,
                                           35,
                                           6,
                                           false,
                                           "auto",
                                           backend);
    auto snk = gr::blocks::vector_sink_c::make(ch * nr);
    tb->connect(src, 0, pc, 0);
    tb->connect(pc, 0, snk, 0);
    tb->run();
    return { snk->data(), snk->tags(), pc->dropped_cpis() };
}

TEST(PulseCompressionBlock, test_001_equals_kernel_per_cpi_with_tags)
{
    const unsigned np = 8, nr = 300, ch = 2, ncpi = 3;
    const auto x = random_complex(std::size_t(ncpi) * np * ch * nr, 11);
    const auto r =
        run_pulse_compression(x, { cpi_tag(0, 5, np, nr, fs) }, np, nr, ch, "cpu");
    ASSERT_EQ(r.data.size(), x.size()) << "no pulse lost";
    const auto s = k::lfm_chirp(bw, pw, fs, true);
    for (unsigned c = 0; c < ncpi; ++c) {
        const auto ref = compress_cpu(x, std::size_t(c) * np, np, nr, ch, s);
        std::vector<cfloat> got(r.data.begin() + std::size_t(c) * ref.size(),
                                r.data.begin() + std::size_t(c + 1) * ref.size());
        EXPECT_LE(rel_l2(got, ref), 1e-6) << "CPI " << c;
    }
    const auto tags = cpi_tags_of(r.tags);
    ASSERT_EQ(tags.size(), ncpi);
    for (unsigned c = 0; c < ncpi; ++c) {
        EXPECT_EQ(tags[c].offset, std::uint64_t(c) * np);
        EXPECT_EQ(field(tags[c], "index"), 5u + c) << "index counts on from the tag";
        EXPECT_EQ(field(tags[c], "nrange"), nr);
    }
    EXPECT_EQ(r.dropped, 0u);
}

TEST(PulseCompressionBlock, test_002_tag_inside_cpi_drops_partial_cpi)
{
    const unsigned np = 6, nr = 64, ch = 1;
    const std::size_t gap = 3; // the second CPI's tag comes 3 pulses into "CPI 1"
    const std::size_t n = 3 * np + gap;
    const auto x = random_complex(n * nr, 12);
    const auto r = run_pulse_compression(
        x,
        { cpi_tag(0, 0, np, nr, fs), cpi_tag(np + gap, 7, np, nr, fs) },
        np,
        nr,
        ch,
        "cpu");
    EXPECT_EQ(r.dropped, 1u);
    ASSERT_EQ(r.data.size(), 3u * np * nr);
    const auto s = k::lfm_chirp(bw, pw, fs, true);
    const std::size_t firsts[] = { 0, np + gap, 2 * np + gap };
    for (int c = 0; c < 3; ++c) {
        const auto ref = compress_cpu(x, firsts[c], np, nr, ch, s);
        std::vector<cfloat> got(r.data.begin() + c * ref.size(),
                                r.data.begin() + (c + 1) * ref.size());
        EXPECT_LE(rel_l2(got, ref), 1e-6) << "CPI " << c;
    }
    const auto tags = cpi_tags_of(r.tags);
    ASSERT_EQ(tags.size(), 3u);
    EXPECT_EQ(field(tags[1], "index"), 7u);
    EXPECT_EQ(tags[1].offset, np);
    EXPECT_EQ(field(tags[2], "index"), 8u);
}

TEST(PulseCompressionBlock, test_003_waveform_message_before_start_applies_to_all)
{
    const unsigned np = 4, nr = 128, ch = 1, ncpi = 3;
    const auto x = random_complex(std::size_t(ncpi) * np * nr, 13);
    auto tb = gr::make_top_block("pc");
    auto src = gr::blocks::vector_source_c::make(x, false, nr);
    auto pc = grr::pulse_compression::make(nr,
                                           np,
                                           ch,
                                           "lfm",
                                           {},
                                           bw,
                                           pw,
                                           fs,
                                           true,
                                           "rectangular",
                                           4,
                                           35,
                                           6,
                                           false,
                                           "auto",
                                           "cpu");
    auto snk = gr::blocks::vector_sink_c::make(nr);
    tb->connect(src, 0, pc, 0);
    tb->connect(pc, 0, snk, 0);
    pmt::pmt_t msg = pmt::make_dict();
    msg = pmt::dict_add(msg, pmt::mp("bandwidth"), pmt::from_double(2e6));
    msg = pmt::dict_add(msg, pmt::mp("pulse_width"), pmt::from_double(3e-6));
    msg = pmt::dict_add(msg, pmt::mp("up"), pmt::PMT_F);
    pc->_post(pmt::mp("waveform"), msg);
    pc->_post(pmt::mp("waveform"), pmt::from_long(3)); // malformed: logged, ignored
    tb->run();
    const auto s = k::lfm_chirp(2e6, 3e-6, fs, false);
    EXPECT_EQ(pc->waveform().size(), s.size());
    const auto y = snk->data();
    ASSERT_EQ(y.size(), x.size());
    for (unsigned c = 0; c < ncpi; ++c) {
        const auto ref = compress_cpu(x, std::size_t(c) * np, np, nr, ch, s);
        std::vector<cfloat> got(y.begin() + c * ref.size(),
                                y.begin() + (c + 1) * ref.size());
        EXPECT_LE(rel_l2(got, ref), 1e-6) << "CPI " << c;
    }
}

// Each CPI is compressed wholly with the old or wholly with the new waveform, old ones
// first, and no pulse is lost, whenever the change lands.
void check_waveform_change_between_cpis(const char* backend)
{
    const unsigned np = 16, nr = 512, ch = 1, ncpi = 400;
    const auto x = random_complex(std::size_t(ncpi) * np * nr, 14);
    auto tb = gr::make_top_block("pc");
    auto src = gr::blocks::vector_source_c::make(x, false, nr);
    auto pc = grr::pulse_compression::make(nr,
                                           np,
                                           ch,
                                           "lfm",
                                           {},
                                           bw,
                                           pw,
                                           fs,
                                           true,
                                           "rectangular",
                                           4,
                                           35,
                                           6,
                                           false,
                                           "auto",
                                           backend);
    auto snk = gr::blocks::vector_sink_c::make(nr);
    tb->connect(src, 0, pc, 0);
    tb->connect(pc, 0, snk, 0);
    const auto s_old = k::lfm_chirp(bw, pw, fs, true);
    const auto s_new = random_complex(33, 15);
    tb->start();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    pc->set_waveform(s_new);
    tb->wait();
    const auto y = snk->data();
    ASSERT_EQ(y.size(), x.size()) << "no pulse lost";
    bool seen_new = false;
    int changed_at = -1;
    for (unsigned c = 0; c < ncpi; ++c) {
        std::vector<cfloat> got(y.begin() + std::size_t(c) * np * nr,
                                y.begin() + std::size_t(c + 1) * np * nr);
        const bool is_old =
            rel_l2(got, compress_cpu(x, c * np, np, nr, ch, s_old)) < 1e-5;
        const bool is_new =
            rel_l2(got, compress_cpu(x, c * np, np, nr, ch, s_new)) < 1e-5;
        ASSERT_TRUE(is_old || is_new) << "CPI " << c << " mixes waveforms";
        ASSERT_FALSE(seen_new && is_old) << "CPI " << c << " went back to the old one";
        if (is_new && !seen_new)
            changed_at = static_cast<int>(c);
        seen_new = seen_new || is_new;
    }
    std::cout << "waveform changed at CPI " << changed_at << " of " << ncpi << "\n";
}

TEST(PulseCompressionBlock, test_004_waveform_change_only_between_cpis)
{
    check_waveform_change_between_cpis("cpu");
}

TEST(PulseCompressionBlock, test_005_bad_input_names_parameter)
{
    auto make = [](unsigned nr,
                   unsigned np,
                   const std::string& wf,
                   std::vector<gr_complex> custom,
                   double b,
                   double p,
                   double rate,
                   const std::string& window,
                   const std::string& method) {
        return grr::pulse_compression::make(nr,
                                            np,
                                            1,
                                            wf,
                                            custom,
                                            b,
                                            p,
                                            rate,
                                            true,
                                            window,
                                            4,
                                            35,
                                            6,
                                            false,
                                            method,
                                            "cpu");
    };
    EXPECT_NO_THROW(make(40, 1, "lfm", {}, fs, pw, fs, "hann", "fft"));
    expect_invalid([&] { make(39, 2, "lfm", {}, bw, pw, fs, "hann", "auto"); },
                   "waveform");
    expect_invalid([&] { make(64, 2, "custom", {}, bw, pw, fs, "hann", "auto"); },
                   "waveform");
    expect_invalid([&] { make(64, 2, "barker", {}, bw, pw, fs, "hann", "auto"); },
                   "waveform");
    expect_invalid([&] { make(64, 2, "lfm", {}, 0.0, pw, fs, "hann", "auto"); },
                   "bandwidth");
    expect_invalid([&] { make(64, 2, "lfm", {}, fs * 1.01, pw, fs, "hann", "auto"); },
                   "bandwidth");
    expect_invalid([&] { make(64, 2, "lfm", {}, bw, 0.0, fs, "hann", "auto"); },
                   "pulse_width");
    expect_invalid([&] { make(64, 2, "lfm", {}, bw, pw, fs, "hanning", "auto"); },
                   "window");
    expect_invalid([&] { make(64, 2, "lfm", {}, bw, pw, fs, "hann", "dft"); }, "method");
    expect_invalid([&] { make(0, 2, "lfm", {}, bw, pw, fs, "hann", "auto"); }, "nrange");
    expect_invalid([&] { make(64, 0, "lfm", {}, bw, pw, fs, "hann", "auto"); },
                   "npulses");
    auto pc = make(64, 2, "lfm", {}, bw, pw, fs, "hann", "auto");
    expect_invalid([&] { pc->set_waveform(std::vector<gr_complex>(65, 1.0f)); },
                   "waveform");
    EXPECT_EQ(pc->waveform().size(), 40u) << "a rejected waveform changes nothing";
}

TEST(DopplerFilterBlock, test_001_equals_kernel_and_tags_gain_ndoppler)
{
    const unsigned np = 12, nr = 20, nfft = 16, ch = 3, ncpi = 2;
    const auto x = random_complex(std::size_t(ncpi) * nr * ch * np, 21);
    auto tb = gr::make_top_block("df");
    auto src = gr::blocks::vector_source_c::make(
        x, false, ch * np, { cpi_tag(0, 2, np, nr, fs) });
    auto df = grr::doppler_filter::make(
        np, nr, nfft, ch, "three_pulse", "taylor", 4, 30, 6, true, "cpu");
    auto snk = gr::blocks::vector_sink_c::make(ch * nfft);
    tb->connect(src, 0, df, 0);
    tb->connect(df, 0, snk, 0);
    tb->run();
    const auto y = snk->data();
    ASSERT_EQ(y.size(), std::size_t(ncpi) * nr * ch * nfft);
    auto ref_kernel = k::doppler_filter::make(k::backend::cpu,
                                              np,
                                              std::size_t(nr) * ch,
                                              nfft,
                                              k::doppler_filter::mti_mode::three_pulse,
                                              k::window_spec::make("taylor", 4, 30, 6),
                                              true);
    for (unsigned c = 0; c < ncpi; ++c) {
        std::vector<cfloat> ref(std::size_t(nr) * ch * nfft);
        ref_kernel->run(x.data() + std::size_t(c) * nr * ch * np, ref.data());
        std::vector<cfloat> got(y.begin() + c * ref.size(),
                                y.begin() + (c + 1) * ref.size());
        EXPECT_LE(rel_l2(got, ref), 1e-6);
    }
    const auto tags = cpi_tags_of(snk->tags());
    ASSERT_EQ(tags.size(), ncpi);
    for (unsigned c = 0; c < ncpi; ++c) {
        EXPECT_EQ(tags[c].offset, std::uint64_t(c) * nr);
        EXPECT_EQ(field(tags[c], "index"), 2u + c);
        EXPECT_EQ(field(tags[c], "ndoppler"), nfft);
        EXPECT_EQ(field(tags[c], "npulses"), np);
        EXPECT_TRUE(
            pmt::to_bool(pmt::dict_ref(tags[c].value, pmt::mp("fftshift"), pmt::PMT_F)));
    }
    EXPECT_EQ(df->dropped_cpis(), 0u);
}

TEST(DopplerFilterBlock, test_002_bad_input_names_parameter)
{
    auto make = [](unsigned np,
                   unsigned nr,
                   unsigned nfft,
                   const std::string& mti,
                   const std::string& window) {
        return grr::doppler_filter::make(
            np, nr, nfft, 1, mti, window, 4, 35, 6, true, "cpu");
    };
    EXPECT_NO_THROW(make(2, 1, 2, "two_pulse", "rectangular"));
    expect_invalid([&] { make(1, 4, 8, "none", "hann"); }, "npulses");
    expect_invalid([&] { make(2, 4, 8, "three_pulse", "hann"); }, "npulses");
    expect_invalid([&] { make(8, 4, 7, "none", "hann"); }, "nfft");
    expect_invalid([&] { make(8, 4, 8, "four_pulse", "hann"); }, "mti");
    expect_invalid([&] { make(8, 4, 8, "none", "welch"); }, "window");
    expect_invalid([&] { make(8, 0, 8, "none", "hann"); }, "nrange");
}

// A CPI with one point target per channel: channel c's echo starts at range bin
// delay[c] and rotates by Doppler bin dbin[c] (fftshifted) from pulse to pulse.
struct scene {
    unsigned np = 32, nr = 256, nfft = 64, ch = 2;
    unsigned delay[2] = { 100, 37 };
    unsigned dbin[2] = { 40, 13 };
    std::vector<cfloat> cpi() const
    {
        const auto s = k::lfm_chirp(bw, pw, fs, true);
        auto x = random_complex(std::size_t(np) * ch * nr, 31, 0.05f);
        for (unsigned p = 0; p < np; ++p)
            for (unsigned c = 0; c < ch; ++c) {
                const double f =
                    (double(dbin[c]) - nfft / 2.0) / nfft; // cycles per pulse
                const std::complex<double> rot = std::polar(1.0, 2 * pi * f * p);
                for (std::size_t n = 0; n < s.size(); ++n)
                    x[(std::size_t(p) * ch + c) * nr + delay[c] + n] +=
                        cfloat(rot * std::complex<double>(s[n]));
            }
        return x;
    }
};

run_result run_processor(const std::vector<cfloat>& x,
                         const scene& sc,
                         unsigned ncpi,
                         const char* backend)
{
    std::vector<cfloat> xs;
    for (unsigned c = 0; c < ncpi; ++c)
        xs.insert(xs.end(), x.begin(), x.end());
    auto tb = gr::make_top_block("pd");
    auto src = gr::blocks::vector_source_c::make(
        xs, false, sc.ch * sc.nr, { cpi_tag(0, 0, sc.np, sc.nr, fs) });
    grr::pulse_doppler_processor::params cfg;
    cfg.nrange = sc.nr;
    cfg.npulses = sc.np;
    cfg.nfft = sc.nfft;
    cfg.channels = sc.ch;
    cfg.bandwidth = bw;
    cfg.pulse_width = pw;
    cfg.samp_rate = fs;
    cfg.range_window = "hamming";
    cfg.normalize = true;
    cfg.doppler_window = "hann";
    cfg.backend = backend;
    auto pd = grr::pulse_doppler_processor::make(cfg);
    auto snk = gr::blocks::vector_sink_f::make(sc.ch * sc.nfft);
    tb->connect(src, 0, pd, 0);
    tb->connect(pd, 0, snk, 0);
    tb->run();
    std::vector<gr_complex> unused;
    run_result r{ unused, snk->tags(), pd->dropped_cpis() };
    const auto y = snk->data();
    r.data.assign(y.begin(), y.end()); // power, stored in the real part
    return r;
}

TEST(PulseDopplerProcessor, test_001_point_targets_at_their_range_and_doppler_bins)
{
    const scene sc;
    const unsigned ncpi = 2;
    const auto r = run_processor(sc.cpi(), sc, ncpi, "cpu");
    const std::size_t cpi_cells = std::size_t(sc.nr) * sc.ch * sc.nfft;
    ASSERT_EQ(r.data.size(), ncpi * cpi_cells);
    for (unsigned cpi = 0; cpi < ncpi; ++cpi)
        for (unsigned c = 0; c < sc.ch; ++c) {
            float best = -1;
            unsigned best_r = 0, best_d = 0;
            for (unsigned rb = 0; rb < sc.nr; ++rb)
                for (unsigned d = 0; d < sc.nfft; ++d) {
                    const float v = r.data[cpi * cpi_cells +
                                           (std::size_t(rb) * sc.ch + c) * sc.nfft + d]
                                        .real();
                    if (v > best) {
                        best = v;
                        best_r = rb;
                        best_d = d;
                    }
                }
            EXPECT_EQ(best_r, sc.delay[c]) << "channel " << c;
            EXPECT_EQ(best_d, sc.dbin[c]) << "channel " << c;
        }
    const auto tags = cpi_tags_of(r.tags);
    ASSERT_EQ(tags.size(), ncpi);
    for (unsigned c = 0; c < ncpi; ++c) {
        EXPECT_EQ(tags[c].offset, std::uint64_t(c) * sc.nr);
        EXPECT_EQ(field(tags[c], "index"), c);
        EXPECT_EQ(field(tags[c], "ndoppler"), sc.nfft);
    }
    // Only CPI 0 came with a tag; its other fields are kept by every block.
    EXPECT_DOUBLE_EQ(
        pmt::to_double(pmt::dict_ref(tags[0].value, pmt::mp("fs"), pmt::PMT_NIL)), fs);
    EXPECT_EQ(r.dropped, 0u);
}

TEST(PulseDopplerProcessor, test_002_bad_input_names_the_blocks_parameter)
{
    auto make = [](unsigned np, unsigned nfft, const std::string& mti) {
        grr::pulse_doppler_processor::params cfg;
        cfg.nrange = 64;
        cfg.npulses = np;
        cfg.nfft = nfft;
        cfg.bandwidth = bw;
        cfg.pulse_width = pw;
        cfg.samp_rate = fs;
        cfg.range_window = "hamming";
        cfg.mti = mti;
        cfg.doppler_window = "hann";
        cfg.backend = "cpu";
        return grr::pulse_doppler_processor::make(cfg);
    };
    EXPECT_NO_THROW(make(4, 4, "none"));
    expect_invalid([&] { make(4, 3, "none"); }, "nfft");
    expect_invalid([&] { make(1, 4, "none"); }, "npulses");
    expect_invalid([&] { make(4, 4, "canceller"); }, "mti");
}

TEST(PulseDopplerProcessorCuda, test_010_chain_matches_cpu_and_stays_on_device)
{
    GPURADAR_REQUIRE_CUDA();
    const scene sc;
    const unsigned ncpi = 6;
    const auto x = sc.cpi();
    const auto cpu = run_processor(x, sc, ncpi, "cpu");
    grr::device_buffer::reset_transfer_stats();
    const auto gpu = run_processor(x, sc, ncpi, "cuda");
    const auto stats = grr::device_buffer::transfer_stats();
    ASSERT_EQ(gpu.data.size(), cpu.data.size());
    EXPECT_LE(rel_l2(gpu.data, cpu.data), 1e-5);
    EXPECT_EQ(stats.h2d_bytes, std::size_t(ncpi) * x.size() * sizeof(gr_complex))
        << "the input crosses PCIe once";
    EXPECT_EQ(stats.d2h_bytes, cpu.data.size() * sizeof(float)) << "the output once";
    EXPECT_EQ(cpi_tags_of(gpu.tags).size(), ncpi);
}

// The scene's CPI as an SDR gives it: parts scaled by 1/4 (headroom for the targets'
// peaks) and rounded to int16 or int8 codes at 1.0 = full scale; `exact` gets the codes'
// float values (what the block must see).
template <typename Item>
std::vector<Item> quantised(const std::vector<cfloat>& x,
                            double full_scale_code,
                            std::vector<cfloat>& exact)
{
    std::vector<Item> q(2 * x.size());
    exact.resize(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
        const long re = std::lround(0.25 * x[i].real() * full_scale_code);
        const long im = std::lround(0.25 * x[i].imag() * full_scale_code);
        EXPECT_LT(std::max(std::abs(re), std::abs(im)), long(full_scale_code));
        q[2 * i] = static_cast<Item>(re);
        q[2 * i + 1] = static_cast<Item>(im);
        exact[i] = cfloat(float(re / full_scale_code), float(im / full_scale_code));
    }
    return q;
}

// The processor on sc16 / sc8 items (short / byte vectors of 2 per sample, as a UHD
// source's sc16 / sc8 ports give).
template <typename Item>
run_result run_processor_integers(const std::vector<Item>& codes,
                                  const scene& sc,
                                  const char* input_type,
                                  const char* backend)
{
    auto tb = gr::make_top_block("pd_integers");
    auto src = gr::blocks::vector_source<Item>::make(
        codes, false, 2 * sc.ch * sc.nr, { cpi_tag(0, 0, sc.np, sc.nr, fs) });
    grr::pulse_doppler_processor::params cfg;
    cfg.nrange = sc.nr;
    cfg.npulses = sc.np;
    cfg.nfft = sc.nfft;
    cfg.channels = sc.ch;
    cfg.bandwidth = bw;
    cfg.pulse_width = pw;
    cfg.samp_rate = fs;
    cfg.range_window = "hamming";
    cfg.normalize = true;
    cfg.doppler_window = "hann";
    cfg.backend = backend;
    cfg.input_type = input_type;
    auto pd = grr::pulse_doppler_processor::make(cfg);
    auto snk = gr::blocks::vector_sink_f::make(sc.ch * sc.nfft);
    tb->connect(src, 0, pd, 0);
    tb->connect(pd, 0, snk, 0);
    tb->run();
    std::vector<gr_complex> unused;
    run_result r{ unused, snk->tags(), pd->dropped_cpis() };
    const auto y = snk->data();
    r.data.assign(y.begin(), y.end());
    return r;
}

TEST(PulseDopplerProcessor, test_003_sc16_and_sc8_items_equal_their_float_values)
{
    // Bit for bit the map of the fc32 stream of the codes' exact values (x / 32768, x /
    // 128): a wrong scale or item size cannot pass.
    const scene sc;
    std::vector<cfloat> exact16, exact8;
    const auto q16 = quantised<std::int16_t>(sc.cpi(), 32768.0, exact16);
    const auto q8 = quantised<std::uint8_t>(sc.cpi(), 128.0, exact8); // int8's bytes
    const auto r16 = run_processor_integers(q16, sc, "sc16", "cpu");
    const auto r8 = run_processor_integers(q8, sc, "sc8", "cpu");
    const auto f16 = run_processor(exact16, sc, 1, "cpu");
    const auto f8 = run_processor(exact8, sc, 1, "cpu");
    ASSERT_EQ(r16.data.size(), std::size_t(sc.nr) * sc.ch * sc.nfft);
    EXPECT_TRUE(r16.data == f16.data);
    EXPECT_TRUE(r8.data == f8.data);
    EXPECT_EQ(cpi_tags_of(r16.tags).size(), 1u);
    expect_invalid(
        [] {
            grr::pulse_doppler_processor::params cfg;
            cfg.nrange = 64;
            cfg.npulses = 4;
            cfg.nfft = 4;
            cfg.backend = "cpu";
            cfg.input_type = "complex_int16";
            grr::pulse_doppler_processor::make(cfg);
        },
        "input_type must be one of fc32, sc16, sc8");
}

TEST(PulseDopplerProcessorCuda, test_011_sc16_crosses_pcie_as_integers_and_matches_cpu)
{
    GPURADAR_REQUIRE_CUDA();
    const scene sc;
    std::vector<cfloat> exact;
    const auto q16 = quantised<std::int16_t>(sc.cpi(), 32768.0, exact);
    const auto cpu = run_processor_integers(q16, sc, "sc16", "cpu");
    grr::device_buffer::reset_transfer_stats();
    const auto gpu = run_processor_integers(q16, sc, "sc16", "cuda");
    const auto stats = grr::device_buffer::transfer_stats();
    ASSERT_EQ(gpu.data.size(), cpu.data.size());
    EXPECT_LE(rel_l2(gpu.data, cpu.data), 1e-5);
    EXPECT_EQ(stats.h2d_bytes, q16.size() * sizeof(std::int16_t))
        << "the int16 samples cross PCIe, not floats";
}

// pulse_compression on sc16 / sc8 items (short / byte vectors of 2 per sample).
template <typename Item>
run_result run_pulse_compression_integers(const std::vector<Item>& codes,
                                          const std::vector<gr::tag_t>& tags,
                                          unsigned np,
                                          unsigned nr,
                                          unsigned ch,
                                          const char* input_type,
                                          const char* backend)
{
    auto tb = gr::make_top_block("pc_integers");
    auto src = gr::blocks::vector_source<Item>::make(codes, false, 2 * ch * nr, tags);
    auto pc = grr::pulse_compression::make(nr,
                                           np,
                                           ch,
                                           "lfm",
                                           {},
                                           bw,
                                           pw,
                                           fs,
                                           true,
                                           "hamming",
                                           4,
                                           35,
                                           6,
                                           true,
                                           "auto",
                                           backend,
                                           0,
                                           input_type);
    auto snk = gr::blocks::vector_sink_c::make(ch * nr);
    tb->connect(src, 0, pc, 0);
    tb->connect(pc, 0, snk, 0);
    tb->run();
    return { snk->data(), snk->tags(), pc->dropped_cpis() };
}

TEST(PulseCompressionBlock, test_006_sc16_and_sc8_items_equal_their_float_values)
{
    // Random codes over the whole range (extremes planted), three CPIs of two channels:
    // bit for bit the kernel's compression of the codes' exact values (x / 32768, x /
    // 128), so a wrong scale, item size or channel stride cannot pass; tags pass through.
    const unsigned np = 4, nr = 200, ch = 2, ncpi = 3;
    const std::size_t n = std::size_t(ncpi) * np * ch * nr;
    const auto q16 = random_codes<std::int16_t>(n, 31);
    const auto q8s = random_codes<std::int8_t>(n, 32);
    const std::vector<std::uint8_t> q8(q8s.begin(), q8s.end()); // int8's bytes
    const std::vector<gr::tag_t> tags{ cpi_tag(0, 7, np, nr, fs) };
    const auto r16 = run_pulse_compression_integers(q16, tags, np, nr, ch, "sc16", "cpu");
    const auto r8 = run_pulse_compression_integers(q8, tags, np, nr, ch, "sc8", "cpu");
    auto pc = k::pulse_compression::make(k::backend::cpu,
                                         nr,
                                         std::size_t(np) * ch,
                                         k::lfm_chirp(bw, pw, fs, true),
                                         k::window_spec::make("hamming"),
                                         true);
    for (const auto* r : { &r16, &r8 }) {
        const auto exact = r == &r16 ? exact_values(q16) : exact_values(q8s);
        ASSERT_EQ(r->data.size(), exact.size()) << "no pulse lost";
        std::vector<cfloat> want(exact.size());
        for (unsigned c = 0; c < ncpi; ++c) {
            const std::size_t off = std::size_t(c) * np * ch * nr;
            pc->run(exact.data() + off, want.data() + off);
        }
        EXPECT_TRUE(r->data == want) << (r == &r16 ? "sc16" : "sc8");
        const auto t = cpi_tags_of(r->tags);
        ASSERT_EQ(t.size(), ncpi);
        EXPECT_EQ(field(t[2], "index"), 9u);
        EXPECT_EQ(r->dropped, 0u);
    }
    expect_invalid(
        [] {
            grr::pulse_compression::make(64,
                                         2,
                                         1,
                                         "lfm",
                                         {},
                                         bw,
                                         pw,
                                         fs,
                                         true,
                                         "hann",
                                         4,
                                         35,
                                         6,
                                         false,
                                         "auto",
                                         "cpu",
                                         0,
                                         "int16");
        },
        "input_type must be one of fc32, sc16, sc8");
}

TEST(PulseCompressionBlockCuda, test_011_sc16_crosses_pcie_as_integers_and_matches_cpu)
{
    GPURADAR_REQUIRE_CUDA();
    const unsigned np = 8, nr = 1000, ch = 1, ncpi = 2;
    const auto q16 = random_codes<std::int16_t>(std::size_t(ncpi) * np * ch * nr,
                                                std::random_device{}());
    const auto cpu = run_pulse_compression_integers(q16, {}, np, nr, ch, "sc16", "cpu");
    grr::device_buffer::reset_transfer_stats();
    const auto gpu = run_pulse_compression_integers(q16, {}, np, nr, ch, "sc16", "cuda");
    const auto stats = grr::device_buffer::transfer_stats();
    ASSERT_EQ(gpu.data.size(), cpu.data.size());
    EXPECT_LE(rel_l2(gpu.data, cpu.data), 1e-5);
    EXPECT_EQ(stats.h2d_bytes, q16.size() * sizeof(std::int16_t))
        << "the int16 samples cross PCIe, not floats";
}

TEST(PulseCompressionBlockCuda, test_010_waveform_change_only_between_cpis)
{
    GPURADAR_REQUIRE_CUDA();
    check_waveform_change_between_cpis("cuda");
}

} // namespace
} // namespace gpuradar::test
