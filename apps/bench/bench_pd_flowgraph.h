/*
 * The pulse-Doppler flowgraph of the end-to-end benchmark (bench_e2e.cc) and of the soak
 * (apps/gpuradar_soak.cc): its scene, and pulse_framer -> pulse_doppler_processor ->
 * cfar_2d with one set of parameters, so that both measure the same chain.
 */
#ifndef INCLUDED_GPURADAR_BENCH_PD_FLOWGRAPH_H
#define INCLUDED_GPURADAR_BENCH_PD_FLOWGRAPH_H

#include "bench_gr_blocks.h"
#include <gnuradio/blocks/null_sink.h>
#include <gnuradio/gpuradar/cfar_2d.h>
#include <gnuradio/gpuradar/pulse_doppler_processor.h>
#include <gnuradio/gpuradar/pulse_framer.h>
#include <gnuradio/top_block.h>
#include <gpuradar/kernels/pulse_doppler/pulse_compression.h>
#include <complex>
#include <string>
#include <vector>

namespace gpuradar::bench::pd {

constexpr double fs = 100e6, bandwidth = 50e6, fc = 10e9;
//! Targets of scene_samples(): each CPI holds this many strong LFM echoes.
constexpr std::size_t scene_targets = 3;

//! ncpi CPIs of uniform noise plus the LFM echoes of scene_targets moving targets.
inline std::vector<cfloat> scene_samples(const workload& w, std::size_t ncpi)
{
    const auto s = kernels::lfm_chirp(bandwidth, double(w.waveform) / fs, fs);
    std::vector<cfloat> x(ncpi * w.npulses * w.nrange);
    std::uint32_t state = 88172645u;
    auto next = [&] {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        return float(state) * (2.0f / 4294967296.0f) - 1.0f;
    };
    for (auto& v : x)
        v = cfloat(0.1f * next(), 0.1f * next());
    const std::size_t delays[scene_targets] = { w.nrange / 8,
                                                w.nrange / 3,
                                                w.nrange / 2 };
    const double dopplers[scene_targets] = { 0.11, -0.23, 0.31 }; // cycles per pulse
    for (std::size_t p = 0; p < ncpi * w.npulses; ++p)
        for (std::size_t t = 0; t < scene_targets; ++t) {
            const auto rot =
                std::polar(1.0f, float(2 * 3.14159265358979 * dopplers[t] * p));
            for (std::size_t k = 0; k < s.size() && delays[t] + k < w.nrange; ++k)
                x[p * w.nrange + delays[t] + k] += rot * s[k];
        }
    return x;
}

//! PRI = gate = nrange samples from the first sample: every sample becomes a range bin.
inline grr::pulse_framer::sptr make_framer(const workload& w,
                                           const std::string& backend,
                                           int device = 0,
                                           const std::string& input_type = "fc32")
{
    return grr::pulse_framer::make(double(w.nrange),
                                   0,
                                   w.nrange,
                                   w.npulses,
                                   fs,
                                   fc,
                                   "free",
                                   "trigger",
                                   0.0,
                                   backend,
                                   device,
                                   input_type);
}

/*!
 * One host stage of the end-to-end benches into `tb`: a host_replay_source of ncpi CPIs
 * of `nsamples` samples of `sample_bytes` at `data` (fc32, or an SDR's sc16 / sc8 as
 * input_type says) into a null sink, or (with_framer) into a framer on `backend` and
 * `device` taking that input_type, whose pulses go to a device sink (CUDA: they stay on
 * the device, as for the chain) or a null sink (CPU).
 */
inline void connect_host_stage(const gr::top_block_sptr& tb,
                               const workload& w,
                               const void* data,
                               std::size_t nsamples,
                               std::size_t sample_bytes,
                               const std::string& input_type,
                               std::uint64_t ncpi,
                               const source_tuning& tuning,
                               const std::string& backend,
                               bool with_framer,
                               int device = 0)
{
    const std::uint64_t cpi_samples = w.npulses * w.nrange;
    auto src = gnuradio::make_block_sptr<host_replay_source>(
        data, nsamples, sample_bytes, ncpi * cpi_samples, cpi_samples, tuning, 0.0);
    if (!with_framer) {
        tb->connect(src, 0, gr::blocks::null_sink::make(sample_bytes), 0);
        return;
    }
    auto framer = make_framer(w, backend, device, input_type);
    tb->connect(src, 0, framer, 0);
    const std::size_t pulse_bytes = sizeof(cfloat) * w.nrange;
    if (backend == "cuda")
        tb->connect(
            framer, 0, gnuradio::make_block_sptr<device_sink>(pulse_bytes, 0, device), 0);
    else
        tb->connect(framer, 0, gr::blocks::null_sink::make(pulse_bytes), 0);
}

//! connect_host_stage from fc32 samples.
inline void connect_host_stage(const gr::top_block_sptr& tb,
                               const workload& w,
                               const std::vector<cfloat>& samples,
                               std::uint64_t ncpi,
                               const source_tuning& tuning,
                               const std::string& backend,
                               bool with_framer,
                               int device = 0)
{
    connect_host_stage(tb,
                       w,
                       samples.data(),
                       samples.size(),
                       sizeof(cfloat),
                       "fc32",
                       ncpi,
                       tuning,
                       backend,
                       with_framer,
                       device);
}

//! The chain's pulse_doppler_processor: nfft = npulses, the workload's LFM pulse with a
//! Taylor range window (normalised) and a Hann Doppler window.
inline grr::pulse_doppler_processor::params
processor_params(const workload& w, const std::string& backend, int device)
{
    grr::pulse_doppler_processor::params p;
    p.nrange = w.nrange;
    p.npulses = w.npulses;
    p.nfft = unsigned(w.npulses);
    p.bandwidth = bandwidth;
    p.pulse_width = double(w.waveform) / fs;
    p.samp_rate = fs;
    p.range_window = "taylor";
    p.normalize = true;
    p.doppler_window = "hann";
    p.backend = backend;
    p.device = device;
    return p;
}

//! The chain's blocks: nfft = npulses, Taylor range and Hann Doppler windows, CA CFAR
//! with chain_cfar_params' window; every block on CUDA device `device`.
struct pd_chain {
    grr::pulse_framer::sptr framer;
    grr::pulse_doppler_processor::sptr processor;
    grr::cfar_2d::sptr cfar;

