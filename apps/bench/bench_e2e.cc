/*
 * e2e/PD: end to end through GNU Radio, fc32 samples on the host to detections on the
 * host (issue 6):
 *   host_replay_source -> pulse_framer -> pulse_doppler_processor -> cfar_2d
 *   (mask -> device sink / null sink; detections -> detections_timer)
 * Two phases per workload and backend:
 *  - unpaced: the source runs as fast as the flowgraph takes samples; sustained
 *    samples/s from the spacing of the detections PDUs after the first two CPIs (the
 *    pipeline's fill time, first_cpi_ms, is reported apart);
 *  - paced at half that rate (like a hardware source's clock): per-CPI latency from the
 *    CPI's last sample leaving the source to its detections PDU arriving, median and
 *    99th percentile; once with each CPI handed out whole at its last sample's time
 *    (its host -> device copy starts then: the worst case), once in 16 pieces per CPI
 *    (samples arrive over the CPI, as from an SDR, and their copies overlap it).
 * Beside them, where the time goes (same source, same data, unpaced, wall time over
 * N CPIs): source -> null sink, and source -> pulse_framer -> sink (device sink on CUDA:
 * the framer cuts the gates on the GPU from the stream its input buffer copied there),
 * for fc32 and for the same samples quantised to sc16 (field "input").
 * Then the chain once more from the sc16 samples (the framer's input_type sc16: the host
 * writes and PCIe carries half the bytes), unpaced, with its rate against the fc32
 * run's (vs_fc32) and both detection counts. Each chain line also gives its rate against
 * its own format's source alone (vs_source_alone: issue 31's "end to end >= 85 % of the
 * sc16 source alone"). cpu_ms_per_cpi: the process's CPU time over the unpaced run per
 * CPI (fill included), and cpu_vs_fc32 the fc32 run's over the sc16 run's: the cost
 * ratio, steadier than the wall rates on a machine other work shares. --input fc32 or
 * sc16 runs one input type only (sc16 alone: no vs_fc32, no paced latency runs).
 * Workloads: PD-B and PD-C (one channel: the framer cuts one stream), PRI = gate = nrange
 * samples (every sample of the stream is processed). Data: uniform noise plus LFM echoes
 * of three targets, never zeros.
 */
#include "bench_e2e_input.h"
#include "bench_pd_flowgraph.h"
#include <gnuradio/blocks/null_sink.h>
#include <gpuradar/kernels/common/cpu_threads.h>
#include <sys/resource.h>
#include <algorithm>
#include <cmath>
#include <cstdint>

