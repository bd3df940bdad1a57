/* The pulse framer: which input samples form which pulse of which CPI (no GNU Radio
 * here; the pulse_framer block uses it). Index arithmetic on the host; the samples are
 * moved by a framer_copy (host memcpy, or device copies when the stream is already on
 * the GPU). */
#ifndef INCLUDED_GPURADAR_KERNELS_PULSE_FRAMER_H
#define INCLUDED_GPURADAR_KERNELS_PULSE_FRAMER_H

#include <gpuradar/kernels/common/backend.h>
#include <gpuradar/kernels/pulse_doppler/framer_copy.h>
#include <gpuradar/kernels/waveform/pulse_timing.h>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace gpuradar::kernels {

/*!
 * \brief How the framer finds pulse 0.
 * - rx_time: at the first `rx_time` tag (UHD stamps the first sample of a stream);
 * - tag:     at a named trigger tag;
 * - threshold: at the first rising edge of |x|^2 above a level (transmit leakage): a
 *   sample above the level after one at or below it;
 * - free:    at the first sample of the stream.
 */
enum class trigger_mode { rx_time, tag, threshold, free };

//! "rx_time" | "tag" | "threshold" | "free"; anything else throws std::invalid_argument
//! "gpuradar::<stage>: trigger must be one of rx_time, tag, threshold, free (got ...)".
trigger_mode parse_trigger_mode(const std::string& name,
                                const char* stage = "pulse_framer");
const char* to_string(trigger_mode m);

//! The framer's parameters (pulse_framer block, CONVENTIONS.md, Streams and the CPI).
struct framer_config {
    double pri_samples = 0;       //!< PRI in samples (fractional allowed), pri = fs / prf
    std::uint64_t gate_start = 0; //!< samples from pulse start to the first gate sample
    std::uint64_t nrange = 0;     //!< gate length = samples per pulse item
    std::uint64_t npulses = 0;    //!< pulses per CPI (>= 1)
    double fs = 0;                //!< sample rate (Hz, > 0)
    double fc = 0;                //!< centre frequency (Hz, > 0)
    trigger_mode trigger = trigger_mode::rx_time;
    double threshold = 0; //!< |x|^2 level of the threshold trigger (> 0 there)
    //! Format of process()'s input samples; sc16 / sc8 are scaled to 1.0 = full scale
    //! (sample_convert.h) as the gates are copied, and the threshold compares the scaled
    //! |x|^2. A framer_copy passed to the constructor must have been made for it.
    sample_format input = sample_format::fc32;
};

//! A stream event the framer reacts to, at an absolute input sample offset.
struct framer_event {
    enum class kind { rx_time, trigger };
    std::uint64_t offset = 0;
    kind type = kind::rx_time;
    time_spec time; //!< for rx_time
};

//! One CPI written by the framer.
struct framer_cpi {
    std::uint64_t index = 0;       //!< CPI sequence number (a discarded CPI uses one too)
    std::uint64_t first_pulse = 0; //!< pulse number of its first pulse since the anchor
    std::int64_t pulse_offset = 0; //!< absolute input sample where that pulse starts
    bool has_time = false;         //!< an rx_time reference exists
    time_spec rx_time;             //!< time of that pulse start (when has_time)
    std::uint64_t nonfinite = 0;   //!< samples with a NaN or infinite part, written as 0
    std::uint64_t clamped = 0;     //!< fc32: samples with a part clamped (framer_copy.h)
    std::uint64_t saturated = 0;   //!< sc16 / sc8: samples with a part at +-full scale
    //! Whole samples the CPI's pulse schedule was moved by to follow the sample clock's
    //! drift against rx_time (pulse_framer: clock drift); 0 without drift or rx_time.
    std::int64_t clock_slip = 0;
    //! The receive sample clock's offset against rx_time measured so far (ppm).
    double clock_ppm = 0.0;
};

//! A partial CPI discarded because of a gap in the stream (or input skipped).
struct framer_drop {
    std::uint64_t index = 0;  //!< the CPI's sequence number
    std::uint64_t pulses = 0; //!< complete pulses it had
    std::uint64_t offset = 0; //!< absolute input offset of the event
    std::string reason;
};

