/* pulse_timing, time_spec arithmetic and the pulse framer's state machine. */
#include "param_check.h"
#include <gpuradar/kernels/pulse_timing.h>
#include <algorithm>
#include <cmath>
#include <sstream>

namespace gpuradar::kernels {

namespace {
using u128 = unsigned __int128;
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

trigger_mode parse_trigger_mode(const std::string& name, const char* stage)
{
    if (name == "rx_time")
        return trigger_mode::rx_time;
    if (name == "tag")
        return trigger_mode::tag;
    if (name == "threshold")
        return trigger_mode::threshold;
    if (name == "free")
        return trigger_mode::free;
    detail::throw_invalid(
        stage, "trigger", "one of rx_time, tag, threshold, free", "'" + name + "'");
}

const char* to_string(trigger_mode m)
{
    switch (m) {
    case trigger_mode::rx_time:
        return "rx_time";
    case trigger_mode::tag:
        return "tag";
    case trigger_mode::threshold:
        return "threshold";
    case trigger_mode::free:
        return "free";
    }
    return "?";
}

namespace {
framer_config checked(const framer_config& c)
{
    constexpr const char* stage = "pulse_framer";
    if (c.npulses < 1)
        detail::throw_invalid(stage, "npulses", ">= 1", c.npulses);
    if (!(c.fs > 0.0) || !std::isfinite(c.fs))
        detail::throw_invalid(stage, "fs", "> 0 and finite (Hz)", c.fs);
    if (!(c.fc > 0.0) || !std::isfinite(c.fc))
        detail::throw_invalid(stage, "fc", "> 0 and finite (Hz)", c.fc);
    if (c.trigger == trigger_mode::threshold &&
        (!(c.threshold > 0.0) || !std::isfinite(c.threshold)))
        detail::throw_invalid(stage,
                              "threshold",
                              "> 0 and finite (|x|^2) with trigger=threshold",
                              c.threshold);
    return c;
}
} // namespace

pulse_framer_core::pulse_framer_core(const framer_config& cfg,
                                     std::unique_ptr<framer_copy> copy)
    : d_cfg(checked(cfg)),
      d_timing(cfg.pri_samples, cfg.gate_start, cfg.nrange, "pulse_framer"),
      d_copy(copy
                 ? std::move(copy)
                 : framer_copy::make(backend::cpu, std::size_t(cfg.npulses) * cfg.nrange))
{
    d_batch.reserve(cfg.npulses);
    if (cfg.trigger == trigger_mode::free)
        anchor_at(0);
}

double pulse_framer_core::r0() const
{
    return static_cast<double>(d_cfg.gate_start) * pulse_timing::speed_of_light /
           (2.0 * d_cfg.fs);
}

void pulse_framer_core::anchor_at(std::uint64_t abs_offset)
{
    d_anchored = true;
    d_anchor_virt = abs_offset + d_shift;
    d_pulse = 0;
    d_in_cpi = 0;
    d_batch.clear(); // gates of a discarded or finished CPI
}

std::uint64_t pulse_framer_core::gate_abs(std::uint64_t k) const
{
    return d_anchor_virt + d_timing.gate_begin(k) - d_shift;
}

std::uint64_t pulse_framer_core::samples_needed() const
{
    if (!d_anchored)
        return 1;
    const std::uint64_t end = gate_abs(d_pulse) + d_cfg.nrange;
    return end > d_pos ? end - d_pos : 1;
}

pulse_framer_core::time_check
pulse_framer_core::check_time(const framer_event& e, std::int64_t& lost, std::string& why)
{
    lost = 0;
    if (!d_has_time || e.offset == d_time_offset) {
        d_has_time = true;
        d_time_offset = e.offset;
        d_time = e.time;
        return time_check::continuous;
    }
    const time_spec expected = add_samples(
        d_time, static_cast<std::int64_t>(e.offset - d_time_offset), d_cfg.fs);
    const double delta = samples_between(expected, e.time, d_cfg.fs);
    d_time_offset = e.offset;
    d_time = e.time;
    if (std::fabs(delta) <= time_tolerance_samples)
        return time_check::continuous;
    const double whole = std::round(delta);
    std::ostringstream s;
    if (delta > 0 && std::fabs(delta - whole) <= time_tolerance_samples) {
        lost = static_cast<std::int64_t>(whole);
        s << "rx_time at sample " << e.offset << " is " << lost
          << " samples later than the sample count (samples lost upstream, overflow)";
        why = s.str();
        return time_check::gap;
    }
    s << "rx_time at sample " << e.offset << " jumps by " << delta
      << " samples against the sample count (not a whole number of lost samples)";
    why = s.str();
    return time_check::discontinuity;
}

void pulse_framer_core::flush_gates(const cfloat* in)
{
    // One call for all the gates taken since the last flush (one 2-D copy on the GPU).
    if (!d_batch.empty())
        d_copy->gather(
            d_copy->staging() + d_batch_slot * d_cfg.nrange, in, d_batch, d_cfg.nrange);
    d_batch.clear();
}

void pulse_framer_core::drop_partial(std::uint64_t at,
                                     const std::string& why,
                                     framer_result& r)
{
    framer_drop d;
    d.index = d_index++;
    d.pulses = d_in_cpi;
    d.offset = at;
    d.reason = why;
    r.drops.push_back(std::move(d));
    ++d_dropped;
    d_in_cpi = 0;
    d_batch.clear(); // gates of a discarded or finished CPI
}

bool pulse_framer_core::scan_rising(const cfloat* in,
                                    std::uint64_t offset,
                                    std::uint64_t from,
                                    std::uint64_t to,
                                    std::uint64_t& found)
{
    const float level = static_cast<float>(d_cfg.threshold);
    for (std::uint64_t i = from; i < to; ++i) {
        const int above = std::norm(in[i - offset]) > level ? 1 : 0;
        const bool rising = above == 1 && d_prev_level == 0;
        d_prev_level = above;
        if (rising) {
            found = i;
            return true;
        }
    }
    return false;
}

framer_result pulse_framer_core::process(const cfloat* in,
                                         std::uint64_t offset,
                                         std::size_t n,
                                         const std::vector<framer_event>& events,
                                         cfloat* out,
                                         std::size_t max_cpis)
{
    framer_result r;
    const std::uint64_t end = offset + n;
    std::uint64_t pos = std::max(offset, d_pos);
    std::size_t ei = 0;
    while (ei < events.size() && events[ei].offset < pos)
        ++ei; // already handled (a caller passing old events)

    for (;;) {
        if (!d_anchored) {
            if (!seek_anchor(in, offset, end, events, ei, pos))
                break;
            continue;
        }
        if (r.cpis.size() >= max_cpis)
            break;
        const std::uint64_t gs = gate_abs(d_pulse);
        const std::uint64_t ge = gs + d_cfg.nrange;
        if (ei < events.size() && events[ei].offset < ge) {
            on_event_while_anchored(events[ei++], gs, pos, r);
            continue;
        }
        if (gs < pos) {
            skip_consumed_gate(pos, r);
            continue;
        }
        if (ge > end) {
            pos = std::max(pos, std::min(gs, end));
            break;
        }
        take_gate(in, offset, gs, out, r);
        pos = ge;
    }
    flush_gates(in); // `in` is gone after this call
    d_pos = pos;
    r.consumed = pos - offset;
    return r;
}

bool pulse_framer_core::seek_anchor(const cfloat* in,
                                    std::uint64_t offset,
                                    std::uint64_t end,
                                    const std::vector<framer_event>& events,
                                    std::size_t& ei,
                                    std::uint64_t& pos)
{
    const std::uint64_t next_ev = ei < events.size() ? events[ei].offset : end;
    if (d_cfg.trigger == trigger_mode::threshold) {
        std::uint64_t found = 0;
        if (scan_rising(in, offset, pos, std::min(next_ev, end), found)) {
            anchor_at(found);
            pos = found;
            return true;
        }
    }
    if (ei >= events.size()) {
        pos = end;
        return false;
    }
    const framer_event& e = events[ei++];
    pos = e.offset;
    if (e.type == framer_event::kind::rx_time) {
        std::int64_t lost;
        std::string why;
        if (check_time(e, lost, why) != time_check::continuous)
            d_prev_level = -1; // no edge across a gap
        if (lost > 0)
            d_lost += static_cast<std::uint64_t>(lost);
        if (d_cfg.trigger == trigger_mode::rx_time)
            anchor_at(e.offset);
    } else if (d_cfg.trigger == trigger_mode::tag) {
        anchor_at(e.offset);
    }
    return true;
}

void pulse_framer_core::on_event_while_anchored(const framer_event& e,
                                                std::uint64_t gs,
                                                std::uint64_t& pos,
                                                framer_result& r)
{
    if (e.type != framer_event::kind::rx_time)
        return; // triggers are ignored while anchored
    std::int64_t lost;
    std::string why;
    const time_check tc = check_time(e, lost, why);
    if (tc == time_check::continuous)
        return;
    if (lost > 0)
        d_lost += static_cast<std::uint64_t>(lost);
    const bool begun = d_in_cpi > 0 || e.offset > gs;
    if (begun)
        drop_partial(e.offset, why, r);
    d_in_cpi = 0;
    d_batch.clear(); // gates of a discarded or finished CPI
    pos = std::max(pos, e.offset);
    const bool keeps_schedule =
        d_cfg.trigger == trigger_mode::rx_time || d_cfg.trigger == trigger_mode::free;
    if (keeps_schedule && tc == time_check::gap) {
        d_shift += static_cast<std::uint64_t>(lost);
        // First pulse whose gate lies wholly after the gap.
        d_pulse = std::max(d_pulse, first_pulse_from(e.offset));
    } else if (keeps_schedule) {
        anchor_at(e.offset);
    } else {
        d_anchored = false;
        d_prev_level = -1;
    }
}

void pulse_framer_core::skip_consumed_gate(std::uint64_t pos, framer_result& r)
{
    // Never build a CPI across samples a caller skipped.
    if (d_in_cpi > 0)
        drop_partial(pos, "input skipped before a gate was complete", r);
    d_pulse = std::max(d_pulse + 1, first_pulse_from(pos));
}

std::uint64_t pulse_framer_core::first_pulse_from(std::uint64_t abs_offset) const
{
    const std::uint64_t virt = abs_offset + d_shift;
    const std::uint64_t origin = d_anchor_virt + d_cfg.gate_start;
    return d_timing.first_pulse_at_or_after(virt > origin ? virt - origin : 0);
}

void pulse_framer_core::take_gate(const cfloat* in,
                                  std::uint64_t offset,
                                  std::uint64_t gs,
                                  cfloat* out,
                                  framer_result& r)
{
    if (d_in_cpi == 0)
        begin_cpi(gs);
    if (d_batch.empty())
        d_batch_slot = d_in_cpi;
    d_batch.push_back(gs - offset); // copied by flush_gates, in one batch
    ++d_in_cpi;
    ++d_pulse;
    if (d_in_cpi == d_cfg.npulses)
        finish_cpi(in, out, r);
}

void pulse_framer_core::begin_cpi(std::uint64_t gs)
{
    d_current = framer_cpi{};
    d_current.first_pulse = d_pulse;
    d_current.pulse_offset =
        static_cast<std::int64_t>(gs) - static_cast<std::int64_t>(d_cfg.gate_start);
    d_current.has_time = d_has_time;
    if (d_has_time)
        d_current.rx_time =
            add_samples(d_time,
                        d_current.pulse_offset - static_cast<std::int64_t>(d_time_offset),
                        d_cfg.fs);
}

void pulse_framer_core::finish_cpi(const cfloat* in, cfloat* out, framer_result& r)
{
    const std::uint64_t cpi_len = d_cfg.npulses * d_cfg.nrange;
    flush_gates(in);
    d_copy->copy(out + r.cpis.size() * cpi_len, d_copy->staging(), cpi_len);
    d_current.index = d_index++;
    r.cpis.push_back(d_current);
    ++d_emitted;
    d_in_cpi = 0;
    d_batch.clear(); // gates of a discarded or finished CPI
}

} // namespace gpuradar::kernels
