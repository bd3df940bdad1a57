/*
 * C++ flowgraph tests: envelope and multiply_const inside GNU Radio top blocks, on the
 * CPU backend and (suites named *Cuda*) on the GPU with device buffers between blocks.
 */
#include "invalid_argument_check.h"
#include "test_support.h"
#include <gnuradio/block_detail.h>
#include <gnuradio/blocks/copy.h>
#include <gnuradio/blocks/head.h>
#include <gnuradio/blocks/vector_sink.h>
#include <gnuradio/blocks/vector_source.h>
#include <gnuradio/buffer_reader.h>
#include <gnuradio/gpuradar/device_buffer.h>
#include <gnuradio/gpuradar/envelope.h>
#include <gnuradio/gpuradar/multiply_const.h>
#include <gnuradio/top_block.h>
#include <gpuradar/kernels/common/cuda_resources.h>
#include <cstdlib>
#include <cstring>

namespace gpuradar::test {
namespace {

namespace grr = gr::gpuradar;
using gr::blocks::vector_sink_c;
using gr::blocks::vector_sink_f;
using gr::blocks::vector_source_c;

TEST(FlowgraphCpu, test_001_envelope_square_law_vs_reference)
{
    const unsigned vlen = 37;
    const auto x = random_complex(vlen * 50, 1);
    auto tb = gr::make_top_block("envelope_cpu");
    auto src = vector_source_c::make(x, false, vlen);
    auto env = grr::envelope::make(vlen, "square_law", false, "cpu");
    auto snk = vector_sink_f::make(vlen);
    tb->connect(src, 0, env, 0);
    tb->connect(env, 0, snk, 0);
    tb->run();
    std::vector<double> ref(x.size());
    for (std::size_t i = 0; i < x.size(); ++i)
        ref[i] = std::norm(std::complex<double>(x[i]));
    EXPECT_EQ(env->backend(), "cpu");
    EXPECT_LT(rel_l2(snk->data(), ref), 1e-6);
}

TEST(FlowgraphCpu, test_002_multiply_const_chain_and_set_k)
{
    const unsigned vlen = 8;
    const auto x = random_complex(vlen * 20, 2);
    auto tb = gr::make_top_block("mc_cpu");
    auto src = vector_source_c::make(x, false, vlen);
    auto m1 = grr::multiply_const::make(gr_complex(2, 0), vlen, "cpu");
    auto m2 = grr::multiply_const::make(gr_complex(0, 1), vlen, "cpu");
    m2->set_k(gr_complex(0, -1));
    EXPECT_EQ(m2->k(), gr_complex(0, -1));
    auto snk = vector_sink_c::make(vlen);
    tb->connect(src, 0, m1, 0);
    tb->connect(m1, 0, m2, 0);
    tb->connect(m2, 0, snk, 0);
    tb->run();
    std::vector<std::complex<double>> ref(x.size());
    for (std::size_t i = 0; i < x.size(); ++i)
        ref[i] = std::complex<double>(x[i]) * std::complex<double>(0, -2);
    EXPECT_LT(rel_l2(snk->data(), ref), 1e-6);
}

TEST(FlowgraphBadInput, test_003_vlen_zero)
{
    expect_invalid([] { grr::envelope::make(0, "linear", false, "cpu"); }, "vlen");
    expect_invalid([] { grr::multiply_const::make(gr_complex(1, 0), 0, "cpu"); }, "vlen");
    EXPECT_NO_THROW(grr::envelope::make(1, "linear", false, "cpu")); // boundary passes
}

TEST(FlowgraphBadInput, test_004_unknown_backend_and_mode)
{
    expect_invalid([] { grr::envelope::make(4, "linear", false, "opencl"); }, "backend");
    expect_invalid([] { grr::multiply_const::make(gr_complex(1, 0), 4, "gpu"); },
                   "backend");
    expect_invalid([] { grr::envelope::make(4, "log", false, "cpu"); }, "mode");
}

TEST(FlowgraphBadInput, test_005_mismatched_vlen_between_blocks)
{
    auto tb = gr::make_top_block("mismatch");
    auto m = grr::multiply_const::make(gr_complex(1, 0), 16, "cpu");
    auto env = grr::envelope::make(32, "linear", false, "cpu");
    try {
        tb->connect(m, 0, env, 0);
        FAIL() << "connect accepted vlen 16 -> 32";
    } catch (const std::exception& e) {
        // GNU Radio names both ports and their item sizes (16 vs 32 complex samples).
        const std::string what = e.what();
        EXPECT_NE(what.find("itemsize mismatch"), std::string::npos) << what;
        EXPECT_NE(what.find("envelope"), std::string::npos) << what;
    }
}

TEST(FlowgraphBadInput, test_006_cuda_without_device_is_a_clear_error)
{
    if (kernels::cuda_available())
        GTEST_SKIP() << "a CUDA device is present";
    try {
        grr::envelope::make(4, "linear", false, "cuda");
        FAIL() << "no exception";
    } catch (const kernels::cuda_error& e) {
        EXPECT_NE(std::string(e.what()).find("envelope"), std::string::npos) << e.what();
    }
    // auto falls back to the CPU
    EXPECT_EQ(grr::envelope::make(4, "linear", false, "auto")->backend(), "cpu");
}

// host -> multiply_const -> multiply_const -> envelope -> host, all three on `backend`.
void run_chain(unsigned vlen, std::size_t nitems, std::uint32_t seed, const char* backend)
{
    const auto x = random_complex(vlen * nitems, seed);
    const gr_complex k1(0.5f, 0.25f), k2(-1.5f, 2.0f);
    auto tb = gr::make_top_block("gpu_chain");
    auto src = vector_source_c::make(x, false, vlen);
    auto m1 = grr::multiply_const::make(k1, vlen, backend);
    auto m2 = grr::multiply_const::make(k2, vlen, backend);
    auto env = grr::envelope::make(vlen, "linear", true, backend);
    auto snk = vector_sink_f::make(vlen, nitems);
    tb->connect(src, 0, m1, 0);
    tb->connect(m1, 0, m2, 0);
    tb->connect(m2, 0, env, 0);
    tb->connect(env, 0, snk, 0);
    grr::device_buffer::reset_transfer_stats();
    tb->run();
    const auto stats = grr::device_buffer::transfer_stats();

    std::vector<double> ref(x.size());
    const std::complex<double> k = std::complex<double>(k1) * std::complex<double>(k2);
    for (std::size_t i = 0; i < x.size(); ++i)
        ref[i] = 20.0 * std::log10(std::abs(std::complex<double>(x[i]) * k));
    const auto& y = snk->data();
    ASSERT_EQ(y.size(), x.size());
    std::size_t bad = 0, first_bad = y.size();
    for (std::size_t i = 0; i < y.size(); ++i)
        if (!(std::abs(y[i] - ref[i]) <= 1e-3 * (1.0 + std::abs(ref[i])))) {
            first_bad = std::min(first_bad, i);
            ++bad;
        }
    EXPECT_EQ(bad, 0u) << "first wrong sample " << first_bad << " of " << y.size()
                       << ": got " << (bad ? y[first_bad] : 0.0f) << " want "
                       << (bad ? ref[first_bad] : 0.0);
    EXPECT_LT(rel_l2(y, ref), 1e-5);
    if (std::string(backend) != "cuda")
        return;
    EXPECT_EQ(stats.h2d_bytes, x.size() * sizeof(gr_complex))
        << "input crosses PCIe once";
    EXPECT_EQ(stats.d2h_bytes, x.size() * sizeof(float)) << "output crosses PCIe once";
    // The edges between the GPU blocks are event-ordered (no host wait in their work();
    // the results above were checked with it); the host edges at the ends are not.
    ASSERT_TRUE(m1->detail() && env->detail());
    auto* mid = dynamic_cast<grr::device_buffer*>(m1->detail()->output(0).get());
    auto* in = dynamic_cast<grr::device_buffer*>(m1->detail()->input(0)->buffer().get());
    auto* out = dynamic_cast<grr::device_buffer*>(env->detail()->output(0).get());
    ASSERT_TRUE(mid && in && out);
    EXPECT_TRUE(mid->event_ordered()) << "device to device";
    EXPECT_FALSE(in->event_ordered()) << "host to device";
    EXPECT_FALSE(out->event_ordered()) << "device to host";
    EXPECT_TRUE(out->device_to_host());
    // The host -> device edge is deeper than the smallest device buffer by
    // host_to_device_depth (the host block writes while the other part is copied).
    const std::size_t min_items =
        (grr::device_buffer::min_bytes + in->get_sizeof_item() - 1) /
        in->get_sizeof_item();
    EXPECT_GE(std::size_t(in->bufsize()),
              grr::device_buffer::host_to_device_depth * min_items)
        << "host to device edge of " << in->bufsize() << " items";
}

TEST(FlowgraphCuda, test_010_chain_stays_on_device)
{
    GPURADAR_REQUIRE_CUDA();
    run_chain(64, 1000, 10, "cuda");
}

TEST(FlowgraphCuda, test_011_cpi_sized_items)
{
    GPURADAR_REQUIRE_CUDA();
    // One item = 1 Mi complex samples (8 MiB): a CPI-sized vector.
    run_chain(1u << 20, 12, 11, "cuda");
}

TEST(FlowgraphCuda, test_012_wraps_buffers_many_times)
{
    GPURADAR_REQUIRE_CUDA();
    // vlen 3 (24-byte items) and 3M items: many times the 16 MiB device buffers, with
    // item counts that do not divide the buffer, so the wrap-around callbacks run.
    run_chain(3, 3u << 20, 12, "cuda");
}

TEST(FlowgraphCuda, test_015_wrap_variants)
{
    GPURADAR_REQUIRE_CUDA();
    run_chain(4, 3u << 20, 15, "cuda");
    run_chain(1, 5u << 20, 16, "cuda");
    run_chain(3, 800000, 17, "cuda");
}

TEST(FlowgraphCpu, test_007_long_chain_reference) { run_chain(3, 1u << 20, 12, "cpu"); }

TEST(FlowgraphCuda, test_013_gpu_host_gpu_edges)
{
    GPURADAR_REQUIRE_CUDA();
    const unsigned vlen = 256;
    const std::size_t nitems = 500;
    const auto x = random_complex(vlen * nitems, 13);
    auto tb = gr::make_top_block("mixed");
    auto src = vector_source_c::make(x, false, vlen);
    auto m1 = grr::multiply_const::make(gr_complex(2, 0), vlen, "cuda");
    auto host = gr::blocks::copy::make(vlen * sizeof(gr_complex));
    auto m2 = grr::multiply_const::make(gr_complex(0, 3), vlen, "cuda");
    auto snk = vector_sink_c::make(vlen);
    tb->connect(src, 0, m1, 0);
    tb->connect(m1, 0, host, 0);
    tb->connect(host, 0, m2, 0);
    tb->connect(m2, 0, snk, 0);
    grr::device_buffer::reset_transfer_stats();
    tb->run();
    const auto stats = grr::device_buffer::transfer_stats();
    std::vector<std::complex<double>> ref(x.size());
    for (std::size_t i = 0; i < x.size(); ++i)
        ref[i] = std::complex<double>(x[i]) * std::complex<double>(0, 6);
    EXPECT_LT(rel_l2(snk->data(), ref), 1e-6);
    const std::uint64_t bytes = x.size() * sizeof(gr_complex);
    EXPECT_EQ(stats.h2d_bytes, 2 * bytes); // source -> m1 and copy -> m2
    EXPECT_EQ(stats.d2h_bytes, 2 * bytes); // m1 -> copy and m2 -> sink
}

/*!
 * Blocks on device-buffer edges (host -> GPU, GPU -> GPU, GPU -> host) are released with
 * their flowgraph, and their device memory with them: GNU Radio's single-mapped buffers
 * held their owner strongly, a cycle through the owner's block_detail that kept every
 * such block (a 100-cycle soak grew by ~0.8 GB of device memory a cycle).
 */
TEST(FlowgraphCuda, test_016_blocks_released_with_their_flowgraph)
{
    GPURADAR_REQUIRE_CUDA();
    const unsigned vlen = 1 << 16;
    const auto x = random_complex(vlen * 8, 16);
    std::vector<std::weak_ptr<gr::basic_block>> gone;
    const std::size_t before = gpuradar::kernels::device_memory_in_use();
    for (int cycle = 0; cycle < 3; ++cycle) {
        auto tb = gr::make_top_block("release");
        auto src = vector_source_c::make(x, false, vlen);
        auto m1 = grr::multiply_const::make(gr_complex(2, 0), vlen, "cuda");
        auto m2 = grr::multiply_const::make(gr_complex(0, 3), vlen, "cuda");
        auto snk = vector_sink_c::make(vlen);
        tb->connect(src, 0, m1, 0);
        tb->connect(m1, 0, m2, 0);
        tb->connect(m2, 0, snk, 0);
        tb->run();
        ASSERT_EQ(snk->data().size(), x.size());
        for (const gr::basic_block_sptr b :
             { gr::basic_block_sptr(m1), gr::basic_block_sptr(m2) })
            gone.push_back(b);
    }
    for (const auto& w : gone)
        EXPECT_TRUE(w.expired()) << "a GPU block outlived its flowgraph";
    // Three flowgraphs' device buffers (8 MiB and more each) are not still held.
    EXPECT_LT(gpuradar::kernels::device_memory_in_use(),
              before + (std::size_t(16) << 20));
}

TEST(FlowgraphCuda, test_014_set_k_while_running_never_mixes_gains)
{
    GPURADAR_REQUIRE_CUDA();
    const unsigned vlen = 1024;
    const std::size_t nitems = 4000;
    std::vector<gr_complex> ones(vlen * nitems, gr_complex(1, 0));
    auto tb = gr::make_top_block("set_k");
    auto src = vector_source_c::make(ones, false, vlen);
    auto m = grr::multiply_const::make(gr_complex(1, 0), vlen, "cuda");
    auto snk = vector_sink_c::make(vlen);
    tb->connect(src, 0, m, 0);
    tb->connect(m, 0, snk, 0);
    tb->start();
    m->set_k(gr_complex(2, 0));
    tb->wait();
    const auto& y = snk->data();
    ASSERT_EQ(y.size(), ones.size());
    // Every item is wholly 1 or wholly 2, and once 2 it stays 2.
    bool switched = false;
    for (std::size_t i = 0; i < nitems; ++i) {
        const float first = y[i * vlen].real();
        ASSERT_TRUE(first == 1.0f || first == 2.0f);
        if (switched)
            ASSERT_EQ(first, 2.0f);
        switched = first == 2.0f;
        for (unsigned j = 1; j < vlen; ++j)
            ASSERT_EQ(y[i * vlen + j].real(), first);
    }
}

} // namespace
} // namespace gpuradar::test
