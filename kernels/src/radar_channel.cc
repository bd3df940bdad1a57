/* radar_channel: delayed, Doppler-shifted copies of the transmit stream plus noise. */
#include "param_check.h"
#include <gpuradar/kernels/radar_channel.h>
#include <algorithm>
#include <cmath>

namespace gpuradar::kernels {

namespace {

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
    return c;
}

} // namespace

radar_channel::radar_channel(channel_config cfg)
    : d_cfg(checked(std::move(cfg))), d_noise(d_cfg.seed)
{
    for (const auto& t : d_cfg.targets) {
        d_geometry.push_back(echo_geometry::of(t, d_cfg.fs, d_cfg.fc));
        d_amplitude.push_back(
            radar_scene::echo_amplitude(t.snr_db, d_cfg.noise_power, d_cfg.tx_power));
    }
}

cfloat radar_channel::input_at(std::int64_t i) const
{
    if (i < static_cast<std::int64_t>(d_hist_begin))
        return cfloat(0.0f, 0.0f); // before the stream start (history is trimmed after
                                   // the last use, never before)
    return d_hist[static_cast<std::size_t>(i - static_cast<std::int64_t>(d_hist_begin))];
}

void radar_channel::add_echo(cfloat* out, std::size_t n, std::size_t target) const
{
    const auto& g = d_geometry[target];
    const double two_pi = 2.0 * detail::pi;
    const auto n0 = static_cast<std::int64_t>(d_pos);
    const auto sys = static_cast<std::int64_t>(d_cfg.system_delay);
    // Phase at the first output sample reduced in double, then a unit-step recurrence.
    const double cyc = g.cycles_per_sample * static_cast<double>(d_pos);
    std::complex<double> ph =
        d_amplitude[target] *
        std::polar(1.0, g.phase0 + two_pi * (cyc - std::floor(cyc)));
    const std::complex<double> step =
        std::polar(1.0, two_pi * (g.cycles_per_sample - std::floor(g.cycles_per_sample)));
    for (std::size_t m = 0; m < n; ++m, ph *= step) {
        const double t = static_cast<double>(n0) + static_cast<double>(m);
        const double d = g.delay_at_0 + g.delay_rate * t;
        if (d <= 0.0)
            continue; // the target has passed the radar
        const std::int64_t src =
            n0 + static_cast<std::int64_t>(m) - sys - std::llround(d);
        const std::complex<double> v = ph * std::complex<double>(input_at(src));
        out[m] += cfloat(static_cast<float>(v.real()), static_cast<float>(v.imag()));
    }
}

void radar_channel::trim_history()
{
    // Later outputs m >= d_pos read x[m - s - D(m)]; m - D(m) grows with m (|v| << c), so
    // nothing before d_pos - s - max_i D_i(d_pos) - 1 is needed again.
    const double t = static_cast<double>(d_pos);
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

void radar_channel::process(const cfloat* in, cfloat* out, std::size_t n)
{
    if (n == 0)
        return;
    d_hist.insert(d_hist.end(), in, in + n);
    d_noise.fill(out, n, d_cfg.noise_power);
    if (d_cfg.leakage_amplitude > 0.0) {
        const auto leak = static_cast<float>(d_cfg.leakage_amplitude);
        const auto first = static_cast<std::int64_t>(d_pos) -
                           static_cast<std::int64_t>(d_cfg.system_delay);
        for (std::size_t m = 0; m < n; ++m)
            out[m] += leak * input_at(first + static_cast<std::int64_t>(m));
    }
    for (std::size_t i = 0; i < d_geometry.size(); ++i)
        add_echo(out, n, i);
    d_pos += n;
    trim_history();
}

} // namespace gpuradar::kernels
