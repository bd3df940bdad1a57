/* pulse_tx: bursts of the transmit waveform on the pulse schedule. */
#include "common/param_check.h"
#include <gpuradar/kernels/waveform/pulse_tx.h>
#include <algorithm>
#include <cmath>

namespace gpuradar::kernels {

burst_mode parse_burst_mode(const std::string& name, const char* stage)
{
    if (name == "pulse")
        return burst_mode::pulse;
    if (name == "cpi")
        return burst_mode::cpi;
    detail::throw_invalid(stage, "burst_mode", "pulse or cpi", "'" + name + "'");
}

namespace {
pulse_tx_config checked(pulse_tx_config c, const char* stage)
{
    if (c.pulse.empty())
        detail::throw_invalid(
            stage, "waveform", "at least one sample", "an empty vector");
    const double len = static_cast<double>(c.pulse.size());
    if (!(c.pri_samples >= len) || !std::isfinite(c.pri_samples))
        detail::throw_invalid(
            stage,
            "prf",
            "<= samp_rate / pulse length: the pulse of " +
                std::to_string(c.pulse.size()) +
                " samples must fit in the PRI (lower prf or pulse_width)",
            "a PRI of " + std::to_string(c.pri_samples) + " samples");
    if (c.mode == burst_mode::cpi && c.npulses < 1)
        detail::throw_invalid(stage, "npulses", ">= 1 in cpi burst mode", c.npulses);
    return c;
}
} // namespace

pulse_tx::pulse_tx(pulse_tx_config cfg, const char* stage)
    : d_cfg(checked(std::move(cfg), stage)),
      d_timing(d_cfg.pri_samples, 0, d_cfg.pulse.size(), stage)
{
}

burst pulse_tx::burst_at(std::uint64_t b) const
{
    burst r;
    r.index = b;
    if (d_cfg.mode == burst_mode::pulse) {
        r.first_pulse = b;
        r.length = d_cfg.pulse.size();
        r.offset = b * r.length;
        r.timeline = d_timing.pulse_start(b);
    } else {
        r.first_pulse = b * d_cfg.npulses;
        r.timeline = d_timing.pulse_start(r.first_pulse);
        r.offset = r.timeline;
        r.length = d_timing.pulse_start(r.first_pulse + d_cfg.npulses) - r.timeline;
    }
    return r;
}

std::uint64_t pulse_tx::burst_containing(std::uint64_t offset) const
{
    if (d_cfg.mode == burst_mode::pulse)
        return offset / d_cfg.pulse.size();
    return d_timing.pulse_containing(offset) / d_cfg.npulses;
}

std::uint64_t pulse_tx::total_samples() const
{
    if (d_cfg.nbursts == 0)
        return 0;
    const burst last = burst_at(d_cfg.nbursts - 1);
    return last.offset + last.length;
}

std::size_t pulse_tx::generate(cfloat* out, std::size_t n)
{
    const std::uint64_t end = total_samples();
    if (end != 0)
        n = static_cast<std::size_t>(std::min<std::uint64_t>(n, end - d_pos));
    const std::size_t L = d_cfg.pulse.size();
    std::size_t done = 0;
    while (done < n) {
        const std::uint64_t at = d_pos + done;
        std::size_t run;
        if (d_cfg.mode == burst_mode::pulse) {
            const std::size_t i = static_cast<std::size_t>(at % L);
            run = std::min(n - done, L - i);
            std::copy_n(
                d_cfg.pulse.begin() + static_cast<std::ptrdiff_t>(i), run, out + done);
        } else {
            // Timeline: the pulse whose interval holds `at`, then zeros to the next
            // start.
            const std::uint64_t k = d_timing.pulse_containing(at);
            const std::uint64_t i = at - d_timing.pulse_start(k);
            if (i < L) {
                run = static_cast<std::size_t>(std::min<std::uint64_t>(n - done, L - i));
                std::copy_n(d_cfg.pulse.begin() + static_cast<std::ptrdiff_t>(i),
                            run,
                            out + done);
            } else {
                run = static_cast<std::size_t>(
                    std::min<std::uint64_t>(n - done, d_timing.pulse_start(k + 1) - at));
                std::fill_n(out + done, run, cfloat(0.0f, 0.0f));
            }
        }
        done += run;
    }
    d_pos += done;
    return done;
}

} // namespace gpuradar::kernels
