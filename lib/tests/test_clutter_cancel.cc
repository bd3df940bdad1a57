/* clutter_cancel block: CPI framing, the reference passed unchanged, one
 * cancellation_db tag per CPI and channel, and the CUDA backend (device buffers, the
 * reference copied on the device) against the CPU one, ECA-B and NLMS (the simulator
 * scenes and the NumPy reference are in python/gpuradar/qa/qa_clutter_cancel.py). */
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
           const char* backend)
{
    auto tb = gr::make_top_block("clutter_cancel");
    const unsigned nsurv = unsigned(surv.size());
    auto cc = grr::clutter_cancel::make(
        n, taps, batches, method, nsurv, false, 0.0, 0.5, 64, backend);
    auto r = gr::blocks::vector_source_c::make(ref);
    auto rs = gr::blocks::vector_sink_c::make();
    tb->connect(r, 0, cc, 0);
    tb->connect(cc, 0, rs, 0);
    std::vector<gr::blocks::vector_sink_c::sptr> sinks;
    for (unsigned k = 0; k < nsurv; ++k) {
        auto s = gr::blocks::vector_source_c::make(surv[k]);
        sinks.push_back(gr::blocks::vector_sink_c::make());
        tb->connect(s, 0, cc, int(k) + 1);
        tb->connect(cc, int(k) + 1, sinks.back(), 0);
    }
    tb->run();
    result out{ rs->data(), {}, {}, cc->cancellation_db() };
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

} // namespace
} // namespace gpuradar::test
