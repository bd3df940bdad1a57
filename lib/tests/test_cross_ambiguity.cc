/* cross_ambiguity block: the CUDA backend against the CPU one on random channels, whole
 * maps per CPI, one cpi tag per map, no map for a CPI whose channels' rx_rate tags
 * disagree (the NumPy reference and the passive scene are in
 * python/gpuradar/qa/qa_cross_ambiguity.py). */
#include "stream_tags.h"
#include "test_support.h"
#include <gnuradio/blocks/vector_sink.h>
#include <gnuradio/blocks/vector_source.h>
#include <gnuradio/gpuradar/cross_ambiguity.h>
#include <gnuradio/top_block.h>
#include <random>

namespace gpuradar::test {
namespace {

namespace grr = gr::gpuradar;

constexpr unsigned n = 2048, m = 40, k = 5;

struct result {
    std::vector<float> maps;
    std::size_t tags;
    std::uint64_t rate_mismatch_cpis;
};

result run(const std::vector<gr_complex>& ref,
           const std::vector<gr_complex>& surv,
           const char* method,
           const char* backend,
           const std::vector<gr::tag_t>& ref_tags = {},
           const std::vector<gr::tag_t>& surv_tags = {})
{
    auto tb = gr::make_top_block("cross_ambiguity");
    auto r = gr::blocks::vector_source_c::make(ref, false, 1, ref_tags);
    auto s = gr::blocks::vector_source_c::make(surv, false, 1, surv_tags);
    auto caf =
        grr::cross_ambiguity::make(1e6, 1e8, n, m, k, method, 0, "hann", false, backend);
    auto snk = gr::blocks::vector_sink_f::make(2 * k + 1);
    tb->connect(r, 0, caf, 0);
    tb->connect(s, 0, caf, 1);
    tb->connect(caf, 0, snk, 0);
    tb->run();
    return { snk->data(), snk->tags().size(), caf->rate_mismatch_cpis() };
}

TEST(CrossAmbiguityCpu, test_001_whole_maps_with_one_tag_each)
{
    // 2.5 CPIs: two maps, the half CPI left unconsumed
    const auto ref = random_complex(n * 5 / 2, 1), surv = random_complex(n * 5 / 2, 2);
    const auto cpu = run(ref, surv, "direct", "cpu");
    EXPECT_EQ(cpu.maps.size(), std::size_t(2) * m * (2 * k + 1));
    EXPECT_EQ(cpu.tags, 2u);
}

TEST(CrossAmbiguityCuda, test_010_matches_cpu)
{
    GPURADAR_REQUIRE_CUDA();
    const auto ref = random_complex(n * 3, 3), surv = random_complex(n * 3, 4);
    for (const char* method : { "direct", "batched" }) {
        const auto cpu = run(ref, surv, method, "cpu");
        const auto gpu = run(ref, surv, method, "cuda");
        ASSERT_EQ(gpu.maps.size(), cpu.maps.size()) << method;
        EXPECT_LT(rel_l2(gpu.maps, cpu.maps), 1e-4) << method;
        EXPECT_EQ(gpu.tags, cpu.tags);
    }
}

TEST(CrossAmbiguityCuda, test_011_rate_mismatch_gives_no_map_as_on_cpu)
{
    // the surveillance channel at another rate during CPI 1 of 3: the maps of CPIs 0
    // and 2 only, each the map of its CPI alone
    GPURADAR_REQUIRE_CUDA();
    std::random_device rd;
    const std::uint32_t seed = rd();
    SCOPED_TRACE("seed " + std::to_string(seed));
    const auto ref = random_complex(n * 3, seed), surv = random_complex(n * 3, seed + 1);
    const auto rt = rate_tags({ { 0, 1e6 } });
    const auto st = rate_tags({ { 0, 1e6 }, { n + 1, 2e6 }, { 2 * n, 1e6 } });
    const std::size_t map = std::size_t(m) * (2 * k + 1);
    for (const char* method : { "direct", "batched" }) {
        const auto gpu = run(ref, surv, method, "cuda", rt, st);
        const auto cpu_all = run(ref, surv, method, "cpu");
        EXPECT_EQ(gpu.rate_mismatch_cpis, 1u) << method;
        EXPECT_EQ(gpu.tags, 2u) << method;
        ASSERT_EQ(gpu.maps.size(), 2 * map) << method;
        ASSERT_EQ(cpu_all.maps.size(), 3 * map) << method;
        std::vector<float> want(cpu_all.maps.begin(), cpu_all.maps.begin() + long(map));
        want.insert(want.end(), cpu_all.maps.begin() + long(2 * map), cpu_all.maps.end());
        EXPECT_LT(rel_l2(gpu.maps, want), 1e-4) << method;
    }
}

TEST(CrossAmbiguityCpu, test_002_rate_mismatch_gives_no_map)
{
    const auto ref = random_complex(n * 3, 5), surv = random_complex(n * 3, 6);
    const std::size_t map = std::size_t(m) * (2 * k + 1);
    const auto all = run(ref, surv, "direct", "cpu");
    const auto out = run(ref,
                         surv,
                         "direct",
                         "cpu",
                         rate_tags({ { 0, 1e6 } }),
                         rate_tags({ { 0, 1e6 }, { n + 1, 2e6 }, { 2 * n, 1e6 } }));
    EXPECT_EQ(all.rate_mismatch_cpis, 0u);
    EXPECT_EQ(out.rate_mismatch_cpis, 1u);
    EXPECT_EQ(out.tags, 2u);
    ASSERT_EQ(out.maps.size(), 2 * map);
    // CPI 0's map, then CPI 2's, as without the tags (float rounding: the plans of
    // two blocks may differ)
    std::vector<float> want(all.maps.begin(), all.maps.begin() + long(map));
    want.insert(want.end(), all.maps.begin() + long(2 * map), all.maps.end());
    EXPECT_LT(rel_l2(out.maps, want), 1e-6);
    // a reference without rx_rate: nothing compared
    EXPECT_EQ(
        run(ref, surv, "direct", "cpu", {}, rate_tags({ { 0, 2e6 } })).rate_mismatch_cpis,
        0u);
}

} // namespace
} // namespace gpuradar::test
