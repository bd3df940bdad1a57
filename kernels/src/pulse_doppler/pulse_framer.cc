/* The pulse framer's state machine (see pulse_framer.h). */
#include "common/param_check.h"
#include <gpuradar/kernels/common/buffer_size.h>
#include <gpuradar/kernels/pulse_doppler/pulse_framer.h>
#include <algorithm>
#include <cmath>
#include <sstream>

namespace gpuradar::kernels {

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
    pulse_timing(c.pri_samples, c.gate_start, c.nrange, stage); // pri, gate, nrange
    check_buffer_size(stage,
                      { { "npulses", c.npulses }, { "nrange", c.nrange } },
                      sizeof(cfloat),
                      "the CPI");
    // GNU Radio buffers at least two CPIs of input samples (pri <= 2^40 here).
    check_buffer_size(
        stage,
        { { "npulses", c.npulses },
          { "ceil(pri)", static_cast<std::size_t>(std::ceil(c.pri_samples)) } },
        sizeof(cfloat),
        "the input samples of one CPI");
    return c;
}
} // namespace

void pulse_framer::validate(const framer_config& cfg) { checked(cfg); }

pulse_framer::pulse_framer(const framer_config& cfg, std::unique_ptr<framer_copy> copy)
    : d_cfg(checked(cfg)),
      d_timing(cfg.pri_samples, cfg.gate_start, cfg.nrange, "pulse_framer"),
      d_copy(copy ? std::move(copy)
                  : framer_copy::make(backend::cpu,
                                      std::size_t(cfg.npulses) * cfg.nrange,
                                      stream_ref(),
                                      cfg.input))
{
    d_batch.reserve(cfg.npulses);
    if (cfg.trigger == trigger_mode::free)
        anchor_at(0);
}

void pulse_framer::set_threshold(double level)
{
    framer_config c = d_cfg;
    c.threshold = level;
    d_cfg = checked(c);
}

double pulse_framer::r0() const
{
    return static_cast<double>(d_cfg.gate_start) * pulse_timing::speed_of_light /
           (2.0 * d_cfg.fs);
}

void pulse_framer::anchor_at(std::uint64_t abs_offset)
{
    d_anchored = true;
    d_anchor = abs_offset;
    d_gap_samples = sample_shift{};
    d_drift_ref = false;
    d_drift_base = d_drift = 0;
    d_slip = 0;
    d_pulse = 0;
    d_in_cpi = 0;
    d_batch.clear(); // gates of a discarded or finished CPI
}

std::uint64_t pulse_framer::gate_abs(std::uint64_t k) const
{
    // Pulses at or after the last gap start after it, so the sum is a valid offset.
    return static_cast<std::uint64_t>(static_cast<std::int64_t>(d_anchor) + d_slip +
                                      d_timing.pulse_start(k, d_gap_samples)) +
           d_cfg.gate_start;
}

std::uint64_t pulse_framer::samples_needed() const
{
    if (!d_anchored)
        return 1;
    const std::uint64_t end = gate_abs(d_pulse) + d_cfg.nrange;
    return end > d_pos ? end - d_pos : 1;
}

double pulse_framer::max_gap() const
{
    return std::min(max_gap_seconds * d_cfg.fs, max_gap_samples);
}

