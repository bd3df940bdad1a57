/* pulse_timing and time_spec arithmetic. */
#include "common/param_check.h"
#include <gpuradar/kernels/waveform/pulse_timing.h>
#include <algorithm>
#include <cmath>
#include <sstream>

namespace gpuradar::kernels {

namespace {
using u128 = unsigned __int128;
using i128 = __int128;
constexpr unsigned mantissa_bits = 53; // a double's significand, hidden bit included
} // namespace

pulse_timing::pulse_timing(double pri_samples,
                           std::uint64_t gate_start,
                           std::uint64_t gate_length,
                           const char* stage)
    : d_pri(pri_samples), d_gate_start(gate_start), d_gate_length(gate_length)
{
    if (!(pri_samples > 0.0) || !std::isfinite(pri_samples))
        detail::throw_invalid(stage, "pri", "> 0 and finite (samples)", pri_samples);
    if (pri_samples > max_pri_samples)
        detail::throw_invalid(stage,
                              "pri",
                              "<= " + std::to_string(max_pri_samples) + " samples",
                              pri_samples);
    if (gate_length < 1)
        detail::throw_invalid(stage, "nrange", ">= 1", gate_length);
    if (pri_samples < static_cast<double>(gate_length)) {
        std::ostringstream c;
        c << ">= the range gate length nrange (" << gate_length << " samples)";
        detail::throw_invalid(stage, "pri", c.str(), pri_samples);
    }
    const auto whole = static_cast<std::uint64_t>(std::floor(pri_samples));
    if (gate_start > whole || gate_length > whole - gate_start) {
        std::ostringstream c;
        c << "such that the gate lies inside the PRI: gate_start + nrange (" << gate_start
          << " + " << gate_length << ") <= floor(pri) (" << whole << ")";
        detail::throw_invalid(stage, "gate_start", c.str(), gate_start);
    }
    // pri = m * 2^e with m in [0.5, 1): M = m * 2^53 is an integer, pri = M * 2^(e-53).
    int e = 0;
    const double m = std::frexp(pri_samples, &e);
    d_mantissa = static_cast<std::uint64_t>(std::ldexp(m, mantissa_bits));
    // pri >= 1 gives e >= 1, so the shift is at most 52; a shift below zero cannot occur
    // for pri <= 2^40.
    d_shift = static_cast<unsigned>(static_cast<int>(mantissa_bits) - e);
    while (d_shift > 0 && (d_mantissa & 1u) == 0) { // smallest exact form
        d_mantissa >>= 1;
        --d_shift;
    }
}

std::uint64_t pulse_timing::pulse_start(std::uint64_t k) const
{
    const u128 p = u128(k) * d_mantissa;
    if (d_shift == 0)
        return static_cast<std::uint64_t>(p);
    // floor(p / 2^s + 1/2), exact.
    return static_cast<std::uint64_t>((p + (u128(1) << (d_shift - 1))) >> d_shift);
}

std::uint64_t pulse_timing::first_pulse_at_or_after(std::uint64_t offset) const
{
    if (offset == 0)
        return 0;
    // Estimate in double, then correct with the exact schedule (at most a step or two).
    double est = std::ceil((static_cast<double>(offset) - 0.5) / d_pri);
    std::uint64_t k = est > 0 ? static_cast<std::uint64_t>(est) : 0;
    while (k > 0 && pulse_start(k - 1) >= offset)
        --k;
    while (pulse_start(k) < offset)
        ++k;
    return k;
}

std::uint64_t pulse_timing::pulse_containing(std::uint64_t offset) const
{
    const std::uint64_t k = first_pulse_at_or_after(offset);
    return pulse_start(k) == offset ? k : k - 1; // k >= 1 here: pulse_start(0) = 0
}

sample_shift sample_shift::plus(double samples) const
{
    const double whole_part = std::floor(samples);
    const double one = std::ldexp(1.0, frac_bits);
    const auto add_frac =
        static_cast<std::uint64_t>(std::llround((samples - whole_part) * one));
    sample_shift s;
    s.whole = whole + static_cast<std::uint64_t>(whole_part);
    s.frac = frac + add_frac; // < 2^53: no overflow
    const std::uint64_t carry = s.frac >> frac_bits;
    s.whole += carry;
    s.frac -= carry << frac_bits;
    return s;
}

double sample_shift::value() const
{
    return static_cast<double>(whole) +
           std::ldexp(static_cast<double>(frac), -int(frac_bits));
}

std::int64_t pulse_timing::pulse_start(std::uint64_t k, const sample_shift& lost) const
{
    // Everything in units of 2^-52 samples: k * pri = k * M * 2^-d_shift (d_shift <= 52
    // since pri >= 1), so the difference is exact and rounded once, below.
    constexpr unsigned f = sample_shift::frac_bits;
    const i128 kp = static_cast<i128>(u128(k) * d_mantissa) << (f - d_shift);
    const i128 l = (static_cast<i128>(lost.whole) << f) + static_cast<i128>(lost.frac);
    const i128 v = kp - l + (i128(1) << (f - 1));
    const i128 q = v >= 0 ? v >> f : -((-v + (i128(1) << f) - 1) >> f); // floor
    return static_cast<std::int64_t>(q);
}

std::uint64_t pulse_timing::first_pulse_at_or_after(std::int64_t offset,
                                                    const sample_shift& lost) const
{
    // Estimate in double, then correct with the exact schedule (at most a step or two).
    const double est =
        std::ceil((static_cast<double>(offset) + lost.value() - 0.5) / d_pri);
    std::uint64_t k = est > 0 ? static_cast<std::uint64_t>(est) : 0;
    while (k > 0 && pulse_start(k - 1, lost) >= offset)
        --k;
    while (pulse_start(k, lost) < offset)
        ++k;
    return k;
}

time_spec add_samples(time_spec t, std::int64_t samples, double fs)
{
    double secs_d;
    double frac = t.frac;
    const double fs_whole = std::floor(fs);
    // Integer sample rates (the norm for SDRs): whole seconds by integer division so that
    // long runs keep the fraction exact to the double's precision of one second.
    constexpr double exact_integer_limit = 9007199254740992.0; // 2^53
    if (fs_whole == fs && fs < exact_integer_limit) {
        const auto r = static_cast<std::int64_t>(fs);
        std::int64_t q = samples / r, rem = samples % r;
        if (rem < 0) {
            rem += r;
            --q;
        }
        secs_d = static_cast<double>(q);
        frac += static_cast<double>(rem) / fs;
    } else {
        const double dt = static_cast<double>(samples) / fs;
        secs_d = std::floor(dt);
        frac += dt - secs_d;
    }
    const double carry = std::floor(frac);
    frac -= carry;
    if (frac >= 1.0) { // rounding right below 1
        frac = 0.0;
        secs_d += 1.0;
    }
    const double total = static_cast<double>(t.secs) + secs_d + carry;
    time_spec out;
    out.secs = total > 0 ? static_cast<std::uint64_t>(static_cast<std::int64_t>(t.secs) +
                                                      static_cast<std::int64_t>(secs_d) +
                                                      static_cast<std::int64_t>(carry))
                         : 0;
    out.frac = total >= 0 ? frac : 0.0;
    return out;
}

double samples_between(time_spec a, time_spec b, double fs)
{
    const double ds = static_cast<double>(static_cast<std::int64_t>(b.secs - a.secs));
    return (ds + (b.frac - a.frac)) * fs;
}

} // namespace gpuradar::kernels
