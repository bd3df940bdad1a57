/* radar_channel: delayed, Doppler-shifted copies of the transmit stream plus noise. */
#include "common/param_check.h"
#include <gpuradar/kernels/scene/radar_channel.h>
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace gpuradar::kernels {

namespace {

//! As radar_scene's: channel c > 0 is seeded with seed + c times this odd constant.
constexpr std::uint64_t channel_seed_stride = 0xD1B54A32D192ED03ull;
//! As radar_scene's: the phase noise draws from seed + this.
constexpr std::uint64_t phase_noise_seed_offset = 0xA0761D6478BD642Full;

channel_config checked(channel_config c)
{
    const char* s = radar_channel::stage;
    if (!(c.fs > 0.0) || !std::isfinite(c.fs))
        detail::throw_invalid(s, "samp_rate", "> 0 and finite (Hz)", c.fs);
    if (!(c.fc > 0.0) || !std::isfinite(c.fc))
        detail::throw_invalid(s, "fc", "> 0 and finite (Hz)", c.fc);
    if (!(c.tx_power > 0.0) || !std::isfinite(c.tx_power))
        detail::throw_invalid(
            s, "tx_power", "> 0 and finite (mean |x|^2 of a pulse)", c.tx_power);
    if (!(c.noise_power >= 0.0) || !std::isfinite(c.noise_power))
        detail::throw_invalid(s, "noise_power", ">= 0 and finite", c.noise_power);
    if (!(c.leakage_amplitude >= 0.0) || !std::isfinite(c.leakage_amplitude))
        detail::throw_invalid(
            s, "leakage_amplitude", ">= 0 and finite (linear)", c.leakage_amplitude);
    for (std::size_t i = 0; i < c.targets.size(); ++i)
        check_target_direction(c.targets[i], i, s);
    c.array.validate(s);
    // A slow receive clock (ppm < 0) would read transmit samples the channel has not
    // been given yet (tau(m) > m): the channel is a sync block, one output per input.
    if (!(c.clock_offset_ppm >= 0.0 && c.clock_offset_ppm <= max_clock_offset_ppm))
        detail::throw_invalid(s,
                              "clock_offset_ppm",
                              "in [0, " +
                                  std::to_string(static_cast<int>(max_clock_offset_ppm)) +
                                  "] ppm (a receive clock faster than the transmit "
                                  "stream's; radar_scene_source takes either sign)",
                              c.clock_offset_ppm);
    return c;
}

} // namespace

radar_channel::radar_channel(channel_config cfg)
    : d_cfg(checked(std::move(cfg))),
      d_noise(d_cfg.seed),
      d_front_end(d_cfg.front_end, d_cfg.fs, d_cfg.seed + phase_noise_seed_offset, stage)
{
    // Channel c > 0 draws from its own generator, independent of channel 0's.
    for (std::size_t c = 1; c < nchannels(); ++c)
        d_channel_noise.emplace_back(d_cfg.seed + c * channel_seed_stride);
    for (const auto& t : d_cfg.targets) {
        d_geometry.push_back(echo_geometry::of(t, d_cfg.fs, d_cfg.fc));
        d_amplitude.push_back(
            radar_scene::echo_amplitude(t.snr_db, d_cfg.noise_power, d_cfg.tx_power));
    }
}

double radar_channel::tx_index(std::uint64_t m) const
{
    const double t = static_cast<double>(m);
    return d_cfg.clock_offset_ppm == 0.0 ? t : t / (1.0 + d_cfg.clock_offset_ppm * 1e-6);
}

cfloat radar_channel::input_at(std::int64_t i) const
{
    if (i < static_cast<std::int64_t>(d_hist_begin))
        return cfloat(0.0f, 0.0f); // before the stream start (history is trimmed after
                                   // the last use, never before)
    return d_hist[static_cast<std::size_t>(i - static_cast<std::int64_t>(d_hist_begin))];
}

void radar_channel::add_echo(cfloat* out,
                             std::size_t n,
                             std::size_t target,
                             std::size_t c) const
{
    const auto& g = d_geometry[target];
    const auto& array = d_cfg.array;
    // One channel without errors: gain exactly 1 and phases exactly 0 (the
    // single-channel output to the bit).
    const auto& t = d_cfg.targets[target];
    const double phase0 =
        g.phase0 + array.phase_rad(c) +
        array.arrival_phase_rad(c, d_cfg.fc, t.azimuth_deg, t.elevation_deg);
    const double two_pi = 2.0 * detail::pi;
    const auto n0 = static_cast<std::int64_t>(d_pos);
    const auto sys = static_cast<std::int64_t>(d_cfg.system_delay);
    // Phase at the first output sample reduced in double, then a unit-step recurrence.
    // With a clock offset a receive sample lasts 1 / fs_rx: the phase steps by f_d /
    // fs_rx.
    const double rate = tx_index(1);
    const double cycles = g.cycles_per_sample * rate;
    const double cyc = g.cycles_per_sample * tx_index(d_pos);
    std::complex<double> ph = d_amplitude[target] * array.gain(c) *
                              std::polar(1.0, phase0 + two_pi * (cyc - std::floor(cyc)));
    const std::complex<double> step =
        std::polar(1.0, two_pi * (cycles - std::floor(cycles)));
    const bool offset = d_cfg.clock_offset_ppm != 0.0;
    for (std::size_t m = 0; m < n; ++m, ph *= step) {
        const double t = offset ? tx_index(d_pos + m)
                                : static_cast<double>(n0) + static_cast<double>(m);
        const double d = g.delay_at_0 + g.delay_rate * t;
        if (d <= 0.0)
            continue; // the target has passed the radar
        const std::int64_t src =
            offset ? std::llround(t - d) - sys
                   : n0 + static_cast<std::int64_t>(m) - sys - std::llround(d);
        const std::complex<double> v = ph * std::complex<double>(input_at(src));
        out[m] += cfloat(static_cast<float>(v.real()), static_cast<float>(v.imag()));
    }
}

void radar_channel::trim_history()
{
    // Later outputs m >= d_pos read x[m - s - D(m)]; m - D(m) grows with m (|v| << c), so
    // nothing before d_pos - s - max_i D_i(d_pos) - 1 is needed again.
    const double t = tx_index(d_pos);
    double dmax = 0.0;
    for (const auto& g : d_geometry)
        dmax = std::max(dmax, g.delay_at_0 + g.delay_rate * t);
    const double keep_from =
        t - static_cast<double>(d_cfg.system_delay) - std::ceil(dmax) - 1.0;
    if (keep_from <= static_cast<double>(d_hist_begin))
        return;
    const auto drop = std::min<std::uint64_t>(
        static_cast<std::uint64_t>(keep_from) - d_hist_begin, d_hist.size());
    d_hist.erase(d_hist.begin(), d_hist.begin() + static_cast<std::ptrdiff_t>(drop));
    d_hist_begin += drop;
}

void radar_channel::add_leakage(cfloat* out, std::size_t n, std::size_t c) const
{
    const auto first =
        static_cast<std::int64_t>(d_pos) - static_cast<std::int64_t>(d_cfg.system_delay);
    const auto& array = d_cfg.array;
    const bool offset = d_cfg.clock_offset_ppm != 0.0;
    auto add = [&](auto leak) {
        for (std::size_t m = 0; m < n; ++m)
            out[m] +=
                leak * input_at(offset ? std::llround(tx_index(d_pos + m)) -
                                             static_cast<std::int64_t>(d_cfg.system_delay)
                                       : first + static_cast<std::int64_t>(m));
    };
    // Without channel errors a real gain, as for the single antenna (the same bits).
    if (array.gain_db.empty() && array.phase_deg.empty())
        add(static_cast<float>(d_cfg.leakage_amplitude));
    else
        add(cfloat(
            std::polar(d_cfg.leakage_amplitude * array.gain(c), array.phase_rad(c))));
}

void radar_channel::process(const cfloat* in, cfloat* out, std::size_t n)
{
    if (nchannels() != 1)
        throw std::logic_error("gpuradar::radar_channel: process(in, out, n) on a "
                               "channel of " +
                               std::to_string(nchannels()) + " outputs");
    process(in, &out, n);
}

void radar_channel::process(const cfloat* in, cfloat* const* out, std::size_t n)
{
    if (n == 0)
        return;
    d_hist.insert(d_hist.end(), in, in + n);
    for (std::size_t c = 0; c < nchannels(); ++c) {
        (c == 0 ? d_noise : d_channel_noise[c - 1]).fill(out[c], n, d_cfg.noise_power);
        if (d_cfg.leakage_amplitude > 0.0)
            add_leakage(out[c], n, c);
        for (std::size_t i = 0; i < d_geometry.size(); ++i)
            add_echo(out[c], n, i, c);
    }
    d_front_end.apply(out, nchannels(), n);
    d_pos += n;
    trim_history();
}

} // namespace gpuradar::kernels