//! An rx_time tag rejected as implausible (time going backwards, or a jump beyond
//! pulse_framer::max_gap_seconds): the framer kept its timeline.
struct framer_rejected_time {
    std::uint64_t offset = 0; //!< absolute input offset of the tag
    std::string reason;
};

struct framer_result {
    std::uint64_t consumed = 0;     //!< input samples consumed (from `offset`)
    std::vector<framer_cpi> cpis;   //!< CPIs written to `out`, in order
    std::vector<framer_drop> drops; //!< partial CPIs discarded in this call
    std::vector<framer_rejected_time> rejected; //!< rx_time tags ignored in this call
};

/*!
 * \brief The pulse framer's state machine: continuous samples in, whole CPIs of
 * npulses x nrange samples out (pulse-major), never across a gap.
 *
 * Gaps: each rx_time event is compared with the time expected from the last accepted
 * one and the sample count. Within time_tolerance_samples: continuous. Later by up to
 * max_gap_seconds (samples lost upstream, a UHD overflow, whole or not): a gap. Earlier,
 * later by more than max_gap_seconds, or not finite: implausible, so the tag is rejected
 * (counted in rejected_time_jumps(), reported in framer_result::rejected) and the framer
 * keeps its timeline and its time reference as if the tag were absent (nothing dropped,
 * nothing added to lost_samples()). On a gap a CPI already begun (a pulse or part of a
 * gate taken) is discarded and counted (dropped_cpis()). Then:
 * - rx_time and free modes keep the pulse schedule of the original anchor: the gap's
 *   length in samples, fraction included (sample_shift), is added to the samples lost,
 *   so sample i after the gap lies at (samples since the anchor) + lost on the
 *   anchor's timeline; pulse k still starts at floor(k * pri - lost + 1/2) samples after
 *   the anchor (rounded once, pulse_timing), pulses inside the gap are skipped, pulse
 *   numbers and CPI indices run on, and a new CPI starts at the first gate wholly after
 *   the gap;
 * - tag and threshold modes wait for the next trigger (tag, or rising edge).
 * Trigger tags and threshold edges after the anchor are ignored until then.
 *
 * Non-finite samples: a sample of a CPI with a NaN or infinite real or imaginary part is
 * written as 0 (framer_copy::copy_finite) and counted in the CPI's framer_cpi::nonfinite
 * and in nonfinite_samples(); the CPI is emitted as usual. In the same pass fc32 parts
 * beyond +-framer_clamp_level are clamped (framer_cpi::clamped, clamped_samples()) and
 * sc16 / sc8 samples at +-full scale counted (framer_cpi::saturated,
 * saturated_samples()), so that one huge sample cannot blank its CPI. Samples outside
 * the gates are never looked at. With a CUDA framer_copy, process() waits for the counts
 * of the CPIs it emitted (queued behind their copies) before it returns.
 *
 * Clock drift: a receive sample clock off by e (ppm 1e-6) against the time of the rx_time
 * tags (a common time reference, a free-running sample clock) makes the samples between
 * two tags (1 + e) times what the time says. The framer takes an rx_time tag within
 * time_tolerance_samples + max_clock_drift_ppm 1e-6 x (samples since the last tag) of
 * the sample count as continuous, and measures the drift from the first such tag since
 * the anchor (or the last gap): slip = samples counted - (time elapsed) fs, so far
 * (clock_slip_samples(), clock_offset_ppm() = slip over the elapsed time). Before each
 * CPI the pulse schedule moves by round(slip) whole samples (framer_cpi::clock_slip),
 * so that the CPIs stay on the pulses however long the stream runs; a CPI never changes
 * its schedule inside. A move that would put the next gate before samples already
 * consumed (gates with no sample between them) waits for the next CPI.
 *
 * Feeding: call process() with consecutive chunks (offset = consumed so far) and the
 * events inside each chunk, sorted by offset. It consumes up to the last sample it no
 * longer needs; samples it leaves, and their events, are passed again next time
 * (re-passing an event already seen is harmless). samples_needed() says how many samples
 * from the consumed point the next call needs to make progress.
 */