pulse_framer::time_check pulse_framer::check_time(const framer_event& e,
                                                  double& lost,
                                                  std::string& why,
                                                  framer_result& r)
{
    lost = 0;
    if (!d_has_time || e.offset == d_time_offset) {
        d_has_time = true;
        d_time_offset = e.offset;
        d_time = e.time;
        measure_drift(e);
        return time_check::continuous;
    }
    const time_spec expected = add_samples(
        d_time, static_cast<std::int64_t>(e.offset - d_time_offset), d_cfg.fs);
    const double delta = samples_between(expected, e.time, d_cfg.fs);
    // A sample clock off by up to max_clock_drift_ppm moves the tags this much.
    const double tolerance =
        time_tolerance_samples +
        max_clock_drift_ppm * 1e-6 *
            static_cast<double>(e.offset > d_time_offset ? e.offset - d_time_offset : 0);
    std::ostringstream s;
    if (!(std::fabs(delta) <= max_gap()) || delta < -tolerance) {
        // Kept out of the time reference: the samples are continuous by count.
        s << "rx_time at sample " << e.offset << " jumps by " << delta
          << " samples against the sample count (backwards, or beyond " << max_gap()
          << " samples = max_gap_seconds): implausible, tag ignored";
        why = s.str();
        r.rejected.push_back({ e.offset, why });
        ++d_rejected;
        return time_check::rejected;
    }
    d_time_offset = e.offset;
    d_time = e.time;
    if (std::fabs(delta) <= tolerance) {
        measure_drift(e);
        return time_check::continuous;
    }
    // The gap's tag is the new drift reference: the samples around it are not counted.
    d_drift_ref = false;
    measure_drift(e);
    lost = std::round(delta / gap_resolution_samples) * gap_resolution_samples;
    d_lost += static_cast<std::uint64_t>(std::llround(lost));
    s << "rx_time at sample " << e.offset << " is " << delta
      << " samples later than the sample count (samples lost upstream, overflow)";
    why = s.str();
    return time_check::gap;
}

void pulse_framer::set_drift_reference(const framer_event& e)
{
    d_drift_ref = true;
    d_drift_offset = e.offset;
    d_drift_time = e.time;
    d_drift_base = d_drift;
}

void pulse_framer::measure_drift(const framer_event& e)
{
    if (!d_anchored || !d_drift_ref) {
        set_drift_reference(e);
        return;
    }
    const double elapsed = samples_between(d_drift_time, e.time, d_cfg.fs);
    const double measured = static_cast<double>(e.offset - d_drift_offset) - elapsed;
    d_drift = d_drift_base + measured;
    if (elapsed > 0.0)
        d_drift_ppm = measured / elapsed * 1e6;
}

void pulse_framer::follow_drift(std::uint64_t pos)
{
    const auto want = static_cast<std::int64_t>(std::llround(d_drift));
    if (want == d_slip)
        return;
    const std::int64_t start = static_cast<std::int64_t>(d_anchor) + want +
                               d_timing.pulse_start(d_pulse, d_gap_samples) +
                               static_cast<std::int64_t>(d_cfg.gate_start);
    if (start >= static_cast<std::int64_t>(pos))
        d_slip = want; // else the samples are gone: the next CPI moves
}

void pulse_framer::flush_gates(const void* in)
{
    // One call for all the gates taken since the last flush (one kernel on the GPU).
    if (!d_batch.empty())
        d_copy->gather(
            d_copy->staging() + d_batch_slot * d_cfg.nrange, in, d_batch, d_cfg.nrange);
    d_batch.clear();
}

void pulse_framer::drop_partial(std::uint64_t at,
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

bool pulse_framer::scan_rising(const void* in,
                               std::uint64_t offset,
                               std::uint64_t from,
                               std::uint64_t to,
                               std::uint64_t& found)
{
    const float level = static_cast<float>(d_cfg.threshold);
    for (std::uint64_t i = from; i < to; ++i) {
        const int above =
            std::norm(sample_at(in, d_cfg.input, i - offset)) > level ? 1 : 0;
        const bool rising = above == 1 && d_prev_level == 0;
        d_prev_level = above;
        if (rising) {
            found = i;
            return true;
        }
    }
    return false;
}

framer_result pulse_framer::process(const void* in,
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
            if (!seek_anchor(in, offset, end, events, ei, pos, r))
                break;
            continue;
        }
        if (r.cpis.size() >= max_cpis)
            break;
        if (d_in_cpi == 0)
            follow_drift(pos);
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
    collect_counts(r);
    flush_gates(in); // `in` is gone after this call
    d_pos = pos;
    r.consumed = pos - offset;
    return r;
}

bool pulse_framer::seek_anchor(const void* in,
                               std::uint64_t offset,
                               std::uint64_t end,
                               const std::vector<framer_event>& events,
                               std::size_t& ei,
                               std::uint64_t& pos,
                               framer_result& r)
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
        double lost;
        std::string why;
        if (check_time(e, lost, why, r) == time_check::gap)
            d_prev_level = -1; // no edge across a gap
        if (d_cfg.trigger == trigger_mode::rx_time) {
            anchor_at(e.offset);
            set_drift_reference(e);
        }
    } else if (d_cfg.trigger == trigger_mode::tag) {
        anchor_at(e.offset);
    }
    return true;
}

