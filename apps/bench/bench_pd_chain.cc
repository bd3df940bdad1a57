/*
 * The kernels-only pulse-Doppler chain per CPI, CONVENTIONS.md's PD workloads:
 * pulse compression (Taylor, normalised, automatic method: overlap_save on these
 * waveforms; the fft method's settings measured beside it) -> corner turn -> Doppler
 * filter (Hann, fftshift, nfft = npulses) -> square-law envelope -> CA-CFAR
 * (CONVENTIONS.md's window: guard/train Doppler 1,1, range 1,5; Pfa 1e-6).
 *
 *  pd_chain/PD     for each workload: the chain without and with cfar_2d::run, the
 *                  fused Doppler kernel on and off, pulse compression by the fft
 *                  method and by the default one; pulse compression and CFAR alone;
 *                  beside a device copy of the CPI measured in the same run.
 *                  chain_cfar_streamed_ms: the same per CPI over 20 CPIs queued back
 *                  to back (launch latency hidden, as in a stream of CPIs).
 *
 * Counts per CPI, N = channels * npulses * nrange samples, F = pulse-compression FFT
 * length, rows = channels * npulses (bytes at least; cuFFT may need more passes inside
 * one transform):
 *  pulse compression, overlap_save: read x 8N, write 8N (floor_ms counts this);
 *                  fft (separate kernels): 32N + 56 rows F.
 *  Doppler, fused: read 8N, write the power map 4N;  separate (corner turn 16N,
 *                  prepare + in-place FFT 32N, envelope 12N): 60N.
 *  CFAR: read 4N, write the mask N.
 * floor_ms = bytes of the fused design (overlap_save + fused Doppler: 28N) / copy
 * bandwidth (read + written) of this run.
 */
#include "bench_pd_common.h"
#include <gpuradar/kernels/detection/cfar_2d.h>
#include <gpuradar/kernels/pulse_doppler/framer_copy.h>
#include <gpuradar/kernels/pulse_doppler/front_end_correction.h>
#include <gpuradar/kernels/pulse_doppler/pulse_doppler_processor.h>
#include <algorithm>
#include <cstdlib>
#include <string>