class pulse_framer
{
public:
    //! |expected - actual| rx_time within this many samples counts as continuous: UHD
    //! stamps are sample-exact, so anything near half a sample is a real jump.
    static constexpr double time_tolerance_samples = 0.25;
    //! Longest rx_time gap taken as samples lost (s); a longer forward jump is a broken
    //! time stamp, not an overflow. Gaps are also capped at max_gap_samples.
    static constexpr double max_gap_seconds = 3600.0;
    static constexpr double max_gap_samples = 9007199254740992.0; // 2^53
    //! A gap's length is kept to this step (2^-16 samples): far above the rounding of
    //! the double time stamps, far below anything that matters, so that a gap of exactly
    //! n or n + 1/2 samples stays exact and cannot move a pulse of a half-sample PRI
    //! across its rounding boundary.
    static constexpr double gap_resolution_samples = 1.0 / 65536.0;
    //! rx_time drift taken as the sample clock's (ppm of the samples between two tags):
    //! a receiver's crystal (2 to 50 ppm); a lost buffer (hundreds to thousands of
    //! samples between tags up to millions of samples apart) stays a gap.
    static constexpr double max_clock_drift_ppm = 50.0;

    /*!
     * Validates (std::invalid_argument "gpuradar::pulse_framer: <param> ...").
     * \param copy how samples move: null = host memcpy; a CUDA framer_copy makes in and
     *             out of process() device pointers (the threshold trigger, which reads
     *             samples on the host, then cannot be used).
     */
    explicit pulse_framer(const framer_config& cfg,
                          std::unique_ptr<framer_copy> copy = nullptr);

    //! The constructor's checks, allocating nothing: the parameters, and the CPI
    //! (npulses * nrange) and one CPI of input samples (npulses * ceil(pri)) within
    //! max_buffer_elements and max_buffer_bytes (buffer_size.h).
    static void validate(const framer_config& cfg);

    /*!
     * \param in       samples in[0 .. n) at absolute offsets offset .. offset + n, in
     *                 config().input's format (cfloat for fc32)
     * \param offset   absolute offset of in[0] (equal to the samples consumed so far)
     * \param events   events with offsets in [offset, offset + n), sorted by offset
     * \param out      room for max_cpis CPIs of npulses * nrange samples
     */
    framer_result process(const void* in,
                          std::uint64_t offset,
                          std::size_t n,
                          const std::vector<framer_event>& events,
                          cfloat* out,
                          std::size_t max_cpis);

