/*
 * pd_blocks/PD: the pulse-Doppler chain as GNU Radio blocks on the GPU, per CPI:
 *   device_replay_source -> pulse_doppler_processor -> cfar_2d -> device_sink
 * The source copies a resident random CPI (device to device) into its output buffer and
 * the sink drops the mask on the device, so the figure compares with the kernels-only
 * chain (pd_chain/PD, run in the same invocation) without PCIe. The source's own cost is
 * measured alone (replay_only) and reported beside. Per-CPI time: the spacing of the
 * CPIs' arrivals at the sink after the first 4 (start-up and pipeline fill), the median
 * of three flowgraph runs of N CPIs. kernels_same_work_ms: the GPU work the flowgraph
 * does per CPI without GNU Radio, in one stream — the source's device-to-device copy,
 * then kernels::pulse_doppler_processor and cfar_2d (run + collect, as the block does):
 * the figure the blocks compare with.
 */
#include "bench_gr_blocks.h"
#include <gnuradio/gpuradar/cfar_2d.h>
#include <gnuradio/gpuradar/pulse_doppler_processor.h>
#include <gnuradio/top_block.h>
#include <gpuradar/kernels/detection/cfar_2d.h>
#include <gpuradar/kernels/pulse_doppler/pulse_doppler_processor.h>

namespace gpuradar::bench::pd {
namespace {

GPURADAR_BENCH("pd_blocks/PD")
{
    if (!have_cuda("pd_blocks/PD"))
        return;
    kernels::cuda_stream s;
    for (const auto& w : workloads())
        try {
            const auto nfft = static_cast<unsigned>(w.npulses);
            const std::size_t in_item = w.channels * w.nrange * sizeof(cfloat);
            const kernels::device_memory cpi = random_device(w.samples(), s);
            const std::uint64_t n =
                opt.quick ? 8 : (w.bytes() > (std::size_t(64) << 20) ? 100 : 400);
            const double pulse_width =
                double(w.waveform) / 10e6; // waveform samples at 10 MHz

            // stages: 0 replay -> sink, 1 replay -> processor -> sink, 2 ... -> cfar_2d
            // -> sink. Returns the sink's steady ms per CPI (arrival spacing after the
            // first CPIs).
            auto chain_ms_per_cpi = [&](std::uint64_t ncpi, int stages) {
                const bool replay_only = stages == 0;
                auto tb = gr::make_top_block("pd_blocks");
                auto src = gnuradio::make_block_sptr<device_replay_source>(
                    cpi, in_item, static_cast<int>(w.npulses), ncpi);
                std::shared_ptr<device_sink> sink;
                if (replay_only) {
                    sink = gnuradio::make_block_sptr<device_sink>(in_item, w.npulses);
                    tb->connect(src, 0, sink, 0);
                } else {
                    grr::pulse_doppler_processor::params cfg;
                    cfg.nrange = w.nrange;
                    cfg.npulses = w.npulses;
                    cfg.nfft = nfft;
                    cfg.channels = w.channels;
                    cfg.pulse_width = pulse_width;
                    cfg.range_window = "hamming";
                    cfg.doppler_window = "hann";
                    cfg.backend = "cuda";
                    auto pd = grr::pulse_doppler_processor::make(cfg);
                    // CONVENTIONS.md's CFAR window: Doppler guard/train 1/1, range 1/5.
                    auto cfar = grr::cfar_2d::make(w.nrange,
                                                   nfft,
                                                   w.channels,
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
                                                   "cuda");
                    tb->connect(src, 0, pd, 0);
                    if (stages == 1) {
                        sink = gnuradio::make_block_sptr<device_sink>(
                            w.channels * nfft * sizeof(float), w.nrange);
                        tb->connect(pd, 0, sink, 0);
                    } else {
                        sink = gnuradio::make_block_sptr<device_sink>(w.channels * nfft,
                                                                      w.nrange);
                        tb->connect(pd, 0, cfar, 0);
                        tb->connect(cfar, 0, sink, 0);
                    }
                }
                tb->run();
                constexpr std::size_t fill_cpis =
                    4; // start-up: plans, allocations, filling
                return sink->steady_ms_per_cpi(fill_cpis);
            };
            {
                // The same GPU work per CPI without GNU Radio (same parameters as below).
                kernels::pulse_doppler_processor::params p;
                p.npulses = w.npulses;
                p.nrange = w.nrange;
                p.channels = w.channels;
                p.waveform = kernels::lfm_chirp(5e6, pulse_width, 10e6);
                p.range_window = kernels::window_spec::make("hamming");
                p.normalize = false; // as the block below
                p.doppler_window = kernels::window_spec::make("hann");
                p.fftshift = true;
                auto pdc = kernels::pulse_doppler_processor::make(
                    kernels::backend::cuda, p, s.ref());
                auto cfar = kernels::cfar_2d::make(
                    kernels::backend::cuda, chain_cfar_params(w), s.ref());
                kernels::device_memory in(w.bytes()), power(w.samples() * sizeof(float)),
                    mask(w.samples());
                const int reps = opt.quick ? 5 : opt.repeats;
                const double ms = time_ms(s, reps, [&] {
                    kernels::copy_async(in.get(),
                                        cpi.get(),
                                        w.bytes(),
                                        kernels::copy_kind::device_to_device,
                                        s.ref(),
                                        "bench");
                    pdc->run(in.as<cfloat>(), power.as<float>());
                    cfar->run(power.as<float>(), mask.as<std::uint8_t>(), nullptr, 1);
                    cfar->collect();
                });
                json_line("pd_blocks/PD")
                    .field("workload", w.name)
                    .field("chain", "kernels, same work (copy + chain + CFAR + collect)")
                    .field("kernels_same_work_ms", ms)
                    .emit();
            }
            for (int stages : { 0, 1, 2 }) {
                // Median of three flowgraph runs (the wall-time spacing is noisy).
                std::vector<double> runs;
                for (int i = 0; i < 3; ++i)
                    runs.push_back(chain_ms_per_cpi(n, stages));
                const double ms = median(runs);
                const char* names[] = { "replay_only", "replay+pd", "replay+pd+cfar" };
                json_line("pd_blocks/PD")
                    .field("workload", w.name)
                    .field("chain", names[stages])
                    .field("cpis", double(n))
                    .field("ms_per_cpi", ms)
                    .field("cpi_bytes", double(w.bytes()))
                    .field("samples_per_s", double(w.samples()) / (ms * 1e-3))
                    .emit();
            }
        } catch (const std::exception& e) {
            // One workload's failure (e.g. device memory) does not hide the others'.
            json_line("pd_blocks/PD")
                .field("workload", w.name)
                .field("error", e.what())
                .emit();
        }
}

} // namespace
} // namespace gpuradar::bench::pd
