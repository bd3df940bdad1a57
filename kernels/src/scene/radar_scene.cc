/* radar_scene: the pulsed-radar receive-stream simulator (CPU). */
#include "common/param_check.h"
#include <gpuradar/kernels/scene/radar_scene.h>
#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>
#include <stdexcept>

namespace gpuradar::kernels {

namespace {

constexpr double c0 = pulse_timing::speed_of_light;
//! The clutter generator's seed is derived from the scene seed with this offset so that
//! its draws never coincide with the noise generator's (same seed, different streams).
constexpr std::uint64_t clutter_seed_offset = 0x9E3779B97F4A7C15ull;
//! Channel c > 0 of an array draws its noise from seed + c times this (odd, far from the
//! clutter offset), independent of channel 0, which keeps the single-channel stream.
constexpr std::uint64_t channel_seed_stride = 0xD1B54A32D192ED03ull;
//! The phase noise's generator: seed + this (odd, apart from the offsets above).
constexpr std::uint64_t phase_noise_seed_offset = 0xA0761D6478BD642Full;

//! fs_rx = fs (1 + ppm 1e-6); exactly fs without an offset (the stream to the bit).
double rx_rate(const scene_config& c)
{
    return c.clock_offset_ppm == 0.0 ? c.fs : c.fs * (1.0 + c.clock_offset_ppm * 1e-6);
}

std::string entry(const char* list, std::size_t i)
{
    return std::string(list) + "[" + std::to_string(i) + "]";
}

void check_finite_nonneg(double v, const char* name, const char* unit)
{
    if (!(v >= 0.0) || !std::isfinite(v))
        detail::throw_invalid(
            radar_scene::stage, name, std::string(">= 0 and finite ") + unit, v);
}

scene_config checked(scene_config c)
{
    const char* s = radar_scene::stage;
    if (!(c.fs > 0.0) || !std::isfinite(c.fs))
        detail::throw_invalid(s, "fs", "> 0 and finite (Hz)", c.fs);
    if (!(c.fc > 0.0) || !std::isfinite(c.fc))
        detail::throw_invalid(s, "fc", "> 0 and finite (Hz)", c.fc);
    if (c.waveform.empty())
        detail::throw_invalid(s, "waveform", "at least one sample", "an empty vector");
    double power = 0.0;
    for (std::size_t i = 0; i < c.waveform.size(); ++i) {
        if (!std::isfinite(c.waveform[i].real()) || !std::isfinite(c.waveform[i].imag()))
            detail::throw_invalid(
                s, entry("waveform", i).c_str(), "finite", c.waveform[i]);
        power += std::norm(std::complex<double>(c.waveform[i]));
    }
    if (!(power > 0.0))
        detail::throw_invalid(s, "waveform", "not all zero", "only zeros");
    if (!(c.prf > 0.0) || !std::isfinite(c.prf))
        detail::throw_invalid(s, "prf", "> 0 and finite (Hz)", c.prf);
    const double max_prf = c.fs / static_cast<double>(c.waveform.size());
    if (c.prf > max_prf) {
        std::ostringstream m;
        m << "<= fs / waveform length = " << max_prf << " Hz (the pulse of "
          << c.waveform.size() << " samples must fit in the PRI)";
        detail::throw_invalid(s, "prf", m.str(), c.prf);
    }
    check_finite_nonneg(c.noise_power, "noise_power", "(power per complex sample)");
    check_finite_nonneg(c.leakage_amplitude, "leakage_amplitude", "(linear)");
    // The leakage of pulse k ends before pulse k + 1 starts (it is not an echo).
    const double max_leak_delay = std::floor(c.fs / c.prf) - double(c.waveform.size());
    if (c.leakage_delay > 0 && !(double(c.leakage_delay) <= max_leak_delay))
        detail::throw_invalid(s,
                              "leakage_delay",
                              "<= floor(PRI) - waveform length = " +
                                  std::to_string(max_leak_delay) + " samples",
                              c.leakage_delay);
    if (c.clutter_stop_m > c.clutter_start_m) {
        check_finite_nonneg(c.clutter_start_m, "clutter_start_m", "(m)");
        if (!std::isfinite(c.clutter_stop_m))
            detail::throw_invalid(s, "clutter_stop_m", "finite (m)", c.clutter_stop_m);
        if (!std::isfinite(c.clutter_cnr_db))
            detail::throw_invalid(s, "clutter_cnr_db", "finite (dB)", c.clutter_cnr_db);
    }
    for (std::size_t i = 0; i < c.targets.size(); ++i) {
        const auto& t = c.targets[i];
        if (!(t.range_m > 0.0) || !std::isfinite(t.range_m))
            detail::throw_invalid(
                s, entry("ranges", i).c_str(), "> 0 and finite (m)", t.range_m);
        if (!std::isfinite(t.velocity_mps) || std::fabs(t.velocity_mps) >= c0)
            detail::throw_invalid(s,
                                  entry("velocities", i).c_str(),
                                  "finite and slower than light (m/s)",
                                  t.velocity_mps);
        if (!std::isfinite(t.snr_db))
            detail::throw_invalid(
                s, entry("amplitudes", i).c_str(), "finite (SNR, dB)", t.snr_db);
        check_target_direction(t, i, s);
    }
    c.array.validate(s);
    if (!(std::fabs(c.clock_offset_ppm) <= max_clock_offset_ppm))
        detail::throw_invalid(s,
                              "clock_offset_ppm",
                              "in [-" + std::to_string(max_clock_offset_ppm) + ", " +
                                  std::to_string(max_clock_offset_ppm) + "] ppm",
                              c.clock_offset_ppm);
    c.front_end.validate(c.fs, s);
    const double max_prf_rx = rx_rate(c) / static_cast<double>(c.waveform.size());
    if (c.prf > max_prf_rx)
        detail::throw_invalid(
            s,
            "prf",
            "<= fs_rx / waveform length = " + std::to_string(max_prf_rx) +
                " Hz with clock_offset_ppm " + std::to_string(c.clock_offset_ppm),
            c.prf);
    return c;
}

} // namespace

array_config array_config::make(unsigned int nchannels,
                                double spacing_wl,
                                const std::vector<double>& xyz,
                                double fc,
                                const std::vector<double>& gain_db,
                                const std::vector<double>& phase_deg,
                                const char* who)
{
    if (nchannels < 1)
        detail::throw_invalid(who, "nchannels", ">= 1", nchannels);
    array_config a;
    if (!xyz.empty()) {
        a.elements = positions_from_xyz(xyz, nchannels, who);
    } else if (nchannels > 1) {
        if (!(fc > 0.0) || !std::isfinite(fc))
            detail::throw_invalid(who, "fc", "> 0 and finite (Hz)", fc);
        a.elements = ula_positions(nchannels, spacing_wl, c0 / fc, who);
    }
    a.gain_db = gain_db;
    a.phase_deg = phase_deg;
    a.validate(who);
    return a;
}

void array_config::validate(const char* who) const
{
    const std::size_t n = nchannels();
    auto check = [&](const std::vector<double>& v, const char* name) {
        if (!v.empty() && v.size() != n)
            detail::throw_invalid(who,
                                  name,
                                  "empty or one value per channel (" + std::to_string(n) +
                                      ")",
                                  std::to_string(v.size()) + " values");
        for (std::size_t c = 0; c < v.size(); ++c)
            if (!std::isfinite(v[c]))
                detail::throw_invalid(who, entry(name, c).c_str(), "finite", v[c]);
    };
    check(gain_db, "channel_gain_db");
    check(phase_deg, "channel_phase_deg");
}

double array_config::gain(std::size_t c) const
{
    return gain_db.empty() ? 1.0 : std::pow(10.0, gain_db[c] / 20.0);
}

double array_config::phase_rad(std::size_t c) const
{
    return phase_deg.empty() ? 0.0 : phase_deg[c] * detail::pi / 180.0;
}

double array_config::arrival_phase_rad(std::size_t c,
                                       double fc,
                                       double azimuth_deg,
                                       double elevation_deg) const
{
    if (elements.empty())
        return 0.0;
    return kernels::arrival_phase_rad(elements[c],
                                      c0 / fc,
                                      azimuth_deg * detail::pi / 180.0,
                                      elevation_deg * detail::pi / 180.0);
}

void check_target_direction(const scene_target& t, std::size_t i, const char* who)
{
    if (!(std::fabs(t.azimuth_deg) <= 90.0))
        detail::throw_invalid(
            who, entry("azimuths_deg", i).c_str(), "in [-90, 90] degrees", t.azimuth_deg);
    check_elevation_deg(t.elevation_deg, who, entry("elevations_deg", i).c_str());
}

echo_geometry echo_geometry::of(const scene_target& t, double fs, double fc)
{
    echo_geometry g;
    g.delay_at_0 = 2.0 * t.range_m * fs / c0;
    g.delay_rate = -2.0 * t.velocity_mps / c0;
    g.cycles_per_sample = 2.0 * t.velocity_mps * fc / c0 / fs;
    const double r0_cycles = 2.0 * t.range_m * fc / c0; // -4 pi fc R0 / c
    g.phase0 = -2.0 * detail::pi * (r0_cycles - std::floor(r0_cycles));
    return g;
}

double radar_scene::echo_amplitude(double snr_db, double noise_power, double signal_power)
{
    const double ref = noise_power > 0.0 ? noise_power : 1.0;
    return std::sqrt(ref * std::pow(10.0, snr_db / 10.0) / signal_power);
}

double radar_scene::snr_from_rcs(double rcs_m2, double range_m, double radar_constant_db)
{
    return radar_constant_db + 10.0 * std::log10(rcs_m2) - 40.0 * std::log10(range_m);
}

std::vector<scene_target>
radar_scene::make_targets(const std::vector<double>& ranges_m,
                          const std::vector<double>& velocities_mps,
                          const std::vector<double>& amplitudes,
                          const std::string& amplitude_unit,
                          double radar_constant_db,
                          const char* who)
{
    const bool rcs = amplitude_unit == "rcs_m2";
    if (!rcs && amplitude_unit != "snr_db")
        detail::throw_invalid(
            who, "amplitude_unit", "snr_db or rcs_m2", "'" + amplitude_unit + "'");
    auto same_length = [&](const char* name, std::size_t n) {
        if (n != ranges_m.size()) {
            std::ostringstream m;
            m << "one entry per target, as many as ranges (" << ranges_m.size() << ")";
            detail::throw_invalid(who, name, m.str(), std::to_string(n) + " entries");
        }
    };
    same_length("velocities", velocities_mps.size());
    same_length("amplitudes", amplitudes.size());
    if (rcs && !std::isfinite(radar_constant_db))
        detail::throw_invalid(who, "radar_constant_db", "finite (dB)", radar_constant_db);
    std::vector<scene_target> t(ranges_m.size());
    for (std::size_t i = 0; i < t.size(); ++i) {
        if (!(ranges_m[i] > 0.0) || !std::isfinite(ranges_m[i]))
            detail::throw_invalid(
                who, entry("ranges", i).c_str(), "> 0 and finite (m)", ranges_m[i]);
        if (!std::isfinite(velocities_mps[i]) || std::fabs(velocities_mps[i]) >= c0)
            detail::throw_invalid(who,
                                  entry("velocities", i).c_str(),
                                  "finite and slower than light (m/s)",
                                  velocities_mps[i]);
        if (!std::isfinite(amplitudes[i]))
            detail::throw_invalid(
                who, entry("amplitudes", i).c_str(), "finite", amplitudes[i]);
        t[i].range_m = ranges_m[i];
        t[i].velocity_mps = velocities_mps[i];
        if (rcs) {
            if (!(amplitudes[i] > 0.0) || !std::isfinite(amplitudes[i]))
                detail::throw_invalid(who,
                                      entry("amplitudes", i).c_str(),
                                      "> 0 and finite (RCS, m^2)",
                                      amplitudes[i]);
            t[i].snr_db = snr_from_rcs(amplitudes[i], ranges_m[i], radar_constant_db);
        } else {
            t[i].snr_db = amplitudes[i];
        }
    }
    return t;
}

void radar_scene::set_directions(std::vector<scene_target>& targets,
                                 const std::vector<double>& azimuths_deg,
                                 const std::vector<double>& elevations_deg,
                                 const char* who)
{
    const auto set = [&](const std::vector<double>& angles,
                         double scene_target::*angle,
                         const char* name) {
        if (angles.empty())
            return;
        if (angles.size() != targets.size())
            detail::throw_invalid(who,
                                  name,
                                  "empty or one entry per target (" +
                                      std::to_string(targets.size()) + ")",
                                  std::to_string(angles.size()) + " entries");
        for (std::size_t i = 0; i < targets.size(); ++i)
            targets[i].*angle = angles[i];
    };
    set(azimuths_deg, &scene_target::azimuth_deg, "azimuths_deg");
    set(elevations_deg, &scene_target::elevation_deg, "elevations_deg");
}

radar_scene::radar_scene(scene_config cfg)
    : d_cfg(checked(std::move(cfg))),
      d_timing(rx_rate(d_cfg) / d_cfg.prf, 0, d_cfg.waveform.size(), stage),
      d_fs_rx(rx_rate(d_cfg)),
      d_noise(d_cfg.seed),
      d_front_end(d_cfg.front_end, d_fs_rx, d_cfg.seed + phase_noise_seed_offset, stage)
{
    for (std::size_t c = 1; c < nchannels(); ++c)
        d_channel_noise.emplace_back(d_cfg.seed + c * channel_seed_stride);
    d_ref_power = d_cfg.noise_power > 0.0 ? d_cfg.noise_power : 1.0;
    double e = 0.0;
    for (const auto& s : d_cfg.waveform)
        e += std::norm(std::complex<double>(s));
    const double len = static_cast<double>(d_cfg.waveform.size());
    d_wave_power = e / len;
    for (const auto& t : d_cfg.targets)
        d_amplitude.push_back(echo_amplitude(t.snr_db, d_cfg.noise_power, d_wave_power));

    if (d_cfg.clutter_stop_m > d_cfg.clutter_start_m) {
        const double cell = c0 / (2.0 * d_fs_rx); // one sample of two-way delay (m)
        const auto first =
            static_cast<std::uint64_t>(std::ceil(d_cfg.clutter_start_m / cell));
        const auto last =
            static_cast<std::uint64_t>(std::floor(d_cfg.clutter_stop_m / cell));
        const std::uint64_t cells = last >= first ? last - first + 1 : 1;
        d_clutter_delay =
            last >= first
                ? first
                : static_cast<std::uint64_t>(std::llround(
                      0.5 * (d_cfg.clutter_start_m + d_cfg.clutter_stop_m) / cell));
        // E|c|^2 = sigma^2 sum|s|^2 where the return overlaps L cells: sigma^2 = P CNR /
        // e.
        const double sigma = std::sqrt(
            d_ref_power * std::pow(10.0, d_cfg.clutter_cnr_db / 10.0) / e / 2.0);
        std::mt19937_64 g(d_cfg.seed + clutter_seed_offset);
        std::normal_distribution<double> nd(0.0, sigma);
        std::vector<std::complex<double>> rho(cells);
        for (auto& r : rho)
            r = { nd(g), nd(g) };
        const std::size_t L = d_cfg.waveform.size();
        d_clutter.assign(cells + L - 1, cfloat(0.0f, 0.0f));
        for (std::size_t i = 0; i < cells; ++i)
            for (std::size_t m = 0; m < L; ++m) {
                const std::complex<double> v =
                    rho[i] * std::complex<double>(d_cfg.waveform[m]);
                d_clutter[i + m] +=
                    cfloat(static_cast<float>(v.real()), static_cast<float>(v.imag()));
            }
    }
}

void radar_scene::continue_from(const radar_scene& previous)
{
    d_pos = previous.d_pos;
    d_noise = previous.d_noise;         // the noise stream goes on where it was
    d_front_end = previous.d_front_end; // and the phase noise and clip count
    if (previous.d_channel_noise.size() == d_channel_noise.size())
        d_channel_noise = previous.d_channel_noise;
}

std::int64_t
radar_scene::delay_of(double delay_at_0, double delay_rate, std::uint64_t k) const
{
    const double d =
        delay_at_0 + delay_rate * static_cast<double>(d_timing.pulse_start(k));
    return d < 0.0 ? -1 : static_cast<std::int64_t>(std::llround(d));
}

void radar_scene::add_pulses(cfloat* out,
                             std::uint64_t n0,
                             std::size_t n,
                             const cfloat* sig,
                             std::size_t len,
                             double gain,
                             double delay_at_0,
                             double delay_rate,
                             double cycles_per_sample,
                             double phase0) const
{
    const std::uint64_t n1 = n0 + n;
    // Largest delay of any pulse sent before n1 (delay is linear in the send time).
    const double dmax =
        std::max(delay_at_0, delay_at_0 + delay_rate * static_cast<double>(n1));
    if (dmax < 0.0)
        return;
    const double earliest =
        static_cast<double>(n0) - static_cast<double>(len) - std::ceil(dmax) - 1.0;
    const std::uint64_t k_lo =
        earliest > 0.0 ? d_timing.pulse_containing(static_cast<std::uint64_t>(earliest))
                       : 0;
    const std::uint64_t k_hi = d_timing.pulse_containing(n1 - 1);
    const double two_pi = 2.0 * detail::pi;
    const std::complex<double> step =
        std::polar(1.0, two_pi * (cycles_per_sample - std::floor(cycles_per_sample)));
    for (std::uint64_t k = k_lo; k <= k_hi; ++k) {
        const std::int64_t d = delay_of(delay_at_0, delay_rate, k);
        if (d < 0)
            continue;
        const std::uint64_t e0 = d_timing.pulse_start(k) + static_cast<std::uint64_t>(d);
        const std::uint64_t a = std::max(e0, n0), b = std::min(e0 + len, n1);
        if (a >= b)
            continue;
        // Phase at sample a, reduced in double, then a unit-step recurrence (a pulse is a
        // few thousand samples at most: the recurrence stays within 1e-12 of the exact).
        const double cyc = cycles_per_sample * static_cast<double>(a);
        std::complex<double> ph =
            gain * std::polar(1.0, phase0 + two_pi * (cyc - std::floor(cyc)));
        for (std::uint64_t m = a; m < b; ++m) {
            const std::complex<double> v = ph * std::complex<double>(sig[m - e0]);
            out[m - n0] +=
                cfloat(static_cast<float>(v.real()), static_cast<float>(v.imag()));
            ph *= step;
        }
    }
}

void radar_scene::render_channel(cfloat* out,
                                 std::size_t n,
                                 std::size_t c,
                                 complex_noise& noise) const
{
    noise.fill(out, n, d_cfg.noise_power);
    const cfloat* s = d_cfg.waveform.data();
    const std::size_t L = d_cfg.waveform.size();
    // With one channel and no errors the gain is exactly 1 and the phases exactly 0:
    // the single-channel stream is unchanged to the bit.
    const auto& array = d_cfg.array;
    const double gain = array.gain(c), phase = array.phase_rad(c);
    if (d_cfg.leakage_amplitude > 0.0)
        add_pulses(out,
                   d_pos,
                   n,
                   s,
                   L,
                   d_cfg.leakage_amplitude * gain,
                   static_cast<double>(d_cfg.leakage_delay),
                   0.0,
                   0.0,
                   phase);
    if (!d_clutter.empty())
        add_pulses(out,
                   d_pos,
                   n,
                   d_clutter.data(),
                   d_clutter.size(),
                   1.0 * gain,
                   static_cast<double>(d_clutter_delay),
                   0.0,
                   0.0,
                   phase + array.arrival_phase_rad(c, d_cfg.fc, 0.0));
    for (std::size_t i = 0; i < d_cfg.targets.size(); ++i) {
        const auto& t = d_cfg.targets[i];
        const auto g = echo_geometry::of(t, d_fs_rx, d_cfg.fc);
        add_pulses(
            out,
            d_pos,
            n,
            s,
            L,
            d_amplitude[i] * gain,
            g.delay_at_0,
            g.delay_rate,
            g.cycles_per_sample,
            g.phase0 + phase +
                array.arrival_phase_rad(c, d_cfg.fc, t.azimuth_deg, t.elevation_deg));
    }
}

void radar_scene::generate(cfloat* out, std::size_t n)
{
    if (nchannels() != 1)
        throw std::logic_error("gpuradar::radar_scene_source: generate(out, n) on a "
                               "scene of " +
                               std::to_string(nchannels()) + " channels");
    generate(&out, n);
}

void radar_scene::generate(cfloat* const* out, std::size_t n)
{
    if (n == 0)
        return;
    render_channel(out[0], n, 0, d_noise);
    for (std::size_t c = 1; c < nchannels(); ++c)
        render_channel(out[c], n, c, d_channel_noise[c - 1]);
    d_front_end.apply(out, nchannels(), n);
    d_pos += n;
}

target_truth radar_scene::truth(std::size_t i, std::uint64_t k) const
{
    const auto& t = d_cfg.targets.at(i);
    target_truth r;
    r.target = i;
    r.pulse = k;
    r.sample = d_timing.pulse_start(k);
    r.time_s = static_cast<double>(r.sample) / d_fs_rx;
    r.range_m = t.range_m - t.velocity_mps * r.time_s;
    r.velocity_mps = t.velocity_mps;
    r.doppler_hz = 2.0 * t.velocity_mps * d_cfg.fc / c0;
    r.delay_samples = 2.0 * r.range_m * d_fs_rx / c0;
    r.snr_db = t.snr_db;
    r.amplitude = d_amplitude[i];
    r.azimuth_deg = t.azimuth_deg;
    r.elevation_deg = t.elevation_deg;
    return r;
}

} // namespace gpuradar::kernels