    std::uint64_t samples_needed() const;
    //! The threshold trigger's level from the next process() on; checked as the
    //! constructor checks it (throws std::invalid_argument and keeps the old level).
    void set_threshold(double level);
    bool anchored() const { return d_anchored; }
    std::uint64_t dropped_cpis() const { return d_dropped; }
    std::uint64_t emitted_cpis() const { return d_emitted; }
    //! Samples reported lost by rx_time gaps (each gap rounded to whole samples).
    std::uint64_t lost_samples() const { return d_lost; }
    //! rx_time tags rejected as implausible jumps (backwards, or > max_gap_seconds).
    std::uint64_t rejected_time_jumps() const { return d_rejected; }
    //! Samples of emitted CPIs written as 0 because a part was NaN or infinite.
    std::uint64_t nonfinite_samples() const { return d_nonfinite; }
    //! fc32: samples of emitted CPIs with a part clamped to +-framer_clamp_level.
    std::uint64_t clamped_samples() const { return d_clamped; }
    //! sc16 / sc8: samples of emitted CPIs with a part at +-full scale (saturated).
    std::uint64_t saturated_samples() const { return d_saturated; }
    //! Receive samples gained on the rx_time timeline since the anchor, as measured at
    //! the last continuous rx_time tag (fractional; negative: a slow sample clock).
    double clock_slip_samples() const { return d_drift; }
    //! The sample clock's offset against rx_time measured since the drift reference
    //! (ppm; 0 until two rx_time tags have been seen).
    double clock_offset_ppm() const { return d_drift_ppm; }
    //! Whole samples the pulse schedule is moved by now (round(clock_slip_samples()) at
    //! the last CPI start).
    std::int64_t schedule_slip() const { return d_slip; }
    const pulse_timing& timing() const { return d_timing; }
    const framer_config& config() const { return d_cfg; }
    double prf() const { return d_cfg.fs / d_cfg.pri_samples; }
    //! Range of gate sample 0: gate_start * c / (2 fs) (m).
    double r0() const;

private:
    enum class time_check { continuous, gap, rejected };
    // Classifies an rx_time event against the time reference; a gap's length (samples)
    // goes to `lost` and d_lost, a rejection to r.rejected; why describes either.
    time_check
    check_time(const framer_event& e, double& lost, std::string& why, framer_result& r);
    double max_gap() const; // samples
    void anchor_at(std::uint64_t abs_offset);
    std::uint64_t gate_abs(std::uint64_t k) const; // absolute offset of pulse k's gate
    void drop_partial(std::uint64_t at, const std::string& why, framer_result& r);
    bool scan_rising(const void* in,
                     std::uint64_t offset,
                     std::uint64_t from,
                     std::uint64_t to,
                     std::uint64_t& found);
    // The steps of process(): pos is the absolute offset consumed so far, ei the next
    // event. Not anchored: anchors on the next trigger; false when the input ends first.
    bool seek_anchor(const void* in,
                     std::uint64_t offset,
                     std::uint64_t end,
                     const std::vector<framer_event>& events,
                     std::size_t& ei,
                     std::uint64_t& pos,
                     framer_result& r);
    // An event before the end of the gate at gs: an rx_time jump drops the partial CPI
    // and moves or drops the anchor; triggers are ignored.
    void on_event_while_anchored(const framer_event& e,
                                 std::uint64_t gs,
                                 std::uint64_t& pos,
                                 framer_result& r);
    // The next gate starts before pos (input skipped): on to the first whole gate.
    void skip_consumed_gate(std::uint64_t pos, framer_result& r);
    // First pulse whose gate starts at or after absolute offset abs_offset.
    std::uint64_t first_pulse_from(std::uint64_t abs_offset) const;
    // The gate at gs into the current CPI; the CPI goes out when complete.
    void take_gate(const void* in,
                   std::uint64_t offset,
                   std::uint64_t gs,
                   cfloat* out,
                   framer_result& r);
    void begin_cpi(std::uint64_t gs);
    // Drift: the reference (the anchor's or a gap's rx_time tag), a continuous tag's
    // measurement against it, and the schedule's move to it before a CPI starts.
    void set_drift_reference(const framer_event& e);
    void measure_drift(const framer_event& e);
    void follow_drift(std::uint64_t pos);
    void finish_cpi(const void* in, cfloat* out, framer_result& r);
    // The sample counts (non-finite, clamped, saturated) of the CPIs in r (waits for
    // them on CUDA).
    void collect_counts(framer_result& r);

    framer_config d_cfg;
    pulse_timing d_timing;
    std::unique_ptr<framer_copy> d_copy; // moves gates into its staging CPI, CPIs out
    std::vector<std::uint64_t> d_batch;  // gates taken, not yet copied: offsets in `in`
    std::uint64_t d_batch_slot = 0;      // pulse slot of d_batch's first gate
    void flush_gates(const void* in);
    bool d_anchored = false;
    std::uint64_t d_anchor = 0; // absolute input offset of the anchor (pulse 0)
    sample_shift d_gap_samples; // samples lost in gaps since the anchor
    std::uint64_t d_pulse = 0;  // next pulse number since the anchor
    std::uint64_t d_in_cpi = 0; // complete pulses of the current CPI
    framer_cpi d_current;       // the current CPI's description
    std::uint64_t d_index = 0;  // next CPI sequence number
    std::uint64_t d_pos = 0;    // consumed so far (absolute)
    bool d_has_time = false;
    std::uint64_t d_time_offset = 0; // the last rx_time reference
    time_spec d_time;
    int d_prev_level = -1; // threshold mode: last sample above (1), at/below (0), unknown
    std::uint64_t d_dropped = 0, d_emitted = 0, d_lost = 0, d_rejected = 0;
    std::uint64_t d_nonfinite = 0, d_clamped = 0, d_saturated = 0;
    bool d_drift_ref = false;         // a drift reference exists
    std::uint64_t d_drift_offset = 0; // its sample offset
    time_spec d_drift_time;           // its time
    double d_drift_base = 0;          // slip at the reference (samples)
    double d_drift = 0;               // slip measured at the last continuous tag
    double d_drift_ppm = 0;
    std::int64_t d_slip = 0; // whole samples added to every pulse start now
    std::vector<framer_sample_counts> d_counts; // collect_counts()'s, reused
};

} // namespace gpuradar::kernels

#endif
