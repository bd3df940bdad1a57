/* clutter_cancel block: CPI framing, the reference passed unchanged, one
 * cancellation_db tag per CPI and channel, and the CUDA backend (device buffers, the
 * reference copied on the device) against the CPU one, ECA-B and NLMS, and CPIs whose
 * channels' rx_rate tags disagree refused on both backends (the simulator scenes and
 * the NumPy reference are in python/gpuradar/qa/qa_clutter_cancel.py). */
#include "stream_tags.h"
#include "test_support.h"
#include <gnuradio/blocks/vector_sink.h>
#include <gnuradio/blocks/vector_source.h>
#include <gnuradio/gpuradar/clutter_cancel.h>
#include <gnuradio/top_block.h>
#include <random>

namespace gpuradar::test {
namespace {

namespace grr = gr::gpuradar;

constexpr unsigned n = 4096, taps = 12, batches = 4;

struct result {
    std::vector<gr_complex> ref;
    std::vector<std::vector<gr_complex>> clean;
    std::vector<std::size_t> tags; //!< cancellation_db tags per cleaned channel
    std::vector<double> last_db;
    std::uint64_t rate_mismatch_cpis = 0;
};

//! surveillance k = noise + 30 (k + 1) r[n] + 5 r[n - 3]: direct path and clutter.
std::vector<gr_complex>
surveillance(const std::vector<gr_complex>& ref, unsigned k, std::uint32_t seed)
{
    auto s = random_complex(ref.size(), seed);
    for (std::size_t i = 0; i < ref.size(); ++i)
        s[i] += 30.0f * float(k + 1) * ref[i] + (i >= 3 ? 5.0f * ref[i - 3] : 0.0f);
    return s;
}

result run(const std::vector<gr_complex>& ref,
           const std::vector<std::vector<gr_complex>>& surv,
           const char* method,
           const char* backend,
           const std::vector<std::vector<gr::tag_t>>& tags = {})
{
    // tags[0] on the reference, tags[k + 1] on surveillance channel k
    const auto tags_of = [&](std::size_t i) {
        return i < tags.size() ? tags[i] : std::vector<gr::tag_t>();
    };
    auto tb = gr::make_top_block("clutter_cancel");
    const unsigned nsurv = unsigned(surv.size());
    auto cc = grr::clutter_cancel::make(
        n, taps, batches, method, nsurv, false, 0.0, 0.5, 64, backend);
    auto r = gr::blocks::vector_source_c::make(ref, false, 1, tags_of(0));
    auto rs = gr::blocks::vector_sink_c::make();
    tb->connect(r, 0, cc, 0);
    tb->connect(cc, 0, rs, 0);
    std::vector<gr::blocks::vector_sink_c::sptr> sinks;
    for (unsigned k = 0; k < nsurv; ++k) {
        auto s = gr::blocks::vector_source_c::make(surv[k], false, 1, tags_of(k + 1));
        sinks.push_back(gr::blocks::vector_sink_c::make());
        tb->connect(s, 0, cc, int(k) + 1);
        tb->connect(cc, int(k) + 1, sinks.back(), 0);
    }
    tb->run();
    result out{ rs->data(), {}, {}, cc->cancellation_db(), cc->rate_mismatch_cpis() };
    for (auto& s : sinks) {
        out.clean.push_back(s->data());
        std::size_t t = 0;
        for (const auto& tag : s->tags())
            t += pmt::symbol_to_string(tag.key) == "cancellation_db" ? 1 : 0;
        out.tags.push_back(t);
    }
    return out;
}

TEST(ClutterCancelBlockCpu, test_001_whole_cpis_reference_passed_tags_per_cpi)
{
    // 2.5 CPIs: two cancelled, the half CPI left unconsumed
    const auto ref = random_complex(n * 5 / 2, 1);
    const auto out =
        run(ref, { surveillance(ref, 0, 2), surveillance(ref, 1, 3) }, "eca_b", "cpu");
    ASSERT_EQ(out.ref.size(), std::size_t(2) * n);
    EXPECT_EQ(out.ref, std::vector<gr_complex>(ref.begin(), ref.begin() + 2 * n));
    ASSERT_EQ(out.clean.size(), 2u);
    for (std::size_t k = 0; k < 2; ++k) {
        EXPECT_EQ(out.clean[k].size(), std::size_t(2) * n);
        EXPECT_EQ(out.tags[k], 2u);
        EXPECT_GT(out.last_db[k], 25.0); // 30-36 dB of interference over unit noise
    }
}

TEST(ClutterCancelBlockCuda, test_010_matches_cpu)
{
    GPURADAR_REQUIRE_CUDA();
    std::random_device rd; // fresh data each run; the seed is printed on failure
    const std::uint32_t seed = rd();
    SCOPED_TRACE("seed " + std::to_string(seed));
    const auto ref = random_complex(n * 3, seed);
    const std::vector<std::vector<gr_complex>> surv{ surveillance(ref, 0, seed + 1),
                                                     surveillance(ref, 1, seed + 2) };
    for (const char* method : { "eca_b", "nlms" }) {
        const auto cpu = run(ref, surv, method, "cpu");
        const auto gpu = run(ref, surv, method, "cuda");
        EXPECT_EQ(gpu.ref, cpu.ref) << method; // bit for bit, through the device
        ASSERT_EQ(gpu.clean.size(), cpu.clean.size());
        for (std::size_t k = 0; k < cpu.clean.size(); ++k) {
            ASSERT_EQ(gpu.clean[k].size(), cpu.clean[k].size()) << method;
            EXPECT_LT(rel_l2(gpu.clean[k], cpu.clean[k]), 1e-3) << method << " " << k;
            EXPECT_EQ(gpu.tags[k], cpu.tags[k]);
            EXPECT_NEAR(gpu.last_db[k], cpu.last_db[k], 0.05) << method;
        }
    }
}

TEST(ClutterCancelBlockCuda, test_011_rate_mismatch_refused_as_on_cpu)
{
    // surveillance channel 2 at another rate during CPI 1 only: CPI 1 of both channels
    // zero (the device outputs written too), the other CPIs as the CPU backend's
    GPURADAR_REQUIRE_CUDA();
    std::random_device rd;
    const std::uint32_t seed = rd();
    SCOPED_TRACE("seed " + std::to_string(seed));
    const auto ref = random_complex(n * 3, seed);
    const std::vector<std::vector<gr_complex>> surv{ surveillance(ref, 0, seed + 1),
                                                     surveillance(ref, 1, seed + 2) };
    const std::vector<std::vector<gr::tag_t>> tags{
        rate_tags({ { 0, 2.4e6 } }),
        rate_tags({ { 0, 2.4e6 } }),
        rate_tags({ { 0, 2.4e6 }, { n + 5, 2.0e6 }, { 2 * n, 2.4e6 } })
    };
    for (const char* method : { "eca_b", "nlms" }) {
        const auto cpu = run(ref, surv, method, "cpu", tags);
        const auto gpu = run(ref, surv, method, "cuda", tags);
        EXPECT_EQ(cpu.rate_mismatch_cpis, 1u) << method;
        EXPECT_EQ(gpu.rate_mismatch_cpis, 1u) << method;
        EXPECT_EQ(gpu.ref, ref) << method;
        for (std::size_t k = 0; k < 2; ++k) {
            ASSERT_EQ(gpu.clean[k].size(), std::size_t(3) * n) << method;
            ASSERT_EQ(cpu.clean[k].size(), std::size_t(3) * n) << method;
            for (std::size_t i = n; i < 2 * n; ++i)
                ASSERT_EQ(gpu.clean[k][i], gr_complex(0.0f, 0.0f)) << method << " " << i;
            EXPECT_LT(rel_l2(gpu.clean[k], cpu.clean[k]), 1e-3) << method << " " << k;
            EXPECT_EQ(gpu.tags[k], 2u) << method; // cancellation_db: CPIs 0 and 2
        }
    }
}

TEST(ClutterCancelBlockCpu, test_002_rate_mismatch_zeroes_the_cpi)
{
    const auto ref = random_complex(n * 3, 21);
    const std::vector<std::vector<gr_complex>> surv{ surveillance(ref, 0, 22),
                                                     surveillance(ref, 1, 23) };
    const auto out =
        run(ref,
            surv,
            "eca_b",
            "cpu",
            { rate_tags({ { 0, 2.4e6 } }),
              rate_tags({ { 0, 2.4e6 } }),
              rate_tags({ { 0, 2.4e6 }, { n + 5, 2.0e6 }, { 2 * n, 2.4e6 } }) });
    EXPECT_EQ(out.rate_mismatch_cpis, 1u);
    for (std::size_t k = 0; k < 2; ++k) {
        ASSERT_EQ(out.clean[k].size(), std::size_t(3) * n);
        EXPECT_EQ(out.tags[k], 2u);
        double p0 = 0, p1 = 0, p2 = 0;
        for (std::size_t i = 0; i < n; ++i) {
            p0 += std::norm(out.clean[k][i]);
            p1 += std::norm(out.clean[k][n + i]);
            p2 += std::norm(out.clean[k][2 * n + i]);
        }
        EXPECT_EQ(p1, 0.0) << k;
        // CPIs 0 and 2 cancelled (30-36 dB of interference) down to the noise (power
        // 2: unit parts), less the fit's share, plus CPI 2's restart: 3 samples of the
        // unfitted clutter echo
        EXPECT_NEAR(p0 / n, 2.0, 0.2) << k;
        EXPECT_NEAR(p2 / n, 2.0, 0.2) << k;
    }
}

} // namespace
} // namespace gpuradar::test
