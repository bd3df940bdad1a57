/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "front_end_args.h"
#include "radar_scene_source_impl.h"
#include "uhd_time.h"
#include <gnuradio/io_signature.h>
#include <gpuradar/kernels/pulse_doppler/pulse_compression.h>
#include <gpuradar/kernels/waveform/waveform.h>
#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace gr {
namespace gpuradar {

namespace {
//! Paced mode: the longest stretch of samples produced per call (s). Short enough that
//! the stream looks continuous to a consumer and stop() is prompt, long enough that the
//! per-call overhead does not matter.
constexpr double paced_chunk_s = 0.01;

[[noreturn]] void rethrow_named(const std::invalid_argument& e, const char* params)
{
    throw std::invalid_argument(std::string("gpuradar::radar_scene_source: ") + params +
                                ": " + e.what());
}

} // namespace

radar_scene_source::sptr
radar_scene_source::make(double fs,
                         double fc,
                         double prf,
                         double bandwidth,
                         double pulse_width,
                         const std::vector<gr_complex>& waveform,
                         const std::vector<double>& ranges,
                         const std::vector<double>& velocities,
                         const std::vector<double>& amplitudes,
                         const std::string& amplitude_unit,
                         double radar_constant_db,
                         double noise_power,
                         double leakage_amplitude,
                         double clutter_cnr_db,
                         double clutter_start_m,
                         double clutter_stop_m,
                         bool paced,
                         unsigned int truth_every,
                         double start_time,
                         std::uint64_t seed,
                         const std::vector<double>& azimuths_deg,
                         unsigned int nchannels,
                         double element_spacing_wl,
                         const std::vector<double>& element_positions_m,
                         const std::vector<double>& channel_gain_db,
                         const std::vector<double>& channel_phase_deg,
                         const std::vector<double>& elevations_deg,
                         double dc_offset_i,
                         double dc_offset_q,
                         double iq_gain_db,
                         double iq_phase_deg,
                         double phase_noise_linewidth_hz,
                         unsigned int adc_bits,
                         double adc_full_scale,
                         double clock_offset_ppm,
                         unsigned int leakage_delay)
{
    scene_live_config live;
    live.amplitude_unit = amplitude_unit;
    live.radar_constant_db = radar_constant_db;
    kernels::scene_config& c = live.scene;
    c.fs = fs;
    c.fc = fc;
    c.prf = prf;
    if (!(fs > 0.0) || !std::isfinite(fs))
        throw std::invalid_argument("gpuradar::radar_scene_source: fs must be > 0 and "
                                    "finite (Hz) (got " +
                                    std::to_string(fs) + ")");
    if (waveform.empty()) {
        // A sample rate typo (1e15) reads as a pulse-width error from lfm_chirp: name fs
        // and the range this pulse width allows.
        const double max_fs = double(kernels::max_waveform_samples) / pulse_width;
        if (pulse_width > 0.0 && std::isfinite(pulse_width) && fs > max_fs) {
            std::ostringstream m;
            m << "gpuradar::radar_scene_source: fs must be in (0, " << max_fs
              << "] Hz with pulse_width " << pulse_width << " s (the LFM pulse would be "
              << fs * pulse_width << " samples, at most " << kernels::max_waveform_samples
              << ") (got " << fs << ")";
            throw std::invalid_argument(m.str());
        }
        try {
            c.waveform = kernels::lfm_chirp(bandwidth, pulse_width, fs);
        } catch (const std::invalid_argument& e) {
            rethrow_named(e, "bandwidth/pulse_width (LFM, used when waveform is empty)");
        }
    } else {
        c.waveform.assign(waveform.begin(), waveform.end());
    }
    c.targets = kernels::radar_scene::make_targets(
        ranges, velocities, amplitudes, amplitude_unit, radar_constant_db);
    c.noise_power = noise_power;
    c.leakage_amplitude = leakage_amplitude;
    c.clutter_cnr_db = clutter_cnr_db;
    c.clutter_start_m = clutter_start_m;
    c.clutter_stop_m = clutter_stop_m;
    c.seed = seed;
    kernels::radar_scene::set_directions(c.targets, azimuths_deg, elevations_deg);
    c.array = kernels::array_config::make(nchannels,
                                          element_spacing_wl,
                                          element_positions_m,
                                          fc,
                                          channel_gain_db,
                                          channel_phase_deg,
                                          kernels::radar_scene::stage);
    c.front_end = front_end_from_args(dc_offset_i,
                                      dc_offset_q,
                                      iq_gain_db,
                                      iq_phase_deg,
                                      phase_noise_linewidth_hz,
                                      adc_bits,
                                      adc_full_scale);
    c.clock_offset_ppm = clock_offset_ppm;
    c.leakage_delay = leakage_delay;
    if (!(start_time >= 0.0) || !std::isfinite(start_time))
        throw std::invalid_argument(
            "gpuradar::radar_scene_source: start_time must be >= 0 "
            "and finite (s) (got " +
            std::to_string(start_time) + ")");
    return gnuradio::make_block_sptr<radar_scene_source_impl>(
        live, paced, truth_every, start_time);
}

radar_scene_source_impl::radar_scene_source_impl(const scene_live_config& cfg,
                                                 bool paced,
                                                 unsigned int truth_every,
                                                 double start_time)
    : gr::sync_block("radar_scene_source",
                     gr::io_signature::make(0, 0, 0),
                     gr::io_signature::make(static_cast<int>(cfg.scene.array.nchannels()),
                                            static_cast<int>(cfg.scene.array.nchannels()),
                                            sizeof(gr_complex))),
      d_scene(cfg.scene),
      d_changes(cfg,
                [](const scene_live_config& c) {
                    return std::make_unique<kernels::radar_scene>(c.scene);
                }),
      d_paced(paced),
      d_truth_every(truth_every),
      d_start_time(time_spec_from_seconds(start_time)),
      d_truth_port(pmt::intern("truth"))
{
    message_port_register_out(d_truth_port);
}

std::vector<gr_complex> radar_scene_source_impl::waveform() const
{
    std::lock_guard<std::mutex> lock(d_scene_mutex);
    return d_scene.config().waveform;
}

void radar_scene_source_impl::set_targets(const std::vector<double>& ranges,
                                          const std::vector<double>& velocities,
                                          const std::vector<double>& amplitudes,
                                          const std::vector<double>& azimuths_deg,
                                          const std::vector<double>& elevations_deg)
{
    d_changes.change([&](scene_live_config& c) {
        c.scene.targets = kernels::radar_scene::make_targets(
            ranges, velocities, amplitudes, c.amplitude_unit, c.radar_constant_db);
        kernels::radar_scene::set_directions(
            c.scene.targets, azimuths_deg, elevations_deg);
    });
}

void radar_scene_source_impl::set_noise_power(double noise_power)
{
    d_changes.change([&](scene_live_config& c) { c.scene.noise_power = noise_power; });
}

void radar_scene_source_impl::generate(const gr_vector_void_star& out, std::size_t n)
{
    std::vector<kernels::cfloat*> at(out.size());
    std::size_t done = 0;
    while (done < n) {
        std::size_t chunk = n - done;
        if (d_changes.pending()) {
            const std::uint64_t pos = d_scene.position();
            const auto& t = d_scene.timing();
            const std::uint64_t next = t.pulse_start(t.first_pulse_at_or_after(pos));
            if (next == pos) {
                std::unique_ptr<kernels::radar_scene> scene;
                scene_live_config c;
                if (d_changes.take(scene, c)) {
                    scene->continue_from(d_scene);
                    std::lock_guard<std::mutex> lock(d_scene_mutex);
                    d_scene = std::move(*scene);
                }
                continue;
            }
            chunk = std::min<std::size_t>(chunk, next - pos);
        }
        for (std::size_t c = 0; c < at.size(); ++c)
            at[c] = static_cast<kernels::cfloat*>(out[c]) + done;
        d_scene.generate(at.data(), chunk);
        done += chunk;
    }
}

std::vector<double> radar_scene_source_impl::snr_db() const
{
    std::lock_guard<std::mutex> lock(d_scene_mutex);
    std::vector<double> s;
    for (const auto& t : d_scene.config().targets)
        s.push_back(t.snr_db);
    return s;
}

bool radar_scene_source_impl::start()
{
    d_started = false; // the real-time clock starts with the first samples
    return true;
}

void radar_scene_source_impl::publish_truth(std::uint64_t from, std::uint64_t to)
{
    const auto& t = d_scene.timing();
    const auto& cfg = d_scene.config();
    if (cfg.targets.empty())
        return;
    std::uint64_t k = t.first_pulse_at_or_after(from);
    const std::uint64_t every = d_truth_every;
    if (every == 0) {
        if (k != 0)
            return;
    } else if (k % every) {
        k += every - k % every;
    }
    for (; t.pulse_start(k) < to; k += every) {
        const kernels::time_spec rx = kernels::add_samples(
            d_start_time, static_cast<std::int64_t>(t.pulse_start(k)), cfg.fs);
        for (std::size_t i = 0; i < cfg.targets.size(); ++i) {
            const auto tr = d_scene.truth(i, k);
            pmt::pmt_t d = pmt::make_dict();
            auto add = [&d](const char* key, pmt::pmt_t v) {
                d = pmt::dict_add(d, pmt::intern(key), v);
            };
            add("target", pmt::from_uint64(tr.target));
            add("pulse", pmt::from_uint64(tr.pulse));
            add("sample", pmt::from_uint64(tr.sample));
            add("time_s", pmt::from_double(tr.time_s));
            add("rx_time", uhd_time_pmt(rx));
            add("range_m", pmt::from_double(tr.range_m));
            add("velocity_mps", pmt::from_double(tr.velocity_mps));
            add("doppler_hz", pmt::from_double(tr.doppler_hz));
            add("delay_samples", pmt::from_double(tr.delay_samples));
            add("snr_db", pmt::from_double(tr.snr_db));
            add("amplitude", pmt::from_double(tr.amplitude));
            add("azimuth_deg", pmt::from_double(tr.azimuth_deg));
            add("elevation_deg", pmt::from_double(tr.elevation_deg));
            add("fs", pmt::from_double(cfg.fs));
            add("fc", pmt::from_double(cfg.fc));
            add("prf", pmt::from_double(cfg.prf));
            message_port_pub(d_truth_port, d);
        }
        if (every == 0)
            break;
    }
}

int radar_scene_source_impl::work(int noutput_items,
                                  gr_vector_const_void_star&,
                                  gr_vector_void_star& output_items)
{
    const double fs = d_scene.config().fs;
    std::size_t n = static_cast<std::size_t>(noutput_items);
    if (d_paced)
        n = std::min<std::size_t>(
            n, std::max<std::size_t>(1, static_cast<std::size_t>(fs * paced_chunk_s)));
    const std::uint64_t w0 = nitems_written(0);
    if (w0 == 0) {
        for (unsigned c = 0; c < output_items.size(); ++c) {
            add_item_tag(c, 0, pmt::intern("rx_time"), uhd_time_pmt(d_start_time));
            add_item_tag(c, 0, pmt::intern("rx_rate"), pmt::from_double(fs));
            add_item_tag(
                c, 0, pmt::intern("rx_freq"), pmt::from_double(d_scene.config().fc));
        }
    }
    generate(output_items, n);
    d_clipped.store(d_scene.clipped(), std::memory_order_relaxed);
    publish_truth(w0, w0 + n);
    if (d_paced) {
        const auto now = std::chrono::steady_clock::now();
        if (!d_started) { // first call after start(): the clock starts here
            d_t0 = now;
            d_w0 = w0;
            d_started = true;
        }
        // Samples exist at the end of their time, as from hardware.
        const auto due =
            d_t0 +
            std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                std::chrono::duration<double>(static_cast<double>(w0 + n - d_w0) / fs));
        if (due > now)
            std::this_thread::sleep_until(due);
    }
    return static_cast<int>(n);
}

} // namespace gpuradar
} // namespace gr
