/* pulse_timing (drift-free schedule), time_spec arithmetic and the pulse framer's state
 * machine: alignment under random PRI offsets, fractional PRIs over > 1e6 pulses,
 * injected overflows, triggers, bad input. References are exact integer formulas written
 * here, not the code under test. */
#include "invalid_argument_check.h"
#include <gpuradar/kernels/pulse_framer.h>
#include <gtest/gtest.h>
#include <algorithm>
#include <cmath>
#include <random>

namespace gpuradar::test {
namespace {

using namespace gpuradar::kernels;

// A sample that encodes its absolute (virtual) index exactly in two float components.
constexpr std::uint64_t index_radix = 1u << 20;
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
        pos += r.consumed;
        idle = (r.consumed == 0 && r.cpis.empty()) ? idle + 1 : 0;
        if (pos + f.samples_needed() > s.x.size())
            break; // the rest cannot complete a gate
    }
    return c;
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
    // Indices: emitted and dropped CPIs share one sequence without holes.
    std::vector<std::uint64_t> idx;
    for (const auto& x : c.cpis)
        idx.push_back(x.index);
    for (const auto& x : c.drops)
        idx.push_back(x.index);
    std::sort(idx.begin(), idx.end());
    for (std::size_t i = 0; i < idx.size(); ++i)
        ASSERT_EQ(idx[i], i);
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

TEST(PulseFramer, test_014_discontinuity_reanchors)
{
    // Time going backwards (a restarted stream): partial CPI dropped, anchor at the tag.
    stream s;
    for (std::uint64_t i = 0; i < 10000; ++i)
        s.x.push_back(encode(i));
    s.events = { { 0, framer_event::kind::rx_time, { 10, 0.0 } },
                 { 4321, framer_event::kind::rx_time, { 3, 0.0 } } };
    pulse_framer f(config(100.0, 0, 40, 8));
    const auto c = feed(f, s, 4);
    EXPECT_EQ(f.dropped_cpis(), 1u);
    EXPECT_EQ(f.lost_samples(), 0u);
    bool after = false;
    for (const auto& x : c.cpis) {
        if (x.pulse_offset >= 4321) {
            EXPECT_EQ((x.pulse_offset - 4321) % 800, 0);
            EXPECT_NEAR(samples_between({ 3, 0.0 }, x.rx_time, 1e6),
                        static_cast<double>(x.pulse_offset - 4321),
                        1e-6);
            after = true;
        } else {
            EXPECT_EQ(x.pulse_offset % 800, 0);
        }
    }
    EXPECT_TRUE(after);
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
