/*
 * passive/PR-FM: one passive radar CPI of the PR-FM workload (issue 33): 2.4 Msps, a
 * CPI of 0.5 s (1.2 M samples), ECA-B with 50 taps in 10 batches (clutter_cancel), then
 * the cross-ambiguity map of 400 range bins x +-256 Doppler bins (cross_ambiguity, its
 * automatic method: batched, 1200 batches of 1000 samples), then CFAR on the map
 * (cfar_2d, CA, pfa 1e-6, local maxima, detections read back): ms_per_cpi is the three,
 * the target 2 ms on the GPU. Channels in device memory (CUDA) or on the host
 * (CPU twin). --quick: a tenth of the CPI, 100 bins, +-64 bins. nlms_ms: the same CPI
 * cancelled by clutter_cancel's block NLMS instead (64 samples per update, or the
 * nearest divisor of the CPI below), for streaming use; not part of ms_per_cpi.
 *
 * Floors printed beside the times: ECA-B without Doppler taps forms its normal
 * equations from K lag sums of the reference against itself (K N complex
 * multiply-adds, once for all channels) and against each surveillance channel (K N
 * each), and subtracts each channel's fit (K N): 8 flops each, eca_gflop; it moves
 * about (2 + 5 nsurv) N complex floats (eca_floor_gb below), against the device's
 * copy rate of the same run (copy_gb_per_s, CUDA). The figures are counts, for the
 * performance page. nlms_ms is one channel's.
 * passive/cuda also runs PR-DVB (pr_dvb below; times are for all its surveillance
 * channels, cancelled in one run_channels() as the clutter_cancel block does: the
 * reference's normal matrices and factors formed once for the four); --workload PR-FM
 * or PR-DVB runs one. passive/cpu runs PR-FM only.
 */
#include "bench_pd_common.h"
#include <gpuradar/kernels/detection/cfar_2d.h>
#include <gpuradar/kernels/passive/clutter_cancel.h>
#include <gpuradar/kernels/passive/cross_ambiguity.h>
#include <chrono>
#include <cmath>
#include <random>
#include <vector>