void pulse_framer::on_event_while_anchored(const framer_event& e,
                                           std::uint64_t gs,
                                           std::uint64_t& pos,
                                           framer_result& r)
{
    if (e.type != framer_event::kind::rx_time)
        return; // triggers are ignored while anchored
    double lost;
    std::string why;
    if (check_time(e, lost, why, r) != time_check::gap)
        return; // continuous, or rejected: the timeline stays
    const bool begun = d_in_cpi > 0 || e.offset > gs;
    if (begun)
        drop_partial(e.offset, why, r);
    d_in_cpi = 0;
    d_batch.clear(); // gates of a discarded or finished CPI
    pos = std::max(pos, e.offset);
    const bool keeps_schedule =
        d_cfg.trigger == trigger_mode::rx_time || d_cfg.trigger == trigger_mode::free;
    if (keeps_schedule) {
        d_gap_samples = d_gap_samples.plus(lost);
        // First pulse whose gate lies wholly after the gap.
        d_pulse = std::max(d_pulse, first_pulse_from(e.offset));
    } else {
        d_anchored = false;
        d_prev_level = -1;
    }
}

void pulse_framer::skip_consumed_gate(std::uint64_t pos, framer_result& r)
{
    // Never build a CPI across samples a caller skipped.
    if (d_in_cpi > 0)
        drop_partial(pos, "input skipped before a gate was complete", r);
    d_pulse = std::max(d_pulse + 1, first_pulse_from(pos));
}

std::uint64_t pulse_framer::first_pulse_from(std::uint64_t abs_offset) const
{
    const auto rel = static_cast<std::int64_t>(abs_offset) -
                     static_cast<std::int64_t>(d_anchor + d_cfg.gate_start) - d_slip;
    return d_timing.first_pulse_at_or_after(rel, d_gap_samples);
}

void pulse_framer::take_gate(
    const void* in, std::uint64_t offset, std::uint64_t gs, cfloat* out, framer_result& r)
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

void pulse_framer::begin_cpi(std::uint64_t gs)
{
    d_current = framer_cpi{};
    d_current.first_pulse = d_pulse;
    d_current.pulse_offset =
        static_cast<std::int64_t>(gs) - static_cast<std::int64_t>(d_cfg.gate_start);
    d_current.has_time = d_has_time;
    d_current.clock_slip = d_slip;
    d_current.clock_ppm = d_drift_ppm;
    if (d_has_time)
        d_current.rx_time =
            add_samples(d_time,
                        d_current.pulse_offset - static_cast<std::int64_t>(d_time_offset),
                        d_cfg.fs);
}

void pulse_framer::finish_cpi(const void* in, cfloat* out, framer_result& r)
{
    const std::uint64_t cpi_len = d_cfg.npulses * d_cfg.nrange;
    flush_gates(in);
    const std::size_t slot = r.cpis.size();
    d_copy->copy_finite(out + slot * cpi_len, d_copy->staging(), cpi_len, slot);
    d_current.index = d_index++;
    r.cpis.push_back(d_current);
    ++d_emitted;
    d_in_cpi = 0;
    d_batch.clear(); // gates of a discarded or finished CPI
}

void pulse_framer::collect_counts(framer_result& r)
{
    if (r.cpis.empty())
        return;
    d_counts.resize(r.cpis.size());
    d_copy->take_counts(d_counts.data(), d_counts.size());
    for (std::size_t i = 0; i < r.cpis.size(); ++i) {
        r.cpis[i].nonfinite = d_counts[i].nonfinite;
        r.cpis[i].clamped = d_counts[i].clamped;
        r.cpis[i].saturated = d_counts[i].saturated;
        d_nonfinite += d_counts[i].nonfinite;
        d_clamped += d_counts[i].clamped;
        d_saturated += d_counts[i].saturated;
    }
}

} // namespace gpuradar::kernels