namespace gpuradar::bench::pd {
namespace {

//! Paced pieces per CPI in the SDR-like latency run: 16 pieces of a 4 M-sample CPI are
//! 256 k samples (2 MiB), still far larger than an SDR's packets, so each piece is one
//! work call and one host -> device copy, not thousands.
constexpr std::uint64_t sdr_pieces_per_cpi = 16;

struct run_result {
    double seconds;
    //! user + system CPU seconds of the process over tb.run(): what the chain costs
    //! whatever else the machine runs (wall rates on a shared 2-core machine are not)
    double cpu_seconds = -1;
    double steady_ms_per_cpi = -1; //!< between the detections of CPI 2 and the last CPI
    double first_cpi_ms = -1;      //!< source start to the first detections (fill time)
    std::vector<double> latency_ms;
    double detections_per_cpi;
    std::uint64_t dropped;
};

//! user + system CPU seconds of this process so far.
double process_cpu_seconds()
{
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    const auto s = [](const timeval& t) { return double(t.tv_sec) + 1e-6 * t.tv_usec; };
    return s(u.ru_utime) + s(u.ru_stime);
}

run_result run_chain(const workload& w,
                     const replay_data& samples,
                     std::uint64_t ncpi,
                     double rate,
                     const std::string& backend,
                     const source_tuning& tuning,
                     std::uint64_t pieces_per_cpi = 1)
{
    const std::uint64_t cpi_samples = w.npulses * w.nrange;
    const auto nfft = static_cast<unsigned>(w.npulses);
    auto tb = gr::make_top_block("e2e");
    auto src = gnuradio::make_block_sptr<host_replay_source>(samples.data,
                                                             samples.nsamples,
                                                             samples.sample_bytes,
                                                             ncpi * cpi_samples,
                                                             cpi_samples,
                                                             tuning,
                                                             rate,
                                                             pieces_per_cpi);
    const pd_chain chain(w, backend, 0, samples.input_type);
    auto timer = gnuradio::make_block_sptr<detections_timer>();
    const auto cfar = chain.connect(tb, src);
    if (backend == "cuda")
        tb->connect(cfar, 0, gnuradio::make_block_sptr<device_sink>(nfft), 0);
    else
        tb->connect(cfar, 0, gr::blocks::null_sink::make(nfft), 0);
    tb->msg_connect(cfar, "detections", timer, "in");
    run_result r;
    const auto t0 = clock_type::now();
    const double cpu0 = process_cpu_seconds();
    r.seconds = seconds([&] { tb->run(); });
    r.cpu_seconds = process_cpu_seconds() - cpu0;
    const auto& ends = src->cpi_end();
    std::size_t dets = 0;
    const auto arrivals = timer->arrivals();
    for (const auto& a : arrivals) {
        dets += a.detections;
        if (a.cpi < ends.size() && a.cpi >= 2) // the first two warm up
            r.latency_ms.push_back(
                std::chrono::duration<double, std::milli>(a.when - ends[a.cpi]).count());
    }
    if (!arrivals.empty())
        r.first_cpi_ms =
            std::chrono::duration<double, std::milli>(arrivals.front().when - t0).count();
    if (arrivals.size() > 3)
        r.steady_ms_per_cpi = std::chrono::duration<double, std::milli>(
                                  arrivals.back().when - arrivals[2].when)
                                  .count() /
                              double(arrivals.back().cpi - arrivals[2].cpi);
    r.detections_per_cpi = arrivals.empty() ? 0.0 : double(dets) / arrivals.size();
    r.dropped = chain.dropped_cpis();
    return r;
}

double percentile(std::vector<double> v, double q)
{
    if (v.empty())
        return -1;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, static_cast<std::size_t>(q * (v.size() - 1) + 0.5))];
}