namespace gpuradar::bench {
namespace {

struct pr_workload {
    const char* name;
    kernels::clutter_cancel_params eca;
    kernels::cross_ambiguity_params caf;
    double fs = 2.4e6;     //!< sample rate (real time = nsamples / fs per CPI)
    std::size_t nsurv = 1; //!< surveillance channels, each cancelled and mapped
};

pr_workload pr_fm(bool quick)
{
    pr_workload w{ "PR-FM", {}, {} };
    w.eca.nsamples = quick ? 120000 : 1200000;
    w.eca.ntaps = quick ? 20 : 50;
    w.eca.nbatches = 10;
    w.caf.nsamples = w.eca.nsamples;
    w.caf.nrange = quick ? 100 : 400;
    w.caf.doppler_half = quick ? 64 : 256;
    return w;
}

/*!
 * PR-DVB (issue 33): 9.14 Msps, a CPI of 0.25 s (2.285 M samples), 4 surveillance
 * channels, cancelled together by ECA-B (100 taps: 11 km of bistatic range at this
 * rate, in 10 batches) and each mapped over 1500 range bins x +-128 Doppler bins, then
 * CFAR on each map; the target is 10 ms per CPI for the four on the GPU.
 */
pr_workload pr_dvb(bool quick)
{
    pr_workload w{ "PR-DVB", {}, {} };
    w.fs = 9.14e6;
    w.nsurv = 4;
    w.eca.nsurv = w.nsurv;
    w.eca.nsamples = quick ? 228500 : 2285000;
    w.eca.ntaps = quick ? 20 : 100;
    w.eca.nbatches = 10;
    w.caf.nsamples = w.eca.nsamples;
    w.caf.nrange = quick ? 150 : 1500;
    w.caf.doppler_half = quick ? 32 : 128;
    return w;
}

//! The channels both benches cancel: a Gaussian reference, and a surveillance channel of
//! its own noise plus a direct path 40 dB above it (100 x the reference).
struct channels {
    std::vector<kernels::cfloat> r, surv;
};

channels make_channels(std::size_t n)
{
    std::mt19937 rng(3);
    std::normal_distribution<float> g(0.0f, 1.0f);
    channels c{ std::vector<kernels::cfloat>(n), std::vector<kernels::cfloat>(n) };
    for (std::size_t i = 0; i < n; ++i) {
        c.r[i] = kernels::cfloat(g(rng), g(rng));
        c.surv[i] = kernels::cfloat(g(rng), g(rng)) + 100.0f * c.r[i];
    }
    return c;
}

//! For all surveillance channels: the reference's autocorrelation once (K N complex
//! multiply-adds), each channel's right-hand side and fit (2 K N).
double eca_gflop(const pr_workload& w)
{
    return 8.0 * double(1 + 2 * w.nsurv) * double(w.eca.ntaps) * double(w.eca.nsamples) *
           1e-9;
}

//! Complex floats moved: the reference read and copied (2 N), each channel read,
//! copied, read by the lag sums and by the fit, and its output written (5 N); the
//! reference's own re-reads are counted once with the first channel's (7 N for one).
double eca_floor_gb(const pr_workload& w)
{
    return double(2 + 5 * w.nsurv) * double(w.eca.nsamples) * sizeof(kernels::cfloat) *
           1e-9;
}

kernels::clutter_cancel_params nlms_of(const pr_workload& w)
{
    kernels::clutter_cancel_params p = w.eca;
    p.method = kernels::cancel_method::nlms;
    p.nsurv = 1; // one channel's adaptation: NLMS shares nothing between channels
    // 64 samples per update, or the nearest block below that divides the CPI (the
    // kernel's rule): 40 for PR-DVB's 2 285 000 samples.
    p.nlms_block = 64;
    while (w.eca.nsamples % p.nlms_block != 0)
        --p.nlms_block;
    return p;
}

//! CFAR on the map as the passive flowgraph runs it.
kernels::cfar_2d_params cfar_of(const kernels::cross_ambiguity& caf, const pr_workload& w)
{
    kernels::cfar_2d_params p;
    p.nrange = w.caf.nrange;
    p.ndoppler = caf.ndoppler();
    p.guard_range = 2;
    p.train_range = 6;
    p.guard_doppler = 1;
    p.train_doppler = 2;
    p.pfa = 1e-6;
    p.local_max = true;
    return p;
}

void emit(const char* bench,
          const std::string& device,
          const pr_workload& w,
          const kernels::cross_ambiguity& caf,
          double eca_ms,
          double caf_ms,
          double cfar_ms,
          double nlms_ms,
          double cancellation_db,
          double copy_gbs)
{
    auto line = json_line(bench);
    line.field("device", device)
        .field("workload", w.name)
        .field("nsamples", static_cast<long long>(w.eca.nsamples))
        .field("surveillance_channels", static_cast<long long>(w.nsurv))
        .field("ntaps", static_cast<long long>(w.eca.ntaps))
        .field("eca_batches", static_cast<long long>(w.eca.nbatches))
        .field("nrange", static_cast<long long>(w.caf.nrange))
        .field("ndoppler", static_cast<long long>(caf.ndoppler()))
        .field("caf_method",
               caf.method() == kernels::caf_method::batched ? "batched" : "direct")
        .field("caf_batch_length", static_cast<long long>(caf.batch_length()))
        .field("eca_ms", eca_ms)
        .field("caf_ms", caf_ms)
        .field("cfar_ms", cfar_ms)
        .field("ms_per_cpi", eca_ms + caf_ms + cfar_ms)
        .field("realtime_factor",
               1000.0 * double(w.eca.nsamples) / w.fs / (eca_ms + caf_ms + cfar_ms))
        .field("nlms_ms", nlms_ms)
        .field("eca_gflop", eca_gflop(w))
        .field("eca_floor_gb", eca_floor_gb(w))
        .field("cancellation_db", cancellation_db);
    if (copy_gbs > 0)
        line.field("copy_gb_per_s", copy_gbs);
    line.emit();
}

} // namespace

GPURADAR_BENCH("passive/cuda")
{
    if (!pd::have_cuda("passive/cuda"))
        return;
    const auto props = kernels::current_device_properties();
    kernels::cuda_stream s;
    // the rate the floors are read against: a device-to-device copy of 512 MiB, read +
    // written, far beyond the L2 cache (a channel's copy would stay in it)
    const double copy_gbs = pd::copy_gb_per_s(std::size_t(512) << 20, s, 10);
    for (const pr_workload& w : { pr_fm(opt.quick), pr_dvb(opt.quick) }) {
        if (!opt.workload.empty() && opt.workload != w.name)
            continue;
        const std::size_t n = w.eca.nsamples;
        const channels host = make_channels(n);
        auto r = pd::to_device(host.r.data(), n, s);
        // each channel its own input and output buffers, as the block's
        std::vector<kernels::device_memory> surv, out;
        std::vector<const kernels::cfloat*> surv_ptr;
        std::vector<kernels::cfloat*> out_ptr;
        for (std::size_t k = 0; k < w.nsurv; ++k) {
            surv.push_back(pd::to_device(host.surv.data(), n, s));
            out.emplace_back(n * sizeof(kernels::cfloat));
            surv_ptr.push_back(surv.back().as<kernels::cfloat>());
            out_ptr.push_back(out.back().as<kernels::cfloat>());
        }
        kernels::device_memory map(w.caf.nrange * (2 * w.caf.doppler_half + 1) *
                                   sizeof(float));
        auto eca = kernels::clutter_cancel::make(kernels::backend::cuda, w.eca, s.ref());
        auto caf = kernels::cross_ambiguity::make(kernels::backend::cuda, w.caf, s.ref());
        auto nlms =
            kernels::clutter_cancel::make(kernels::backend::cuda, nlms_of(w), s.ref());
        auto cfar =
            kernels::cfar_2d::make(kernels::backend::cuda, cfar_of(*caf, w), s.ref());
        kernels::device_memory mask(w.caf.nrange * caf->ndoppler());
        std::vector<kernels::clutter_cancel_result> res(w.nsurv);
        const int reps = std::max(3, opt.repeats / 5);
        // Every surveillance channel (the same samples in each): cancelled in one run,
        // then each mapped and detected.
        const double eca_ms = pd::time_ms(s, reps, [&] {
            eca->run_channels(
                r.as<kernels::cfloat>(), surv_ptr.data(), out_ptr.data(), res.data());
        });
        const double caf_ms = pd::time_ms(s, reps, [&] {
            for (std::size_t k = 0; k < w.nsurv; ++k)
                caf->run(r.as<kernels::cfloat>(), out_ptr[k], map.as<float>());
        });
        const double cfar_ms = pd::time_ms(s, reps, [&] {
            for (std::size_t k = 0; k < w.nsurv; ++k) {
                cfar->run(map.as<float>(), mask.as<std::uint8_t>(), nullptr, 1);
                (void)cfar->collect();
            }
        });
        const double nlms_ms = pd::time_ms(
            s, 2, [&] { nlms->run(r.as<kernels::cfloat>(), surv_ptr[0], out_ptr[0]); });
        emit("passive/cuda",
             props.name,
             w,
             *caf,
             eca_ms,
             caf_ms,
             cfar_ms,
             nlms_ms,
             res[0].cancellation_db,
             copy_gbs);
    }
}

GPURADAR_BENCH("passive/cpu")
{
    const pr_workload w = pr_fm(opt.quick);
    const std::size_t n = w.eca.nsamples;
    const channels host = make_channels(n);
    const std::vector<kernels::cfloat>&r = host.r, &surv = host.surv;
    std::vector<kernels::cfloat> e(n);
    std::vector<float> map(w.caf.nrange * (2 * w.caf.doppler_half + 1));
    auto eca = kernels::clutter_cancel::make(kernels::backend::cpu, w.eca);
    auto caf = kernels::cross_ambiguity::make(kernels::backend::cpu, w.caf);
    auto nlms = kernels::clutter_cancel::make(kernels::backend::cpu, nlms_of(w));
    auto cfar = kernels::cfar_2d::make(kernels::backend::cpu, cfar_of(*caf, w));
    std::vector<std::uint8_t> mask(map.size());
    kernels::clutter_cancel_result res;
    auto ms_of = [](auto&& f) {
        const auto a = std::chrono::steady_clock::now();
        f();
        return std::chrono::duration<double, std::milli>(
                   std::chrono::steady_clock::now() - a)
            .count();
    };
    std::vector<double> te, tc, tf, tn;
    for (int i = 0; i < (opt.quick ? 1 : 3); ++i) {
        te.push_back(ms_of([&] { res = eca->run(r.data(), surv.data(), e.data()); }));
        tc.push_back(ms_of([&] { caf->run(r.data(), e.data(), map.data()); }));
        tf.push_back(ms_of([&] {
            cfar->run(map.data(), mask.data(), nullptr, 1);
            (void)cfar->collect();
        }));
        tn.push_back(ms_of([&] { nlms->run(r.data(), surv.data(), e.data()); }));
    }
    emit("passive/cpu",
         "cpu",
         w,
         *caf,
         median(te),
         median(tc),
         median(tf),
         median(tn),
         res.cancellation_db,
         0.0); // no copy rate on the CPU
}

} // namespace gpuradar::bench
