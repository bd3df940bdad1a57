/*
 * Foundation benchmarks:
 *  envelope/kernel   square-law envelope GB/s beside a device-to-device copy (same run)
 *  chain/gpu_k{1,2,4}  host -> K GPU multiply_const -> host through GNU Radio, items/s,
 *                    against the same blocks with host buffers between them (a host copy
 *                    block between each pair forces D2H + H2D at every edge).
 * Count: envelope reads 8 B and writes 4 B per sample; the copy reads and writes
 * 8 B per sample. Both are bandwidth-bound, so envelope should reach the copy's GB/s.
 */
#include "bench_registry.h"
#include <gnuradio/blocks/copy.h>
#include <gnuradio/blocks/head.h>
#include <gnuradio/blocks/null_sink.h>
#include <gnuradio/blocks/vector_source.h>
#include <gnuradio/gpuradar/device_buffer.h>
#include <gnuradio/gpuradar/multiply_const.h>
#include <gnuradio/top_block.h>
#include <gpuradar/kernels/pulse_doppler/envelope.h>
#include <chrono>
#include <random>

namespace gpuradar::bench {
namespace {

using kernels::cfloat;

std::vector<cfloat> noise(std::size_t n, unsigned seed)
{
    std::mt19937 rng(seed);
    std::normal_distribution<float> g;
    std::vector<cfloat> v(n);
    for (auto& x : v)
        x = cfloat(g(rng), g(rng));
    return v;
}

} // namespace

GPURADAR_BENCH("envelope/kernel")
{
    if (!kernels::cuda_available()) {
        json_line("envelope/kernel")
            .field("skipped", kernels::cuda_unavailable_reason())
            .emit();
        return;
    }
    const auto props = kernels::current_device_properties();
    const std::size_t n =
        opt.quick ? (std::size_t(1) << 22) : (std::size_t(1) << 27); // 1 GiB in
    kernels::cuda_stream s;
    const auto host = noise(std::size_t(1) << 20, 1);
    kernels::device_memory in(n * sizeof(cfloat)), out(n * sizeof(float)),
        copy_dst(n * sizeof(cfloat));
    for (std::size_t off = 0; off < n; off += host.size())
        kernels::copy_async(in.as<cfloat>() + off,
                            host.data(),
                            host.size() * sizeof(cfloat),
                            kernels::copy_kind::host_to_device,
                            s.ref(),
                            "bench");
    const double copy_ms = time_ms(s, opt.repeats, [&] {
        kernels::copy_async(copy_dst.get(),
                            in.get(),
                            in.size(),
                            kernels::copy_kind::device_to_device,
                            s.ref(),
                            "bench");
    });
    const double copy_gbs = 2.0 * in.size() / (copy_ms * 1e6);
    for (auto mode :
         { kernels::envelope::mode::square_law, kernels::envelope::mode::linear }) {
        for (bool db : { false, true }) {
            auto env = kernels::envelope::make(kernels::backend::cuda, mode, db, s.ref());
            const double ms = time_ms(
                s, opt.repeats, [&] { env->run(in.as<cfloat>(), out.as<float>(), n); });
            const double gbs = double(n) * (sizeof(cfloat) + sizeof(float)) / (ms * 1e6);
            json_line("envelope/kernel")
                .field("device", props.name)
                .field("mode", kernels::envelope::to_string(mode))
                .field("db", db)
                .field("samples", static_cast<long long>(n))
                .field("ms", ms)
                .field("gb_per_s", gbs)
                .field("copy_gb_per_s", copy_gbs)
                .field("fraction_of_copy", gbs / copy_gbs)
                .emit();
        }
    }
}

GPURADAR_BENCH("chain/multiply_const")
{
    const bool cuda = kernels::cuda_available();
    const char* backend = cuda ? "cuda" : "cpu";
    // CPI-sized items: one item = one 2 MiB pulse-burst slice (256 Ki samples).
    const unsigned vlen = 1u << 18;
    const std::size_t nitems = opt.quick ? 64 : 2048; // 4 GiB through the chain
    const auto pattern = noise(std::size_t(vlen) * 16, 2);
    for (bool host_between : { false, true }) {
        if (host_between && !cuda)
            continue; // on the CPU backend every buffer is a host buffer already
        for (int k : { 1, 2, 4 }) {
            auto tb = gr::make_top_block("chain");
            auto src = gr::blocks::vector_source_c::make(pattern, true, vlen);
            auto head = gr::blocks::head::make(vlen * sizeof(cfloat), nitems);
            auto sink = gr::blocks::null_sink::make(vlen * sizeof(cfloat));
            tb->connect(src, 0, head, 0);
            gr::basic_block_sptr prev = head;
            std::vector<gr::basic_block_sptr> keep;
            for (int i = 0; i < k; ++i) {
                auto m =
                    gr::gpuradar::multiply_const::make(cfloat(1.0f, 0.0f), vlen, backend);
                if (host_between && i > 0) {
                    auto c = gr::blocks::copy::make(vlen * sizeof(cfloat));
                    tb->connect(prev, 0, c, 0);
                    prev = c;
                    keep.push_back(c);
                }
                tb->connect(prev, 0, m, 0);
                prev = m;
                keep.push_back(m);
            }
            tb->connect(prev, 0, sink, 0);
            gr::gpuradar::device_buffer::reset_transfer_stats();
            const auto t0 = std::chrono::steady_clock::now();
            tb->run();
            const double s =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
                    .count();
            const auto st = gr::gpuradar::device_buffer::transfer_stats();
            json_line("chain/multiply_const")
                .field("backend", backend)
                .field("blocks", static_cast<long long>(k))
                .field("buffers_between", cuda && !host_between ? "device" : "host")
                .field("item_bytes", static_cast<long long>(vlen * sizeof(cfloat)))
                .field("items", static_cast<long long>(nitems))
                .field("seconds", s)
                .field("msamples_per_s", double(nitems) * vlen / s / 1e6)
                .field("h2d_bytes", static_cast<long long>(st.h2d_bytes))
                .field("d2h_bytes", static_cast<long long>(st.d2h_bytes))
                .emit();
        }
    }
}

} // namespace gpuradar::bench