GPURADAR_BENCH("e2e/PD")
{
    std::vector<std::string> backends = { "cpu" };
    if (kernels::cuda_available())
        backends.insert(backends.begin(), "cuda");
    // --backend cuda|cpu: only that backend (A/B runs of one side).
    if (!opt.backend.empty())
        backends.erase(
            std::remove_if(backends.begin(),
                           backends.end(),
                           [&](const std::string& b) { return b != opt.backend; }),
            backends.end());
    for (const auto& backend : backends)
        for (const auto& w : workloads()) {
            if (w.channels != 1 || (!opt.workload.empty() && w.name != opt.workload))
                continue;
            const bool gpu = backend == "cuda";
            // CPU: a few CPIs (each takes a fraction of a second on 2 cores).
            const std::uint64_t n = opt.quick ? 5 : gpu ? 300 : 12;
            const auto samples = scene_samples(w, 2);
            const std::uint64_t cpi_samples = w.npulses * w.nrange;
            const auto sc16 = quantise_sc16(samples);
            // The host stages alone, per input format; the source alone's rate is what
            // each chain's vs_source_alone divides by.
            double source_alone_sps[2] = { 0, 0 }; // fc32, sc16
            for (const replay_data& d : { replay_data(samples), replay_data(sc16) }) {
                if (!e2e_input_selected(opt, d.input_type))
                    continue;
                for (bool with_framer : { false, true }) {
                    auto tb = gr::make_top_block("e2e_host");
                    connect_host_stage(tb,
                                       w,
                                       d.data,
                                       d.nsamples,
                                       d.sample_bytes,
                                       d.input_type,
                                       n,
                                       opt.source,
                                       backend,
                                       with_framer);
                    const double t = seconds([&] { tb->run(); });
                    const double stage_sps = double(n * cpi_samples) / t;
                    if (!with_framer)
                        source_alone_sps[d.input_type == "sc16"] = stage_sps;
                    json_line("e2e/PD")
                        .field("workload", w.name)
                        .field("backend", backend)
                        .field("input", d.input_type)
                        .field("host_stage", with_framer ? "source+framer" : "source")
                        .field("samples_per_s", stage_sps)
                        .emit();
                }
            }
            run_result r{};
            double sps = 0;
            if (e2e_input_selected(opt, "fc32")) {
                r = run_chain(w, samples, n, 0.0, backend, opt.source);
                sps = double(cpi_samples) / (r.steady_ms_per_cpi * 1e-3);
                const auto paced =
                    run_chain(w, samples, n, 0.5 * sps, backend, opt.source);
                // The same rate with the samples arriving in pieces, as from an SDR.
                const auto paced_pieces = run_chain(
                    w, samples, n, 0.5 * sps, backend, opt.source, sdr_pieces_per_cpi);
                json_line("e2e/PD")
                    .field("workload", w.name)
                    .field("backend", backend)
                    .field("input", "fc32")
                    .field("cpis", double(n))
                    .field("cpu_threads", static_cast<long long>(kernels::cpu_threads()))
                    .field("samples_per_s", sps)
                    .field("vs_source_alone", sps / source_alone_sps[0])
                    .field("ms_per_cpi", r.steady_ms_per_cpi)
                    .field("cpu_ms_per_cpi", 1e3 * r.cpu_seconds / double(n))
                    .field("first_cpi_ms", r.first_cpi_ms)
                    .field("paced_at_samples_per_s", 0.5 * sps)
                    .field("latency_median_ms", percentile(paced.latency_ms, 0.5))
                    .field("latency_p99_ms", percentile(paced.latency_ms, 0.99))
                    .field("latency_pieces_median_ms",
                           percentile(paced_pieces.latency_ms, 0.5))
                    .field("latency_pieces_p99_ms",
                           percentile(paced_pieces.latency_ms, 0.99))
                    .field("detections_per_cpi", r.detections_per_cpi)
                    .field("dropped_cpis",
                           double(r.dropped + paced.dropped + paced_pieces.dropped))
                    .emit();
            }
            if (!e2e_input_selected(opt, "sc16"))
                continue;
            // The same chain from sc16 host samples (issue 31): the framer's input is
            // the integers, half the bytes to write on the host and to copy to the GPU.
            const auto q = run_chain(w, sc16, n, 0.0, backend, opt.source);
            const double q_sps = double(cpi_samples) / (q.steady_ms_per_cpi * 1e-3);
            json_line("e2e/PD")
                .field("workload", w.name)
                .field("backend", backend)
                .field("input", "sc16")
                .field("cpis", double(n))
                .field("cpu_threads", static_cast<long long>(kernels::cpu_threads()))
                .field("samples_per_s", q_sps)
                .field("vs_fc32", sps > 0 ? q_sps / sps : -1.0)
                .field("vs_source_alone", q_sps / source_alone_sps[1])
                .field("ms_per_cpi", q.steady_ms_per_cpi)
                .field("cpu_ms_per_cpi", 1e3 * q.cpu_seconds / double(n))
                .field("cpu_vs_fc32", sps > 0 ? r.cpu_seconds / q.cpu_seconds : -1.0)
                .field("first_cpi_ms", q.first_cpi_ms)
                .field("detections_per_cpi", q.detections_per_cpi)
                .field("fc32_detections_per_cpi", sps > 0 ? r.detections_per_cpi : -1.0)
                .field("dropped_cpis", double(q.dropped))
                .emit();
        }
}

} // namespace
} // namespace gpuradar::bench::pd