namespace gpuradar::bench {

namespace {

using kernels::cfloat;

kernels::pulse_doppler_processor::params chain_params(const pd::workload& w)
{
    kernels::pulse_doppler_processor::params p;
    p.npulses = w.npulses;
    p.nrange = w.nrange;
    p.channels = w.channels;
    // A chirp filling the band at 2x oversampling: the usual radar case, never zeros.
    p.waveform = kernels::lfm_chirp(50e6, double(w.waveform) / 100e6, 100e6);
    p.range_window = kernels::window_spec::make("taylor");
    p.normalize = true;
    p.doppler_window = kernels::window_spec::make("hann");
    p.fftshift = true;
    return p;
}

/*!
 * Per CPI over streamed_cpis CPIs queued back to back (chain, then CFAR, each CPI), as
 * CPIs arrive in a stream: the host queues the next CPI's launches while the GPU runs
 * this one, so the launch latency after an idle GPU (in every single-CPI figure) is
 * hidden. Median over `reps` repeats.
 */
constexpr int streamed_cpis = 20;
template <class Chain, class Cfar>
double
streamed_ms_per_cpi(const kernels::cuda_stream& s, int reps, Chain&& chain, Cfar&& cfar)
{
    return time_ms(s,
                   reps,
                   [&] {
                       for (int i = 0; i < streamed_cpis; ++i) {
                           chain();
                           cfar();
                       }
                   }) /
           streamed_cpis;
}

} // namespace

// Only the default chain (the object pulse_doppler_processor runs) + CFAR, per workload:
// the quick A/B figure and a short program to profile. And the receiver corrections
// (issue 31: <= 1.1x), which ride on pulse_framer's data movement: its gather of the
// gates into the staging CPI (framer_copy::gather, which takes their sums) and its copy
// of the finished CPI out (framer_copy::copy_finite, which applies them). So the
// framer's gather + copy + chain + CFAR streamed with the corrections
// (corrections_ratio) is timed against the same without them, never the corrected
// framer against the chain alone; *_added_ms: the framer's gather + copy with a
// correction less without (framer_alone_ms). --workload PD-C limits it to one workload.
GPURADAR_BENCH("pd_chain/default")
{
    if (!pd::have_cuda("pd_chain/default"))
        return;
    const auto props = kernels::current_device_properties();
    kernels::cuda_stream s;
    const auto cuda = kernels::backend::cuda;
    const int reps = opt.quick ? 5 : opt.repeats;
    for (const auto& w : pd::workloads()) {
        if (!opt.workload.empty() && w.name != opt.workload)
            continue;
        const auto p = chain_params(w);
        const double n = double(w.samples());
        auto x = pd::random_device(w.samples(), s);
        kernels::device_memory power(w.samples() * sizeof(float)), mask(w.samples());
        const double copy = pd::copy_gb_per_s(w.bytes(), s, opt.repeats);
        auto pdc = kernels::pulse_doppler_processor::make(cuda, p, s.ref());
        auto cfar = kernels::cfar_2d::make(cuda, chain_cfar_params(w), s.ref());
        auto run_chain = [&] { pdc->run(x.as<cfloat>(), power.as<float>()); };
        auto run_cfar = [&] {
            cfar->run(power.as<float>(), mask.as<std::uint8_t>(), nullptr, 1);
        };
        const double chain_ms = time_ms(s, reps, run_chain);
        const double cfar_ms = time_ms(s, reps, run_cfar);
        const double with_cfar_ms = time_ms(s, reps, [&] {
            run_chain();
            run_cfar();
        });
        const double streamed_ms = streamed_ms_per_cpi(s, reps, run_chain, run_cfar);
        // Pipelined as the GNU Radio blocks run (each block on its own stream): CFAR of
        // CPI k on a second stream while the chain runs CPI k + 1, two power maps in
        // turn. Per CPI over streamed_cpis CPIs; the time ends when both streams are
        // done.
        kernels::cuda_stream s2;
        auto cfar2 = kernels::cfar_2d::make(cuda, chain_cfar_params(w), s2.ref());
        kernels::device_memory power2(w.samples() * sizeof(float));
        float* maps[2] = { power.as<float>(), power2.as<float>() };
        kernels::cuda_event map_ready[2], map_free[2], s2_done;
        const double pipelined_ms =
            time_ms(s,
                    reps,
                    [&] {
                        for (int i = 0; i < streamed_cpis; ++i) {
                            const int k = i % 2;
                            if (i >= 2)
                                map_free[k].make_stream_wait(s.ref());
                            pdc->run(x.as<cfloat>(), maps[k]);
                            map_ready[k].record(s.ref());
                            map_ready[k].make_stream_wait(s2.ref());
                            cfar2->run(maps[k], mask.as<std::uint8_t>(), nullptr, 1);
                            map_free[k].record(s2.ref());
                        }
                        s2_done.record(s2.ref());
                        s2_done.make_stream_wait(s.ref());
                    }) /
            streamed_cpis;
        // The receiver corrections ride on the framer's gather (the sums) and copy (the
        // corrections), so the honest comparison is the framer's gather + copy + chain +
        // CFAR with and without them: the same gather of every pulse of the raw CPI x
        // into the staging CPI in one batch (an integer PRI), the same copy, the same
        // buffers, the same waits for counts and estimates. `leakage_gate`: blank's
        // gate.
        kernels::device_memory framed(w.bytes()); // the copy's output, the chain's input
        auto make_copy = [&](bool corrections,
                             kernels::dc_removal dc,
                             kernels::leakage_suppression leak,
                             bool iq,
                             std::size_t gate) {
            std::unique_ptr<kernels::front_end_correction> corr;
            if (corrections) {
                kernels::front_end_correction_config fc;
                fc.npulses = w.channels * w.npulses;
                fc.nrange = w.nrange;
                fc.dc = dc;
                fc.iq = iq;
                fc.leakage = leak;
                fc.leakage_gate = gate;
                corr = kernels::front_end_correction::make(cuda, fc, s.ref());
            }
            return kernels::framer_copy::make(cuda,
                                              w.samples(),
                                              s.ref(),
                                              kernels::sample_format::fc32,
                                              std::move(corr));
        };
        // streamed_cpis CPIs copied out (and chained), then the counts and estimates
        // taken as pulse_framer takes them after each process() call.
        std::vector<kernels::framer_sample_counts> counts(streamed_cpis);
        std::vector<kernels::iq_estimate> est(streamed_cpis);
        std::vector<std::uint64_t> gates(w.channels * w.npulses);
        for (std::size_t g = 0; g < gates.size(); ++g)
            gates[g] = g * w.nrange;
        auto framed_ms = [&](kernels::framer_copy& copy, bool with_chain) {
            return time_ms(s,
                           reps,
                           [&] {
                               for (int i = 0; i < streamed_cpis; ++i) {
                                   copy.gather(copy.staging(), x.get(), gates, w.nrange);
                                   copy.copy_finite(framed.as<cfloat>(),
                                                    copy.staging(),
                                                    w.samples(),
                                                    std::size_t(i));
                                   if (with_chain) {
                                       pdc->run(framed.as<cfloat>(), power.as<float>());
                                       run_cfar();
                                   }
                               }
                               copy.take_counts(counts.data(), counts.size());
                               if (copy.corrections())
                                   copy.corrections()->take_estimates(est.data(),
                                                                      est.size());
                           }) /
                   streamed_cpis;
        };
        const auto no_leak = kernels::leakage_suppression::off;
        const auto off = kernels::dc_removal::off;
        auto plain_copy = make_copy(false, off, no_leak, false, 0);
        const double framer_alone_ms = framed_ms(*plain_copy, false);
        const double framed_chain_ms = framed_ms(*plain_copy, true);
        // Per-pulse DC, mean-pulse leakage and I/Q on; and the running DC mean instead.
        auto all_copy = make_copy(true,
                                  kernels::dc_removal::pulse,
                                  kernels::leakage_suppression::mean_pulse,
                                  true,
                                  0);
        auto running_copy = make_copy(true,
                                      kernels::dc_removal::running,
                                      kernels::leakage_suppression::mean_pulse,
                                      true,
                                      0);
        const double corrected_ms = framed_ms(*all_copy, true);
        const double corrected_running_ms = framed_ms(*running_copy, true);
        // The framer alone with each correction: less framer_alone_ms, what it adds.
        const double all_copy_ms = framed_ms(*all_copy, false);
        const double running_copy_ms = framed_ms(*running_copy, false);
        auto one_copy_ms =
            [&](kernels::dc_removal dc, kernels::leakage_suppression leak, bool iq) {
                return framed_ms(*make_copy(true, dc, leak, iq, 16), false);
            };
        const double dc_copy_ms = one_copy_ms(kernels::dc_removal::pulse, no_leak, false);
        const double mean_copy_ms =
            one_copy_ms(off, kernels::leakage_suppression::mean_pulse, false);
        const double iq_copy_ms = one_copy_ms(off, no_leak, true);
        const double blank_copy_ms =
            one_copy_ms(off, kernels::leakage_suppression::blank, false);
        json_line("pd_chain/default")
            .field("device", props.name)
            .field("workload", w.name)
            .field("implementation", pdc->implementation())
            .field("chain_ms", chain_ms)
            .field("cfar_ms", cfar_ms)
            .field("chain_cfar_ms", with_cfar_ms)
            .field("chain_cfar_streamed_ms", streamed_ms)
            .field("chain_cfar_pipelined_ms", pipelined_ms)
            .field("framed_chain_cfar_streamed_ms", framed_chain_ms)
            .field("corrected_framed_chain_cfar_streamed_ms", corrected_ms)
            .field("corrections_ratio", corrected_ms / framed_chain_ms)
            .field("corrected_running_dc_framed_chain_cfar_streamed_ms",
                   corrected_running_ms)
            .field("corrections_running_dc_ratio", corrected_running_ms / framed_chain_ms)
            .field("framer_alone_ms", framer_alone_ms)
            .field("corrections_added_ms", all_copy_ms - framer_alone_ms)
            .field("corrections_running_dc_added_ms", running_copy_ms - framer_alone_ms)
            .field("dc_pulse_added_ms", dc_copy_ms - framer_alone_ms)
            .field("mean_pulse_added_ms", mean_copy_ms - framer_alone_ms)
            .field("iq_added_ms", iq_copy_ms - framer_alone_ms)
            .field("blank_added_ms", blank_copy_ms - framer_alone_ms)
            .field("floor_cfar_ms", (16.0 * n + 12.0 * n + 5.0 * n) / (copy * 1e6))
            .field("target_ms", w.channels == 16 ? 0.5 : 0.1)
            .field("copy_gb_per_s", copy)
            .emit();
    }
}

GPURADAR_BENCH("pd_chain/PD")
{
    if (!pd::have_cuda("pd_chain/PD"))
        return;
    const auto props = kernels::current_device_properties();
    kernels::cuda_stream s;
    const auto cuda = kernels::backend::cuda;
    const int reps = opt.quick ? 5 : opt.repeats;
    for (const auto& w : pd::workloads()) {
        const auto p = chain_params(w);
        const double n = double(w.samples());
        auto x = pd::random_device(w.samples(), s);
        kernels::device_memory a(w.bytes()), power(w.samples() * sizeof(float)),
            mask(w.samples());
        const double copy = pd::copy_gb_per_s(w.bytes(), s, opt.repeats);
        const double gb_per_ms = copy * 1e6;

        // Pulse compression alone, the fft method (the default before overlap_save).
        auto pc_fft =
            kernels::pulse_compression::make(cuda,
                                             w.nrange,
                                             w.npulses * w.channels,
                                             p.waveform,
                                             p.range_window,
                                             p.normalize,
                                             kernels::pulse_compression::method::fft,
                                             s.ref());
        const double pc_fft_ms =
            time_ms(s, reps, [&] { pc_fft->run(x.as<cfloat>(), a.as<cfloat>()); });
        // Pulse compression alone (the object the GNU Radio block uses).
        auto pc = kernels::pulse_compression::make(cuda,
                                                   w.nrange,
                                                   w.npulses * w.channels,
                                                   p.waveform,
                                                   p.range_window,
                                                   p.normalize,
                                                   p.pc_method,
                                                   s.ref());
        const double pc_ms =
            time_ms(s, reps, [&] { pc->run(x.as<cfloat>(), a.as<cfloat>()); });
        const double rows_f = double(w.npulses * w.channels) * double(pc->fft_length());
        // overlap_save: read x, write y; the fft method adds at least one workspace pass.
        const bool os =
            pc->resolved_method() == kernels::pulse_compression::method::overlap_save;
        const double pc_bytes = 16.0 * n + (os ? 0.0 : 16.0 * rows_f);

        // CFAR alone on a real power map (the fused chain's output).
        {
            auto first = kernels::pulse_doppler_processor::make(cuda, p, s.ref());
            first->run(x.as<cfloat>(), power.as<float>());
            s.synchronize("bench");
        }
        auto cfar = kernels::cfar_2d::make(cuda, chain_cfar_params(w), s.ref());
        auto run_cfar = [&] {
            cfar->run(power.as<float>(), mask.as<std::uint8_t>(), nullptr, 1);
        };
        const double cfar_ms = time_ms(s, reps, run_cfar);

        json_line("pd_chain/PD")
            .field("device", props.name)
            .field("workload", w.name)
            .field("stage", "alone")
            .field("pc_implementation", pc->implementation())
            .field("fft_length", static_cast<long long>(pc->fft_length()))
            .field("pulse_compression_ms", pc_ms)
            .field("pulse_compression_fft_ms", pc_fft_ms)
            .field("pc_floor_ms", pc_bytes / gb_per_ms)
            .field("cfar_ms", cfar_ms)
            .field("cfar_floor_ms", 5.0 * n / gb_per_ms)
            .field("copy_gb_per_s", copy)
            .emit();

        // Fused Doppler on and off with pulse compression forced to the fft method, then
        // with the default method (automatic: overlap_save on the PD waveforms).
        using pcm = kernels::pulse_compression::method;
        std::vector<std::pair<kernels::pulse_doppler_processor::fusion, pcm>> settings;
        for (bool fused : { false, true }) {
            kernels::pulse_doppler_processor::fusion f;
            f.fused_doppler = fused;
            settings.push_back({ f, pcm::fft });
        }
        for (bool fused : { false, true }) {
            kernels::pulse_doppler_processor::fusion f;
            f.fused_doppler = fused;
            settings.push_back({ f, p.pc_method });
        }
        for (const auto& [f, m] : settings) {
            const bool fused = f.fused_doppler;
            auto pm = p;
            pm.pc_method = m;
            auto pdc = kernels::pulse_doppler_processor::make(cuda, pm, s.ref(), f);
            auto run_chain = [&] { pdc->run(x.as<cfloat>(), power.as<float>()); };
            const double chain_ms = time_ms(s, reps, run_chain);
            const double with_cfar_ms = time_ms(s, reps, [&] {
                run_chain();
                run_cfar();
            });
            const double streamed_ms = streamed_ms_per_cpi(s, reps, run_chain, run_cfar);
            const double floor_bytes = 16.0 * n + 12.0 * n;
            json_line("pd_chain/PD")
                .field("device", props.name)
                .field("workload", w.name)
                .field("stage", "chain")
                .field("fused_doppler", fused)
                .field("pc_method", kernels::pulse_compression::to_string(m))
                .field("implementation", pdc->implementation())
                .field("chain_ms", chain_ms)
                .field("chain_cfar_ms", with_cfar_ms)
                .field("chain_cfar_streamed_ms", streamed_ms)
                .field("doppler_part_ms", chain_ms - (m == pcm::fft ? pc_fft_ms : pc_ms))
                .field("floor_ms", floor_bytes / gb_per_ms)
                .field("floor_cfar_ms", (floor_bytes + 5.0 * n) / gb_per_ms)
                .field("target_ms", w.channels == 16 ? 0.5 : 0.1)
                .field("copy_gb_per_s", copy)
                .emit();
        }
    }
}

} // namespace gpuradar::bench