    pd_chain(const workload& w,
             const std::string& backend,
             int device = 0,
             const std::string& input_type = "fc32")
        : framer(make_framer(w, backend, device, input_type)),
          processor(
              grr::pulse_doppler_processor::make(processor_params(w, backend, device)))
    {
        const auto cp = chain_cfar_params(w);
        cfar = grr::cfar_2d::make(cp.nrange,
                                  cp.ndoppler,
                                  1,
                                  cp.guard_range,
                                  cp.train_range,
                                  cp.guard_doppler,
                                  cp.train_doppler,
                                  cp.pfa,
                                  "ca",
                                  0,
                                  "clip",
                                  "wrap",
                                  true,
                                  4096,
                                  backend,
                                  false,
                                  false,
                                  device);
    }
    //! source -> framer -> processor -> cfar; returns the block the mask goes out of.
    grr::cfar_2d::sptr connect(gr::top_block_sptr tb, gr::basic_block_sptr source) const
    {
        tb->connect(source, 0, framer, 0);
        tb->connect(framer, 0, processor, 0);
        tb->connect(processor, 0, cfar, 0);
        return cfar;
    }
    std::uint64_t dropped_cpis() const
    {
        return framer->dropped_cpis() + processor->dropped_cpis() + cfar->dropped_cpis();
    }
};

} // namespace gpuradar::bench::pd

#endif
