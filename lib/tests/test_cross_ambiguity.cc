/* cross_ambiguity block: the CUDA backend against the CPU one on random channels, whole
 * maps per CPI, one cpi tag per map (the NumPy reference and the passive scene are in
 * python/gpuradar/qa/qa_cross_ambiguity.py). */
#include "test_support.h"
#include <gnuradio/blocks/vector_sink.h>
#include <gnuradio/blocks/vector_source.h>
#include <gnuradio/gpuradar/cross_ambiguity.h>
#include <gnuradio/top_block.h>

namespace gpuradar::test {
namespace {

namespace grr = gr::gpuradar;

constexpr unsigned n = 2048, m = 40, k = 5;

struct result {
    std::vector<float> maps;
    std::size_t tags;
};

result run(const std::vector<gr_complex>& ref,
           const std::vector<gr_complex>& surv,
           const char* method,
           const char* backend)
{
    auto tb = gr::make_top_block("cross_ambiguity");
    auto r = gr::blocks::vector_source_c::make(ref);
    auto s = gr::blocks::vector_source_c::make(surv);
    auto caf =
        grr::cross_ambiguity::make(1e6, 1e8, n, m, k, method, 0, "hann", false, backend);
    auto snk = gr::blocks::vector_sink_f::make(2 * k + 1);
    tb->connect(r, 0, caf, 0);
    tb->connect(s, 0, caf, 1);
    tb->connect(caf, 0, snk, 0);
    tb->run();
    return { snk->data(), snk->tags().size() };
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

} // namespace
} // namespace gpuradar::test
