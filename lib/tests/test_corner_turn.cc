/* corner_turn block: transposition, cpi tags, realignment after a gap, bad input. */
#include "stream_tags.h"
#include "test_support.h"
#include <gnuradio/blocks/vector_sink.h>
#include <gnuradio/blocks/vector_source.h>
#include <gnuradio/gpuradar/corner_turn.h>
#include <gnuradio/top_block.h>
#include <pmt/pmt.h>

namespace gpuradar::test {
namespace {

namespace grr = gr::gpuradar;

struct result {
    std::vector<gr_complex> data;
    std::vector<gr::tag_t> tags;
    std::uint64_t dropped;
};

result run(const std::vector<gr_complex>& x,
           const std::vector<gr::tag_t>& tags,
           unsigned np,
           unsigned nr,
           unsigned ch,
           const char* backend)
{
    auto tb = gr::make_top_block("corner_turn");
    auto src = gr::blocks::vector_source_c::make(x, false, ch * nr, tags);
    auto ct = grr::corner_turn::make(np, nr, ch, backend);
    auto snk = gr::blocks::vector_sink_c::make(ch * np);
    tb->connect(src, 0, ct, 0);
    tb->connect(ct, 0, snk, 0);
    tb->run();
    return { snk->data(), snk->tags(), ct->dropped_cpis() };
}

// out[r][c][p] = in[p][c][r] for one CPI starting at pulse item `first`.
void expect_transposed(const std::vector<gr_complex>& in,
                       std::size_t first,
                       const gr_complex* out,
                       unsigned np,
                       unsigned nr,
                       unsigned ch)
{
    for (unsigned p = 0; p < np; ++p)
        for (unsigned c = 0; c < ch; ++c)
            for (unsigned r = 0; r < nr; ++r)
                ASSERT_EQ(out[(std::size_t(r) * ch + c) * np + p],
                          in[((first + p) * ch + c) * nr + r])
                    << "p=" << p << " c=" << c << " r=" << r;
}

void check_gap_realignment(const char* backend)
{
    const unsigned np = 4, nr = 37, ch = 2; // 37: not a multiple of the 32-wide tile
    // Tags at pulse 0 (CPI 0), 2 (CPI 1: CPI 0 was cut short) and 6 (CPI 2).
    const std::size_t items = 10;
    const auto x = random_complex(items * ch * nr, 5);
    const std::vector<gr::tag_t> tags = { cpi_tag(0, 0, np, nr, 1e6),
                                          cpi_tag(2, 1, np, nr, 1e6),
                                          cpi_tag(6, 2, np, nr, 1e6) };
    const auto res = run(x, tags, np, nr, ch, backend);
    EXPECT_EQ(res.dropped, 1u);
    ASSERT_EQ(res.data.size(), 2u * nr * ch * np);
    expect_transposed(x, 2, res.data.data(), np, nr, ch);
    expect_transposed(x, 6, res.data.data() + std::size_t(nr) * ch * np, np, nr, ch);
    ASSERT_EQ(res.tags.size(), 2u);
    EXPECT_EQ(res.tags[0].offset, 0u);
    EXPECT_EQ(res.tags[1].offset, nr);
    EXPECT_EQ(pmt::to_uint64(
                  pmt::dict_ref(res.tags[0].value, pmt::intern("index"), pmt::PMT_NIL)),
              1u);
    EXPECT_EQ(pmt::to_uint64(
                  pmt::dict_ref(res.tags[1].value, pmt::intern("index"), pmt::PMT_NIL)),
              2u);
    // The rest of the dict travels with it.
    EXPECT_DOUBLE_EQ(
        pmt::to_double(pmt::dict_ref(res.tags[0].value, pmt::intern("fs"), pmt::PMT_NIL)),
        1e6);
}

TEST(CornerTurnCpu, test_001_untagged_stream_counts_cpis)
{
    const unsigned np = 5, nr = 3, ch = 1;
    const auto x = random_complex(3 * np * nr, 1);
    const auto res = run(x, {}, np, nr, ch, "cpu");
    ASSERT_EQ(res.data.size(), x.size());
    for (int c = 0; c < 3; ++c)
        expect_transposed(x, c * np, res.data.data() + c * np * nr, np, nr, ch);
    ASSERT_EQ(res.tags.size(), 3u);
    for (unsigned c = 0; c < 3; ++c) {
        EXPECT_EQ(res.tags[c].offset, c * nr);
        EXPECT_EQ(pmt::to_uint64(pmt::dict_ref(
                      res.tags[c].value, pmt::intern("index"), pmt::PMT_NIL)),
                  c);
    }
}

TEST(CornerTurnCpu, test_002_gap_discards_partial_cpi) { check_gap_realignment("cpu"); }

TEST(CornerTurnCpu, test_003_bad_parameters)
{
    for (auto f : { +[] { grr::corner_turn::make(0, 4, 1, "cpu"); },
                    +[] { grr::corner_turn::make(4, 0, 1, "cpu"); },
                    +[] { grr::corner_turn::make(4, 4, 0, "cpu"); } })
        EXPECT_THROW(f(), std::invalid_argument);
    try {
        grr::corner_turn::make(4, 0, 1, "cpu");
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("nrange"), std::string::npos);
    }
    EXPECT_NO_THROW(grr::corner_turn::make(1, 1, 1, "cpu"));
}

TEST(CornerTurnCpu, test_004_tag_with_other_shape_is_discarded_not_fatal)
{
    const unsigned np = 4, nr = 8;
    const auto x = random_complex(2 * np * nr, 3);
    const auto res = run(x,
                         { cpi_tag(0, 0, np + 1, nr, 1e6), cpi_tag(np, 1, np, nr, 1e6) },
                         np,
                         nr,
                         1,
                         "cpu");
    EXPECT_EQ(res.dropped, 1u);
    ASSERT_EQ(res.data.size(), std::size_t(np) * nr);
    expect_transposed(x, np, res.data.data(), np, nr, 1);
}

TEST(CornerTurnCuda, test_010_gap_discards_partial_cpi)
{
    GPURADAR_REQUIRE_CUDA();
    check_gap_realignment("cuda");
}

TEST(CornerTurnCuda, test_011_large_cpi_matches_cpu)
{
    GPURADAR_REQUIRE_CUDA();
    const unsigned np = 128, nr = 1000, ch = 3;
    const auto x = random_complex(std::size_t(2) * np * nr * ch, 4);
    const auto gpu = run(x, {}, np, nr, ch, "cuda");
    const auto cpu = run(x, {}, np, nr, ch, "cpu");
    ASSERT_EQ(gpu.data.size(), x.size());
    EXPECT_EQ(gpu.data, cpu.data);
}

} // namespace
} // namespace gpuradar::test
