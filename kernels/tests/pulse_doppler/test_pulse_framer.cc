/* pulse_timing (drift-free schedule), time_spec arithmetic and the pulse framer's state
 * machine: alignment under random PRI offsets, fractional PRIs over > 1e6 pulses,
 * injected overflows, triggers, bad input. References are exact integer formulas written
 * here, not the code under test. */
#include "invalid_argument_check.h"
#include <gpuradar/kernels/pulse_doppler/pulse_framer.h>
#include <gtest/gtest.h>
#include <algorithm>
#include <cmath>
#include <random>
#include <set>

namespace gpuradar::test {
namespace {

using namespace gpuradar::kernels;

// A sample that encodes its absolute (virtual) index exactly in two float components.
// 2^16: every part stays within the framer's clamp level (framer_clamp_level), so an
// encoded index passes unchanged.
constexpr std::uint64_t index_radix = 1u << 16;
cfloat encode(std::uint64_t i)
{
    return cfloat(static_cast<float>(i % index_radix),
                  static_cast<float>(i / index_radix));
}
std::uint64_t decode(cfloat x)
{
    return static_cast<std::uint64_t>(x.imag()) * index_radix +
           static_cast<std::uint64_t>(x.real());
}

TEST(PulseTiming, test_001_integer_pri_is_exact)
{
    const pulse_timing t(1000.0, 10, 500);
    for (std::uint64_t k : { 0ull, 1ull, 7ull, 123456789ull })
        EXPECT_EQ(t.pulse_start(k), k * 1000);
    EXPECT_EQ(t.gate_begin(3), 3010u);
}

TEST(PulseTiming, test_002_fractional_pri_no_drift_over_2e6_pulses)
{
    // PRI = 10000/3 (fs 10 MHz, PRF 3 kHz): the exact rational schedule is
    // floor(k * 10000/3 + 1/2) = (20000 k + 3) div 6. The double PRI differs from 10000/3
    // by < 2^-41; k * 10000/3 never lies within that of a half, so they must agree.
    {
        const pulse_timing t(10000.0 / 3.0, 0, 100);
        for (std::uint64_t k = 0; k <= 2000000; ++k)
            ASSERT_EQ(t.pulse_start(k), (20000 * k + 3) / 6) << "k=" << k;
    }
    // A binary fraction (exactly representable): 1000.375 = 8003/8.
    {
        const pulse_timing t(1000.375, 0, 100);
        for (std::uint64_t k = 0; k <= 2000000; ++k)
            ASSERT_EQ(t.pulse_start(k), (8003 * k + 4) / 8) << "k=" << k;
        EXPECT_EQ(t.pulse_start(1000000000000ull), (8003 * 1000000000000ull + 4) / 8);
    }
    // A PRI with no short rational form: against long double away from exact halves, and
    // spacing always floor or ceil of the PRI.
    {
        const double pri = 1234.56789012;
        const pulse_timing t(pri, 0, 1000);
        std::uint64_t prev = 0;
        for (std::uint64_t k = 0; k <= 2000000; ++k) {
            const long double x = static_cast<long double>(k) * pri + 0.5L;
            const std::uint64_t s = t.pulse_start(k);
            if (std::fabs(x - std::floor(x) - 0.5L) > 1e-6L)
                ASSERT_EQ(s, static_cast<std::uint64_t>(std::floor(x))) << "k=" << k;
            if (k > 0) {
                const std::uint64_t d = s - prev;
                ASSERT_TRUE(d == 1234u || d == 1235u) << "k=" << k << " spacing " << d;
            }
            prev = s;
        }
    }
}

TEST(PulseTiming, test_003_inverse_lookups)
{
    std::mt19937_64 rng(3);
    for (double pri : { 100.0, 333.3333333, 1000.375, 4097.9 }) {
        const pulse_timing t(pri, 0, 10);
        std::uniform_int_distribution<std::uint64_t> off(0, 100000000);
        for (int i = 0; i < 20000; ++i) {
            const std::uint64_t o = off(rng);
            const std::uint64_t k = t.first_pulse_at_or_after(o);
            ASSERT_GE(t.pulse_start(k), o);
            if (k > 0)
                ASSERT_LT(t.pulse_start(k - 1), o);
            const std::uint64_t c = t.pulse_containing(o);
            ASSERT_LE(t.pulse_start(c), o);
            ASSERT_GT(t.pulse_start(c + 1), o);
        }
        EXPECT_EQ(t.first_pulse_at_or_after(0), 0u);
        EXPECT_EQ(t.pulse_containing(0), 0u);
    }
}

TEST(PulseTiming, test_004_time_spec_arithmetic)
{
    time_spec t{ 100, 0.75 };
    auto u = add_samples(t, 500000, 1e6); // +0.5 s
    EXPECT_EQ(u.secs, 101u);
    EXPECT_NEAR(u.frac, 0.25, 1e-15);
    u = add_samples(t, -1000000, 1e6);
    EXPECT_EQ(u.secs, 99u);
    EXPECT_NEAR(u.frac, 0.75, 1e-15);
    u = add_samples(t, 3, 2.5e6 + 0.5); // non-integer rate
    EXPECT_EQ(u.secs, 100u);
    EXPECT_NEAR(u.frac, 0.75 + 3 / (2.5e6 + 0.5), 1e-15);
    // Long runs at an integer rate: whole seconds exact, fraction to double precision.
    u = add_samples(time_spec{ 0, 0.0 }, 123456789012345ll, 10e6);
    EXPECT_EQ(u.secs, 12345678u);
    EXPECT_NEAR(u.frac, 0.9012345, 1e-12);
    EXPECT_NEAR(samples_between(t, add_samples(t, 777, 1e6), 1e6), 777.0, 1e-6);
    EXPECT_NEAR(samples_between(add_samples(t, 777, 1e6), t, 1e6), -777.0, 1e-6);
}

TEST(PulseTiming, test_005_schedule_after_fractional_loss)
{
    // floor(k * pri - lost + 1/2) against long double, away from exact half-way ties,
    // and the inverse lookup against a linear scan.
    std::mt19937_64 rng(17);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    for (int trial = 0; trial < 200; ++trial) {
        const double pri = 50.0 + 400.0 * u(rng);
        const pulse_timing t(pri, 0, 10);
        const double lost = 5000.0 * u(rng);
        const sample_shift shift = sample_shift{}.plus(lost);
        EXPECT_NEAR(shift.value(), lost, 1e-9);
        for (std::uint64_t k = 0; k < 300; k += 7) {
            const long double v = (long double)k * pri - lost + 0.5L;
            const long double fl = std::floor(v);
            if (v - fl < 1e-9L || fl + 1 - v < 1e-9L)
                continue;
            ASSERT_EQ(t.pulse_start(k, shift), static_cast<std::int64_t>(fl))
                << "pri " << pri << " lost " << lost << " k " << k;
        }
        const auto offset = static_cast<std::int64_t>(20000.0 * u(rng)) - 5000;
        std::uint64_t k = 0;
        while (t.pulse_start(k, shift) < offset)
            ++k;
        ASSERT_EQ(t.first_pulse_at_or_after(offset, shift), k);
    }
    // Fractions add exactly and carry into the whole part.
    const sample_shift a = sample_shift{}.plus(0.75).plus(0.5);
    EXPECT_EQ(a.whole, 1u);
    EXPECT_EQ(a.frac, std::uint64_t(1) << (sample_shift::frac_bits - 2));
}

// ---------------------------------------------------------------- the framer core

framer_config config(double pri,
                     std::uint64_t gs,
                     std::uint64_t nr,
                     std::uint64_t np,
                     trigger_mode m = trigger_mode::rx_time)
{
    framer_config c;
    c.pri_samples = pri;
    c.gate_start = gs;
    c.nrange = nr;
    c.npulses = np;
    c.fs = 1e6;
    c.fc = 1e9;
    c.trigger = m;
    c.threshold = 100.0;
    return c;
}

struct stream {
    std::vector<cfloat> x;            // what arrives (after gaps)
    std::vector<framer_event> events; // sorted
};

struct collected {
    std::vector<cfloat> data;
    std::vector<framer_cpi> cpis;
    std::vector<framer_drop> drops;
    std::vector<framer_rejected_time> rejected;
};

// Feeds the stream in random chunks with random output room, like a scheduler would.
collected feed(pulse_framer& f, const stream& s, std::uint32_t seed)
{
    std::mt19937 rng(seed);
    const std::size_t cpi_len = f.config().npulses * f.config().nrange;
    collected c;
    std::uint64_t pos = 0;
    int idle = 0;
    while (pos < s.x.size() && idle < 4) {
        std::uniform_int_distribution<std::uint64_t> extra(0, 3 * f.config().pri_samples);
        const std::uint64_t n =
            std::min<std::uint64_t>(s.x.size() - pos, f.samples_needed() + extra(rng));
        std::vector<framer_event> ev;
        for (const auto& e : s.events)
            if (e.offset >= pos && e.offset < pos + n)
                ev.push_back(e);
        const std::size_t room = 1 + rng() % 3;
        std::vector<cfloat> out(room * cpi_len);
        const auto r = f.process(s.x.data() + pos, pos, n, ev, out.data(), room);
        c.data.insert(c.data.end(), out.begin(), out.begin() + r.cpis.size() * cpi_len);
        c.cpis.insert(c.cpis.end(), r.cpis.begin(), r.cpis.end());
        c.drops.insert(c.drops.end(), r.drops.begin(), r.drops.end());
        c.rejected.insert(c.rejected.end(), r.rejected.begin(), r.rejected.end());
        pos += r.consumed;
        idle = (r.consumed == 0 && r.cpis.empty()) ? idle + 1 : 0;
        if (pos + f.samples_needed() > s.x.size())
            break; // the rest cannot complete a gate
    }
    return c;
}

// Emitted and dropped CPIs share one sequence of indices without holes.
void expect_indices_without_holes(const collected& c)
{
    std::vector<std::uint64_t> idx;
    for (const auto& x : c.cpis)
        idx.push_back(x.index);
    for (const auto& x : c.drops)
        idx.push_back(x.index);
    std::sort(idx.begin(), idx.end());
    for (std::size_t i = 0; i < idx.size(); ++i)
        ASSERT_EQ(idx[i], i);
}

// Every CPI: pulse p, sample j holds virtual index anchor + start(first + p) + gs + j.
void expect_aligned(const collected& c, const pulse_framer& f, std::uint64_t anchor)
{
    const auto& cfg = f.config();
    const auto& t = f.timing();
    const std::size_t cpi_len = cfg.npulses * cfg.nrange;
    for (std::size_t i = 0; i < c.cpis.size(); ++i)
        for (std::uint64_t p = 0; p < cfg.npulses; ++p)
            for (std::uint64_t j = 0; j < cfg.nrange;
                 j += std::max<std::uint64_t>(1, cfg.nrange / 7))
                ASSERT_EQ(decode(c.data[i * cpi_len + p * cfg.nrange + j]),
                          anchor + t.gate_begin(c.cpis[i].first_pulse + p) + j)
                    << "cpi " << i << " pulse " << p << " sample " << j;
}

TEST(PulseFramer, test_010_alignment_under_random_pri_and_offsets)
{
    std::mt19937_64 rng(10);
    for (int trial = 0; trial < 40; ++trial) {
        const double pri = std::uniform_real_distribution<double>(64.0, 700.0)(rng);
        const std::uint64_t nr =
            1 + rng() % static_cast<std::uint64_t>(std::floor(pri) / 2);
        const std::uint64_t gs =
            rng() % (static_cast<std::uint64_t>(std::floor(pri)) - nr + 1);
        const std::uint64_t np = 1 + rng() % 9;
        const std::uint64_t anchor = rng() % 5000; // rx_time somewhere into the stream
        stream s;
        const std::size_t total = anchor + static_cast<std::size_t>(pri * np * 6) + 17;
        for (std::size_t i = 0; i < total; ++i)
            s.x.push_back(encode(i));
        time_spec t0{ 1700000000, 0.125 };
        s.events.push_back({ anchor, framer_event::kind::rx_time, t0 });
        pulse_framer f(config(pri, gs, nr, np));
        const auto c = feed(f, s, 100 + trial);
        ASSERT_GE(c.cpis.size(), 4u) << "trial " << trial;
        expect_aligned(c, f, anchor);
        for (std::size_t i = 0; i < c.cpis.size(); ++i) {
            EXPECT_EQ(c.cpis[i].index, i);
            EXPECT_EQ(c.cpis[i].first_pulse, i * np);
            ASSERT_TRUE(c.cpis[i].has_time);
            const std::uint64_t start = f.timing().pulse_start(i * np);
            EXPECT_EQ(c.cpis[i].pulse_offset, static_cast<std::int64_t>(anchor + start));
            EXPECT_NEAR(samples_between(t0, c.cpis[i].rx_time, 1e6),
                        static_cast<double>(start),
                        1e-6);
        }
        EXPECT_EQ(f.dropped_cpis(), 0u);
    }
}

TEST(PulseFramer, test_011_free_tag_and_threshold_triggers)
{
    const double pri = 250.5;
    const std::uint64_t gs = 20, nr = 100, np = 3;
    // free: anchored at sample 0.
    {
        stream s;
        for (std::size_t i = 0; i < 5000; ++i)
            s.x.push_back(encode(i));
        pulse_framer f(config(pri, gs, nr, np, trigger_mode::free));
        const auto c = feed(f, s, 1);
        ASSERT_EQ(c.cpis.size(), 6u);
        expect_aligned(c, f, 0);
        EXPECT_FALSE(c.cpis[0].has_time);
    }
    // tag: anchored at the first trigger, later triggers ignored; rx_time only dates.
    {
        stream s;
        for (std::size_t i = 0; i < 6000; ++i)
            s.x.push_back(encode(i));
        s.events = { { 0, framer_event::kind::rx_time, { 5, 0.5 } },
                     { 777, framer_event::kind::trigger, {} },
                     { 1300, framer_event::kind::trigger, {} } };
        pulse_framer f(config(pri, gs, nr, np, trigger_mode::tag));
        const auto c = feed(f, s, 2);
        ASSERT_GE(c.cpis.size(), 5u);
        expect_aligned(c, f, 777);
        EXPECT_NEAR(samples_between({ 5, 0.5 }, c.cpis[0].rx_time, 1e6), 777.0, 1e-6);
    }
    // threshold: leakage (|x|^2 = 400 > 100) at each pulse start from sample 1234 on,
    // noise-free zeros elsewhere; the stream starts inside a leakage burst, which must
    // not count as an edge.
    {
        const std::uint64_t anchor = 1234;
        const pulse_timing t(pri, gs, nr);
        std::vector<bool> leak(8000, false);
        for (int i = 0; i < 5; ++i)
            leak[i] = true;
        for (std::uint64_t k = 0; anchor + t.pulse_start(k) + 10 < leak.size(); ++k)
            for (int i = 0; i < 10; ++i)
                leak[anchor + t.pulse_start(k) + i] = true;
        // Below the level everywhere else, with a marker (k / 1024 in the imaginary part)
        // on the first gate sample of each pulse k.
        std::vector<cfloat> x(leak.size(), cfloat(0.5f, 0.0f));
        const auto marker = [](std::uint64_t k) { return cfloat(0.25f, k / 1024.0f); };
        for (std::uint64_t k = 0; anchor + t.gate_begin(k) < x.size(); ++k)
            x[anchor + t.gate_begin(k)] = marker(k);
        stream s;
        for (std::size_t i = 0; i < leak.size(); ++i)
            s.x.push_back(leak[i] ? cfloat(20.0f, 0.0f) : x[i]);
        pulse_framer f(config(pri, gs, nr, np, trigger_mode::threshold));
        const auto c = feed(f, s, 3);
        ASSERT_GE(c.cpis.size(), 8u);
        const std::size_t cpi_len = np * nr;
        for (std::size_t i = 0; i < c.cpis.size(); ++i) {
            EXPECT_EQ(
                c.cpis[i].pulse_offset,
                static_cast<std::int64_t>(anchor + t.pulse_start(c.cpis[i].first_pulse)));
            for (std::uint64_t p = 0; p < np; ++p)
                ASSERT_EQ(c.data[i * cpi_len + p * nr],
                          marker(c.cpis[i].first_pulse + p));
        }
    }
}

// Overflows: samples removed from a virtual stream, an rx_time tag (with the true time)
// on the first sample after each gap and continuous rx_time tags elsewhere. Each gap is
// placed strictly inside a CPI, so each must discard exactly one CPI. rx_time and free
// modes keep the transmitter's schedule across gaps: every pulse of every CPI lies where
// the schedule from the anchor puts it.
void overflow_case(trigger_mode mode, std::uint32_t seed)
{
    std::mt19937_64 rng(seed);
    const double pri = 180.0 + std::uniform_real_distribution<double>(0, 100)(rng);
    const std::uint64_t nr = 60, gs = 13, np = 5;
    const pulse_timing t(pri, gs, nr);
    const std::uint64_t anchor = mode == trigger_mode::free ? 0 : 321;
    const double fs = 1e6;
    const time_spec t0{ 42, 0.0 };
    const int ncpi = 60;
    // Gaps: one inside a CPI, then five whole CPIs, and so on. The framer's next CPI
    // starts at the first gate wholly after a gap (the documented behaviour), so the
    // grouping is followed here to place every gap strictly inside one of its CPIs.
    struct gap {
        std::uint64_t v0, len;
    };
    std::vector<gap> gaps;
    const std::uint64_t vtotal = anchor + t.pulse_start(ncpi * np) + 1;
    for (std::uint64_t q = 2 * np;;) {
        const std::uint64_t a = anchor + t.gate_begin(q) + 1;
        const std::uint64_t b = anchor + t.gate_begin(q + np - 1) + nr - 1;
        if (b + static_cast<std::uint64_t>(8 * np * pri) > vtotal)
            break;
        const std::uint64_t v0 = a + rng() % (b - a);
        const std::uint64_t len = 1 + rng() % static_cast<std::uint64_t>(3 * pri);
        gaps.push_back({ v0, len });
        q = t.first_pulse_at_or_after(v0 + len - anchor - gs) + 5 * np;
    }
    ASSERT_GE(gaps.size(), 5u);
    stream s;
    std::size_t gi = 0;
    std::uint64_t lost = 0;
    for (std::uint64_t v = 0; v < vtotal; ++v) {
        if (gi < gaps.size() && v == gaps[gi].v0) {
            v += gaps[gi].len - 1;
            lost += gaps[gi].len;
            ++gi;
            s.events.push_back({ s.x.size(),
                                 framer_event::kind::rx_time,
                                 add_samples(t0, static_cast<std::int64_t>(v + 1), fs) });
            continue;
        }
        if (v >= anchor && (v - anchor) % 997 == 0 &&
            (s.events.empty() || s.events.back().offset != s.x.size()))
            s.events.push_back({ s.x.size(),
                                 framer_event::kind::rx_time,
                                 add_samples(t0, static_cast<std::int64_t>(v), fs) });
        if (v == anchor)
            s.events.push_back({ s.x.size(), framer_event::kind::trigger, {} });
        s.x.push_back(encode(v));
    }
    auto cfg = config(pri, gs, nr, np, mode);
    cfg.fs = fs;
    pulse_framer f(cfg);
    const auto c = feed(f, s, seed);
    EXPECT_EQ(f.dropped_cpis(), gaps.size());
    EXPECT_EQ(c.drops.size(), gaps.size());
    EXPECT_EQ(f.lost_samples(), lost);
    ASSERT_GT(c.cpis.size(), static_cast<std::size_t>(ncpi) / 2);
    // Never a misaligned CPI (pulse content from the true schedule), never across a gap.
    const std::size_t cpi_len = np * nr;
    for (std::size_t i = 0; i < c.cpis.size(); ++i) {
        std::uint64_t first = 0;
        for (std::uint64_t p = 0; p < np; ++p)
            for (std::uint64_t j = 0; j < nr; ++j) {
                const std::uint64_t v = decode(c.data[i * cpi_len + p * nr + j]);
                if (p == 0 && j == 0)
                    first = v;
                ASSERT_EQ(v, anchor + t.gate_begin(c.cpis[i].first_pulse + p) + j)
                    << "cpi " << i << " pulse " << p;
            }
        const std::uint64_t last = first + t.gate_begin(np - 1) - gs + nr;
        for (const auto& g : gaps)
            ASSERT_FALSE(g.v0 < last && g.v0 + g.len > first)
                << "cpi " << i << " spans a gap";
        // Its time stamp is the true time of its first pulse.
        ASSERT_TRUE(c.cpis[i].has_time);
        EXPECT_NEAR(samples_between(t0, c.cpis[i].rx_time, fs),
                    static_cast<double>(first - gs),
                    1e-6);
    }
    expect_indices_without_holes(c);
}

TEST(PulseFramer, test_012_overflows_rx_time_and_free_modes_keep_schedule)
{
    for (std::uint32_t seed = 1; seed <= 10; ++seed)
        overflow_case(trigger_mode::rx_time, seed);
    for (std::uint32_t seed = 11; seed <= 15; ++seed)
        overflow_case(trigger_mode::free, seed);
}

TEST(PulseFramer, test_013_overflow_in_tag_mode_waits_for_trigger)
{
    // After a gap the tag mode waits for a trigger; none comes (there is one only at the
    // anchor), so nothing more is emitted, and the one gap is counted.
    std::mt19937_64 rng(5);
    const double pri = 200.25;
    stream s;
    for (std::uint64_t i = 0; i < 20000; ++i)
        s.x.push_back(encode(i < 5000 ? i : i + 333));
    s.events = {
        { 0, framer_event::kind::rx_time, { 1, 0.0 } },
        { 100, framer_event::kind::trigger, {} },
        { 5000, framer_event::kind::rx_time, add_samples({ 1, 0.0 }, 5333, 1e6) },
        { 9000, framer_event::kind::trigger, {} }
    };
    pulse_framer f(config(pri, 5, 50, 4, trigger_mode::tag));
    const auto c = feed(f, s, 9);
    EXPECT_EQ(f.lost_samples(), 333u);
    // CPIs of 4 pulses = 801 samples: 5000 - 100 holds 6 whole CPIs, the 7th is cut.
    EXPECT_EQ(f.dropped_cpis(), 1u);
    const pulse_timing t(pri, 5, 50);
    std::size_t before = 0;
    for (const auto& x : c.cpis)
        before += x.pulse_offset < 5000;
    EXPECT_EQ(before, 6u);
    for (const auto& x : c.cpis)
        if (x.pulse_offset >= 5000)
            EXPECT_EQ(x.pulse_offset,
                      9000 + static_cast<std::int64_t>(t.pulse_start(x.first_pulse)));
}

// rx_time gaps of any length (fractional ones included), several in a row, and
// implausible tags (backwards, absurdly far ahead) that must be ignored. The samples
// encode their arrival index; the expected schedule is computed here in fp64 from the
// tag times: pulse k of the original anchor starts at T0 + k * pri / fs, which after the
// gap at arrival offset o_g (time T_g) is the sample o_g + round((t_k - T_g) * fs).
struct time_gap {
    std::uint64_t offset; // arrival index of the first sample after the gap
    double samples;       // samples lost (> 0, fractional allowed)
};
struct bad_tag {
    std::uint64_t offset;
    time_spec time;
};

time_spec time_after(time_spec t0, double samples, double fs)
{
    const double f = t0.frac + samples / fs;
    const double whole = std::floor(f);
    return { t0.secs + static_cast<std::uint64_t>(whole), f - whole };
}

void gap_schedule_case(double pri,
                       const std::vector<time_gap>& gaps,
                       const std::vector<bad_tag>& bad,
                       std::uint32_t seed)
{
    const std::uint64_t gs = 7, nr = 100, np = 4, n = 40000;
    const double fs = 1e6;
    const time_spec t0{ 42, 0.25 };
    stream s;
    for (std::uint64_t i = 0; i < n; ++i)
        s.x.push_back(encode(i));
    // Segment g starts at seg_offset[g] with time seg_time[g] (segment 0: the anchor).
    std::vector<std::uint64_t> seg_offset{ 0 };
    std::vector<time_spec> seg_time{ t0 };
    double cum = 0;
    for (const auto& g : gaps) {
        cum += g.samples;
        seg_offset.push_back(g.offset);
        seg_time.push_back(time_after(t0, static_cast<double>(g.offset) + cum, fs));
    }
    for (std::size_t g = 0; g < seg_offset.size(); ++g)
        s.events.push_back({ seg_offset[g], framer_event::kind::rx_time, seg_time[g] });
    // Continuous tags between the gaps: they must change nothing.
    for (std::uint64_t o = 1499; o < n; o += 1500) {
        std::size_t g = 0;
        while (g + 1 < seg_offset.size() && seg_offset[g + 1] <= o)
            ++g;
        s.events.push_back({ o,
                             framer_event::kind::rx_time,
                             time_after(seg_time[g], double(o - seg_offset[g]), fs) });
    }
    for (const auto& b : bad)
        s.events.push_back({ b.offset, framer_event::kind::rx_time, b.time });
    std::stable_sort(s.events.begin(), s.events.end(), [](const auto& x, const auto& y) {
        return x.offset < y.offset;
    });

    auto cfg = config(pri, gs, nr, np);
    cfg.fs = fs;
    pulse_framer f(cfg);
    const auto c = feed(f, s, seed);

    // The segment holding arrival offset o, and the fp64 schedule inside it.
    const auto segment = [&](std::int64_t o) {
        std::size_t g = 0;
        while (g + 1 < seg_offset.size() && std::int64_t(seg_offset[g + 1]) <= o)
            ++g;
        return g;
    };
    const auto expected_start = [&](std::uint64_t k, std::size_t g) {
        const double dt = (double(t0.secs) - double(seg_time[g].secs)) +
                          (t0.frac - seg_time[g].frac) + double(k) * pri / fs;
        return std::int64_t(seg_offset[g]) + std::llround(dt * fs);
    };
    EXPECT_EQ(f.rejected_time_jumps(), bad.size());
    // A CPI is dropped only at a gap (one at most per gap: those falling between two
    // CPIs drop none).
    EXPECT_EQ(f.dropped_cpis(), c.drops.size());
    EXPECT_LE(c.drops.size(), gaps.size());
    EXPECT_GE(c.drops.size(), gaps.empty() ? 0u : 1u);
    for (const auto& d : c.drops)
        EXPECT_TRUE(std::any_of(gaps.begin(),
                                gaps.end(),
                                [&](const time_gap& g) { return g.offset == d.offset; }))
            << "drop at " << d.offset;
    std::uint64_t lost = 0;
    for (const auto& g : gaps)
        lost += static_cast<std::uint64_t>(std::llround(g.samples));
    EXPECT_EQ(f.lost_samples(), lost);
    std::vector<std::size_t> cpis_in(seg_offset.size(), 0);
    const std::size_t cpi_len = np * nr;
    for (std::size_t i = 0; i < c.cpis.size(); ++i) {
        const auto& x = c.cpis[i];
        const std::size_t g = segment(x.pulse_offset + std::int64_t(gs));
        ++cpis_in[g];
        ASSERT_EQ(x.pulse_offset, expected_start(x.first_pulse, g)) << "cpi " << i;
        if (i > 0 && segment(c.cpis[i - 1].pulse_offset + std::int64_t(gs)) == g)
            EXPECT_EQ(x.first_pulse, c.cpis[i - 1].first_pulse + np) << "cpi " << i;
        else if (g > 0) // the first CPI after a gap: the first whole gate after it
            EXPECT_TRUE(expected_start(x.first_pulse - 1, g) + std::int64_t(gs) <
                        std::int64_t(seg_offset[g]))
                << "cpi " << i;
        for (std::uint64_t p = 0; p < np; ++p)
            for (std::uint64_t j = 0; j < nr; j += 33)
                ASSERT_EQ(std::int64_t(decode(c.data[i * cpi_len + p * nr + j])),
                          expected_start(x.first_pulse + p, g) + std::int64_t(gs + j))
                    << "cpi " << i << " pulse " << p;
        // Its time stamp: the time of its first sample, within half a sample of the
        // schedule's time for its pulse.
        ASSERT_TRUE(x.has_time);
        const double from_seg = samples_between(seg_time[g], x.rx_time, fs);
        EXPECT_NEAR(from_seg, double(x.pulse_offset - std::int64_t(seg_offset[g])), 1e-6);
        const double from_t0 = samples_between(t0, x.rx_time, fs);
        EXPECT_LE(std::fabs(from_t0 - double(x.first_pulse) * pri), 0.5 + 1e-6);
    }
    for (std::size_t g = 0; g < seg_offset.size(); ++g) {
        const std::uint64_t end = g + 1 < seg_offset.size() ? seg_offset[g + 1] : n;
        if (double(end - seg_offset[g]) > 3.0 * np * pri) // room for a whole CPI
            EXPECT_GE(cpis_in[g], 1u) << "segment " << g << " produced no CPI";
    }
    expect_indices_without_holes(c);
    ASSERT_EQ(c.rejected.size(), bad.size());
    for (std::size_t i = 0; i < bad.size(); ++i)
        EXPECT_EQ(c.rejected[i].offset, bad[i].offset);
}

TEST(PulseFramer, test_014_fractional_gaps_keep_the_original_schedule)
{
    // Gaps placed inside CPIs (CPI = 4 pulses of ~250 samples); the last two in a row,
    // within one CPI's span of each other.
    const std::vector<time_gap> gaps{ { 5050, 1000.37 },
                                      { 12040, 517.81 },
                                      { 20030, 2000.0 },
                                      { 30300, 0.6 },
                                      { 30900, 333.7 } };
    gap_schedule_case(250.5, gaps, {}, 1);
    gap_schedule_case(250.0, gaps, {}, 2);
    gap_schedule_case(313.3, gaps, {}, 3);
}

TEST(PulseFramer, test_015_implausible_rx_time_jumps_are_rejected)
{
    // Far ahead (1e12 s), backwards (a restarted clock), not a number: all ignored; the
    // real gap after them is still measured against the original time line.
    const std::vector<bad_tag> bad{ { 3000, { 1000000000042, 0.0 } },
                                    { 4321, { 3, 0.0 } },
                                    { 6000, { 42, std::nan("") } } };
    gap_schedule_case(250.5, { { 9050, 1000.37 } }, bad, 4);
    gap_schedule_case(200.0, { { 9050, 1000.37 } }, bad, 5);
}

TEST(PulseFramer, test_016_nonfinite_samples_zeroed_and_counted_per_cpi)
{
    // NaN / +-Inf in either part at random samples, inside and outside the gates: every
    // one inside a gate of an emitted CPI comes out as 0 and is counted in that CPI only;
    // all other samples are untouched (they still decode to their index).
    const float bad[] = { std::nanf(""), INFINITY, -INFINITY };
    std::mt19937_64 rng(16);
    for (double pri : { 300.0, 1000.0 / 3.0 }) {
        const std::uint64_t gs = 7, nr = 200, np = 5, anchor = 123;
        stream s;
        const std::size_t total = anchor + static_cast<std::size_t>(pri * np * 9);
        for (std::size_t i = 0; i < total; ++i)
            s.x.push_back(encode(i));
        std::set<std::uint64_t> poisoned;
        while (poisoned.size() < 60) {
            const std::uint64_t i = rng() % total;
            poisoned.insert(i);
            const float v = bad[rng() % 3];
            s.x[i] = rng() % 2 ? cfloat(v, s.x[i].imag()) : cfloat(s.x[i].real(), v);
        }
        s.events.push_back({ anchor, framer_event::kind::rx_time, { 1, 0.0 } });
        pulse_framer f(config(pri, gs, nr, np));
        const auto c = feed(f, s, 160);
        ASSERT_GE(c.cpis.size(), 6u);
        const std::size_t cpi_len = np * nr;
        std::uint64_t total_bad = 0;
        for (std::size_t i = 0; i < c.cpis.size(); ++i) {
            std::uint64_t expected = 0;
            for (std::uint64_t p = 0; p < np; ++p)
                for (std::uint64_t j = 0; j < nr; ++j) {
                    const std::uint64_t at =
                        anchor + f.timing().gate_begin(c.cpis[i].first_pulse + p) + j;
                    const cfloat y = c.data[i * cpi_len + p * nr + j];
                    if (poisoned.count(at)) {
                        ++expected;
                        ASSERT_EQ(y, cfloat(0, 0)) << "cpi " << i << " sample " << at;
                    } else {
                        ASSERT_EQ(decode(y), at) << "cpi " << i << " sample " << at;
                    }
                }
            EXPECT_EQ(c.cpis[i].nonfinite, expected) << "cpi " << i;
            total_bad += expected;
        }
        EXPECT_GT(total_bad, 0u) << "the random positions must hit some gates";
        EXPECT_EQ(f.nonfinite_samples(), total_bad);
    }
}

// A receive sample clock `ppm` fast against rx_time: the sample marking pulse k (marker
// samples after its start) arrives at receive sample round((k pri + marker) (1 + e)), and
// an rx_time tag every `tag_every` CPIs carries its sample's true time n / (fs (1 + e)),
// as radar_channel with clock_offset_ppm gives them. Returns, per emitted CPI, whether
// every pulse's marker sits within one sample of `marker` in its gate (the best an
// integer schedule can do for a fractional pulse start).
struct drift_run {
    collected c;
    std::size_t misaligned = 0;
    bool pulses_in_order = true;
};

drift_run run_drift(double ppm, std::uint64_t tag_every, trigger_mode mode)
{
    const double e = ppm * 1e-6, pri = 100.0, fs = 1e6;
    const std::uint64_t nr = 16, np = 16, marker = 4, npri = 10000;
    stream s;
    s.x.assign(static_cast<std::size_t>(npri * pri * (1 + e)) + 400, cfloat(0, 0));
    for (std::uint64_t k = 0; k < npri + 2; ++k) {
        const auto m = static_cast<std::size_t>(
            std::llround((double(k) * pri + double(marker)) * (1 + e)));
        if (m < s.x.size())
            s.x[m] = cfloat(1, 0);
    }
    if (mode == trigger_mode::rx_time)
        for (std::uint64_t n = 0; n < s.x.size(); n += tag_every * np * 100) {
            const double t = double(n) / (fs * (1 + e));
            s.events.push_back({ n,
                                 framer_event::kind::rx_time,
                                 { std::uint64_t(t), t - std::floor(t) } });
        }
    pulse_framer f(config(pri, 0, nr, np, mode));
    drift_run r;
    r.c = feed(f, s, 17);
    const std::size_t cpi_len = np * nr;
    for (std::size_t i = 0; i < r.c.cpis.size(); ++i) {
        r.pulses_in_order &= r.c.cpis[i].first_pulse == i * np;
        bool ok = true;
        for (std::uint64_t p = 0; p < np; ++p) {
            const cfloat* g = r.c.data.data() + i * cpi_len + p * nr;
            const auto* hit = std::find(g, g + nr, cfloat(1, 0));
            const long at = hit == g + nr ? -100 : long(hit - g);
            ok &= std::abs(at - long(marker)) <= 1;
        }
        r.misaligned += ok ? 0 : 1;
    }
    return r;
}

TEST(PulseFramer, test_017_clock_drift_followed_and_reported)
{
    // 20 ppm over 10 000 PRIs of 100 samples: the pulses walk 20 samples through a
    // fixed schedule. With rx_time tags every CPI, or every 16 CPIs (0.5 samples of
    // drift between tags, beyond the quarter-sample tolerance of a gap check), the
    // framer follows: no CPI misaligned, none dropped, no tag rejected, pulse numbers in
    // order, the drift reported.
    for (std::uint64_t tag_every : { 1u, 16u }) {
        SCOPED_TRACE("an rx_time tag every " + std::to_string(tag_every) + " CPIs");
        const double e = 20e-6;
        const auto r = run_drift(20.0, tag_every, trigger_mode::rx_time);
        EXPECT_GE(r.c.cpis.size(), 620u); // 625 CPIs of 16 PRIs, less the stream's end
        EXPECT_EQ(r.misaligned, 0u);
        EXPECT_TRUE(r.pulses_in_order);
        EXPECT_TRUE(r.c.drops.empty());
        EXPECT_TRUE(r.c.rejected.empty());
        // The last CPI: moved by the slip of its start, e n / (1 + e) samples.
        const auto& last = r.c.cpis.back();
        const double slip = e / (1 + e) * double(last.pulse_offset);
        EXPECT_LE(std::abs(double(last.clock_slip) - slip), 1.0 + e * 16 * 1600);
        EXPECT_GE(last.clock_slip, 18);
        EXPECT_NEAR(last.clock_ppm, 20.0, 1e-3);
        EXPECT_EQ(r.c.cpis.front().clock_slip, 0);
    }
    // Without rx_time the drift cannot be seen: the fixed schedule loses the pulses
    // (what the tracking above prevents).
    const auto blind = run_drift(20.0, 1, trigger_mode::free);
    EXPECT_GT(blind.misaligned, 100u);
    EXPECT_EQ(blind.c.cpis.back().clock_slip, 0);
    // No drift: nothing moves, 0 ppm.
    const auto still = run_drift(0.0, 1, trigger_mode::rx_time);
    EXPECT_EQ(still.misaligned, 0u);
    EXPECT_EQ(still.c.cpis.back().clock_slip, 0);
    EXPECT_EQ(still.c.cpis.back().clock_ppm, 0.0);
}

TEST(PulseFramer, test_020_bad_parameters)
{
    auto make = [](framer_config c) { pulse_framer f(c); };
    // pri: > 0, finite, >= nrange (boundary pri == nrange with gate_start 0 passes).
    EXPECT_NO_THROW(make(config(64.0, 0, 64, 1)));
    expect_invalid([&] { make(config(63.9, 0, 64, 1)); }, "pri");
    expect_invalid([&] { make(config(0.0, 0, 1, 1)); }, "pri");
    expect_invalid([&] { make(config(-5.0, 0, 1, 1)); }, "pri");
    expect_invalid([&] { make(config(NAN, 0, 1, 1)); }, "pri");
    expect_invalid([&] { make(config(INFINITY, 0, 1, 1)); }, "pri");
    // gate inside the PRI: gate_start + nrange <= floor(pri).
    EXPECT_NO_THROW(make(config(100.7, 60, 40, 1)));
    expect_invalid([&] { make(config(100.7, 61, 40, 1)); }, "gate_start");
    expect_invalid([&] { make(config(100.7, 200, 1, 1)); }, "gate_start");
    expect_invalid([&] { make(config(100.0, 0, 0, 1)); }, "nrange");
    // npulses >= 1.
    EXPECT_NO_THROW(make(config(100.0, 0, 10, 1)));
    expect_invalid([&] { make(config(100.0, 0, 10, 0)); }, "npulses");
    auto c = config(100.0, 0, 10, 1);
    c.fs = 0;
    expect_invalid([&] { make(c); }, "fs");
    c = config(100.0, 0, 10, 1);
    c.fc = -1;
    expect_invalid([&] { make(c); }, "fc");
    c = config(100.0, 0, 10, 1, trigger_mode::threshold);
    c.threshold = 0;
    expect_invalid([&] { make(c); }, "threshold");
    c.trigger = trigger_mode::tag; // the level matters only for the threshold trigger
    EXPECT_NO_THROW(make(c));
    expect_invalid([] { parse_trigger_mode("rising"); }, "trigger");
    EXPECT_EQ(parse_trigger_mode("free"), trigger_mode::free);
    EXPECT_EQ(parse_trigger_mode("rx_time"), trigger_mode::rx_time);
}

} // namespace
} // namespace gpuradar::test
