/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "backend_select.h"
#include "cpi_tag.h"
#include "pulse_framer_impl.h"
#include "uhd_time.h"
#include <gnuradio/io_signature.h>
#include <algorithm>
#include <cmath>
#include <limits>

namespace gr {
namespace gpuradar {

pulse_framer::sptr pulse_framer::make(double pri_samples,
                                      unsigned int gate_start,
                                      unsigned int nrange,
                                      unsigned int npulses,
                                      double fs,
                                      double fc,
                                      const std::string& trigger,
                                      const std::string& trigger_tag,
                                      double threshold,
                                      const std::string& backend,
                                      int device,
                                      const std::string& input_type,
                                      const std::string& dc_removal,
                                      double dc_time_constant,
                                      bool iq_correction,
                                      const std::string& leakage,
                                      double leakage_alpha,
                                      unsigned int leakage_gate)
{
    kernels::framer_config c;
    c.pri_samples = pri_samples;
    c.gate_start = gate_start;
    c.nrange = nrange;
    c.npulses = npulses;
    c.fs = fs;
    c.fc = fc;
    c.trigger = kernels::parse_trigger_mode(trigger, "pulse_framer");
    c.threshold = threshold;
    c.input = kernels::parse_sample_format(input_type, "pulse_framer", "input_type");
    if (c.trigger == kernels::trigger_mode::tag && trigger_tag.empty())
        throw std::invalid_argument("gpuradar::pulse_framer: trigger_tag must be a tag "
                                    "key with trigger=tag (got '')");
    // The core validates the rest (std::invalid_argument naming the parameter, the CPI
    // and its input samples within the buffer limits) before the block allocates
    // anything, io_signatures included.
    kernels::pulse_framer::validate(c);
    kernels::front_end_correction_config fec;
    fec.npulses = npulses;
    fec.nrange = nrange;
    fec.dc = kernels::parse_dc_removal(dc_removal, "pulse_framer");
    fec.dc_time_constant = dc_time_constant;
    fec.iq = iq_correction;
    fec.leakage = kernels::parse_leakage(leakage, "pulse_framer");
    fec.leakage_alpha = leakage_alpha;
    fec.leakage_gate = leakage_gate;
    fec.validate("pulse_framer");
    check_item_size("pulse_framer", { { "nrange", nrange } }, sizeof(gr_complex));
    // The threshold trigger scans samples on the host.
    const bool host_only = c.trigger == kernels::trigger_mode::threshold;
    if (host_only && backend == "cuda")
        throw std::invalid_argument("gpuradar::pulse_framer: backend must be cpu or auto "
                                    "with trigger=threshold (got 'cuda')");
    const auto b =
        select_backend(host_only && backend == "auto" ? "cpu" : backend, "pulse_framer");
    return make_block_on_device<pulse_framer_impl>(
        b, device, "pulse_framer", c, trigger_tag, b, device, fec);
}

namespace {
// The framer's copy, with the receiver corrections it applies when any is on;
// `corrections_out`: them, owned by the copy.
std::unique_ptr<kernels::framer_copy>
make_copy(const kernels::framer_config& cfg,
          kernels::backend backend,
          kernels::stream_ref stream,
          const kernels::front_end_correction_config& corrections,
          kernels::front_end_correction*& corrections_out)
{
    std::unique_ptr<kernels::front_end_correction> corr;
    if (corrections.active())
        corr = kernels::front_end_correction::make(
            backend, corrections, stream, "pulse_framer");
    corrections_out = corr.get();
    return kernels::framer_copy::make(backend,
                                      std::size_t(cfg.npulses) * cfg.nrange,
                                      stream,
                                      cfg.input,
                                      std::move(corr));
}
} // namespace

pulse_framer_impl::pulse_framer_impl(
    const kernels::framer_config& cfg,
    const std::string& trigger_tag,
    kernels::backend backend,
    int device,
    const kernels::front_end_correction_config& corrections)
    : gr::block("pulse_framer",
                stream_signature(backend, kernels::sample_bytes(cfg.input)),
                stream_signature(backend, sizeof(gr_complex) * cfg.nrange)),
      gpu_stream_owner(backend, "pulse_framer", kernels::stream_priority::normal, device),
      d_backend(backend),
      d_core(cfg, make_copy(cfg, backend, stream(), corrections, d_correction)),
      d_rx_time_key(pmt::intern("rx_time")),
      d_trigger_key(pmt::intern(trigger_tag.empty() ? "trigger" : trigger_tag))
{
    // Whole CPIs only (a partial one may still be discarded). One output item per PRI of
    // input: GNU Radio then sizes the input buffer for at least two CPIs of samples, so
    // that the samples a gate needs (< 2 PRIs) always fit.
    set_output_multiple(static_cast<int>(cfg.npulses));
    // An integer ratio: GNU Radio turns a double rate into a fraction whose denominator
    // (about 2^52 for 1/1000) sizes single-mapped device buffers as a multiple of it. The
    // rate only guides buffer sizing, so one pulse per floor(PRI) samples is exact
    // enough.
    set_relative_rate(1, static_cast<std::uint64_t>(std::floor(cfg.pri_samples)));
    // Input tags (rx_time, triggers) describe samples, not pulses; the cpi tag is made
    // here.
    set_tag_propagation_policy(TPP_DONT);
}

void pulse_framer_impl::forecast(int, gr_vector_int& ninput_items_required)
{
    const std::uint64_t need = d_core.samples_needed();
    ninput_items_required[0] =
        static_cast<int>(std::min<std::uint64_t>(need, std::numeric_limits<int>::max()));
}

pmt::pmt_t pulse_framer_impl::cpi_dict(const kernels::framer_cpi& c,
                                       const kernels::iq_estimate* iq) const
{
    const auto& cfg = d_core.config();
    pmt::pmt_t d = make_cpi_dict(c.index, cfg.npulses, cfg.nrange);
    d = pmt::dict_add(d, pmt::intern("fs"), pmt::from_double(cfg.fs));
    d = pmt::dict_add(d, pmt::intern("prf"), pmt::from_double(d_core.prf()));
    d = pmt::dict_add(d, pmt::intern("fc"), pmt::from_double(cfg.fc));
    d = pmt::dict_add(d, pmt::intern("r0"), pmt::from_double(d_core.r0()));
    d = pmt::dict_add(d, pmt::intern("channels"), pmt::from_uint64(1));
    d = pmt::dict_add(d, pmt::intern("pulse"), pmt::from_uint64(c.first_pulse));
    d = pmt::dict_add(d, pmt::intern("nonfinite_samples"), pmt::from_uint64(c.nonfinite));
    d = pmt::dict_add(d, pmt::intern("clamped_samples"), pmt::from_uint64(c.clamped));
    d = pmt::dict_add(d, pmt::intern("saturated_samples"), pmt::from_uint64(c.saturated));
    d = pmt::dict_add(d, pmt::intern("clock_slip_samples"), pmt::from_long(c.clock_slip));
    d = pmt::dict_add(d, pmt::intern("clock_offset_ppm"), pmt::from_double(c.clock_ppm));
    if (c.has_time)
        d = pmt::dict_add(d, d_rx_time_key, uhd_time_pmt(c.rx_time));
    if (iq) {
        // The estimate whether or not it was applied (0 / 0 when there was none).
        d = pmt::dict_add(d, pmt::intern("iq_gain_db"), pmt::from_double(iq->gain_db));
        d = pmt::dict_add(
            d, pmt::intern("iq_phase_deg"), pmt::from_double(iq->phase_deg));
        d = pmt::dict_add(d, pmt::intern("iq_corrected"), pmt::from_bool(iq->corrected));
    }
    return d;
}

namespace {
// A broken time source may stamp every buffer: the first few, then the 2^n-th.
bool worth_logging(std::uint64_t nth) { return nth <= 8 || (nth & (nth - 1)) == 0; }
} // namespace

void pulse_framer_impl::log_events(const kernels::framer_result& r)
{
    for (const auto& d : r.drops)
        d_logger->warn(
            "{}: CPI {} discarded after {} of {} pulses ({} CPIs dropped so far)",
            d.reason,
            d.index,
            d.pulses,
            d_core.config().npulses,
            d_core.dropped_cpis());
    std::uint64_t nth = d_core.rejected_time_jumps() - r.rejected.size();
    for (const auto& j : r.rejected)
        if (worth_logging(++nth))
            d_logger->warn("{} ({} rx_time tags rejected so far; further ones are logged "
                           "at powers of two)",
                           j.reason,
                           nth);
    d_rejected = d_core.rejected_time_jumps();
}

void pulse_framer_impl::log_nonfinite(const kernels::framer_result& r)
{
    for (const auto& c : r.cpis) {
        if (c.nonfinite == 0 || !worth_logging(++d_nonfinite_cpis))
            continue;
        d_logger->warn("CPI {}: {} samples with a NaN or infinite part written as 0 ({} "
                       "such samples in {} CPIs so far; further CPIs with them are "
                       "logged at powers of two)",
                       c.index,
                       c.nonfinite,
                       d_core.nonfinite_samples(),
                       d_nonfinite_cpis);
    }
    d_nonfinite = d_core.nonfinite_samples();
    for (const auto& c : r.cpis) {
        if ((c.clamped == 0 && c.saturated == 0) || !worth_logging(++d_clipped_cpis))
            continue;
        d_logger->warn(
            "CPI {}: {} samples clamped to +-{} and {} at +-full scale ({} and "
            "{} so far, in {} CPIs; further CPIs with them are logged at "
            "powers of two)",
            c.index,
            c.clamped,
            kernels::framer_clamp_level,
            c.saturated,
            d_core.clamped_samples(),
            d_core.saturated_samples(),
            d_clipped_cpis);
    }
    d_clamped = d_core.clamped_samples();
    d_saturated = d_core.saturated_samples();
    for (const auto& c : r.cpis) {
        // The schedule moves a sample at a time: each move is news, the 2^n-th logged.
        if (c.clock_slip == d_logged_slip)
            continue;
        d_logged_slip = c.clock_slip;
        if (worth_logging(++d_slip_moves))
            d_logger->info("CPI {}: pulse schedule moved to {} samples from the nominal "
                           "one to follow the sample clock, {:.3f} ppm against rx_time "
                           "({} moves so far; further ones are logged at powers of two)",
                           c.index,
                           c.clock_slip,
                           c.clock_ppm,
                           d_slip_moves);
    }
    d_clock_ppm = d_core.clock_offset_ppm();
}

// process() corrected each CPI as it copied it out (framer_copy::copy_finite, on the
// framer's stream); here the I/Q estimates are collected, logged and kept for the tags.
void pulse_framer_impl::correct(const kernels::framer_result& r)
{
    if (!d_correction || r.cpis.empty())
        return;
    if (!d_correction->config().iq)
        return;
    d_iq.resize(r.cpis.size());
    d_correction->take_estimates(d_iq.data(), d_iq.size()); // waits (CUDA)
    for (std::size_t i = 0; i < r.cpis.size(); ++i) {
        if (d_iq[i].corrected)
            continue;
        const std::uint64_t nth = ++d_iq_uncorrected;
        if (!worth_logging(nth))
            continue;
        if (d_iq[i].degenerate)
            d_logger->warn("CPI {}: no I/Q imbalance estimate (the CPI's I and Q have no "
                           "power, are not finite or are one rail): CPI left uncorrected "
                           "({} such CPIs so far; further ones are logged at powers of "
                           "two)",
                           r.cpis[i].index,
                           nth);
        else
            d_logger->warn(
                "CPI {}: I/Q imbalance estimate {:.3g} dB / {:.3g} deg is "
                "beyond {} dB / {} deg (not circular: a real-valued or "
                "non-rotating signal dominates): CPI left uncorrected ({} such "
                "CPIs so far; further ones are logged at powers of two)",
                r.cpis[i].index,
                d_iq[i].gain_db,
                d_iq[i].phase_deg,
                kernels::iq_max_gain_db,
                kernels::iq_max_phase_deg,
                nth);
    }
}

void pulse_framer_impl::set_threshold(double threshold)
{
    std::lock_guard<std::mutex> lock(d_core_mutex);
    d_core.set_threshold(threshold);
}

int pulse_framer_impl::general_work(int noutput_items,
                                    gr_vector_int& ninput_items,
                                    gr_vector_const_void_star& input_items,
                                    gr_vector_void_star& output_items)
{
    begin_work();                    // before any kernel touches the buffers
    const void* in = input_items[0]; // in config().input's format
    auto* out = static_cast<kernels::cfloat*>(output_items[0]);
    const auto& cfg = d_core.config();
    const std::uint64_t offset = nitems_read(0);
    const auto n = static_cast<std::size_t>(ninput_items[0]);

    d_tags.clear();
    d_events.clear();
    get_tags_in_range(d_tags, 0, offset, offset + n);
    std::stable_sort(
        d_tags.begin(), d_tags.end(), [](const gr::tag_t& a, const gr::tag_t& b) {
            return a.offset < b.offset;
        });
    for (const auto& t : d_tags) {
        kernels::framer_event e;
        e.offset = t.offset;
        if (pmt::eqv(t.key, d_rx_time_key)) {
            // UHD format: (uint64 full seconds, double fractional seconds).
            const pmt::pmt_t& v = t.value;
            const bool tuple2 = pmt::is_tuple(v) && pmt::length(v) == 2;
            const pmt::pmt_t s = tuple2 ? pmt::tuple_ref(v, 0) : pmt::PMT_NIL;
            const pmt::pmt_t f = tuple2 ? pmt::tuple_ref(v, 1) : pmt::PMT_NIL;
            if (!tuple2 || !(pmt::is_uint64(s) || pmt::is_integer(s)) ||
                !(pmt::is_real(f) || pmt::is_integer(f))) {
                d_logger->warn(
                    "rx_time tag at sample {} is not (uint64 secs, double frac): "
                    "ignored",
                    t.offset);
                continue;
            }
            e.type = kernels::framer_event::kind::rx_time;
            e.time.secs = pmt::is_uint64(s) ? pmt::to_uint64(s)
                                            : static_cast<std::uint64_t>(pmt::to_long(s));
            e.time.frac = pmt::to_double(f);
            d_events.push_back(e);
        } else if (pmt::eqv(t.key, d_trigger_key)) {
            e.type = kernels::framer_event::kind::trigger;
            d_events.push_back(e);
        }
    }

    const std::size_t max_cpis = static_cast<std::size_t>(noutput_items) / cfg.npulses;
    const auto r = [&] {
        std::lock_guard<std::mutex> lock(d_core_mutex); // set_threshold between calls
        return d_core.process(in, offset, n, d_events, out, max_cpis);
    }();
    correct(r);

    const std::uint64_t w0 = nitems_written(0);
    for (std::size_t i = 0; i < r.cpis.size(); ++i)
        add_item_tag(
            0,
            w0 + i * cfg.npulses,
            cpi_tag_key(),
            cpi_dict(r.cpis[i],
                     d_correction && d_correction->config().iq ? &d_iq[i] : nullptr));
    d_dropped = d_core.dropped_cpis();
    d_emitted = d_core.emitted_cpis();
    d_lost = d_core.lost_samples();
    log_events(r);
    log_nonfinite(r);

    // A stream without the trigger (a file without rx_time tags, say) gives no output at
    // all: say so once, after a second of samples, instead of staying silent.
    if (!d_core.anchored() && !d_warned_no_anchor &&
        static_cast<double>(offset + r.consumed) >= cfg.fs) {
        d_warned_no_anchor = true;
        d_logger->warn("no {} trigger in the first {} samples: no pulses framed yet (a "
                       "recording without rx_time tags needs trigger=free or tag)",
                       kernels::to_string(cfg.trigger),
                       offset + r.consumed);
    }
    const int produced = static_cast<int>(r.cpis.size() * cfg.npulses);
    finish_work(produced); // the device copies read `in`, which GNU Radio frees on return
    consume_each(static_cast<int>(r.consumed));
    return produced;
}

} // namespace gpuradar
} // namespace gr
