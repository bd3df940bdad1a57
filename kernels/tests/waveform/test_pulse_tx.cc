/* pulse_tx: samples and burst geometry of both burst modes with a fractional PRI,
 * independent of how the stream is cut into calls; the end of a finite train; bad input.
 */
#include "invalid_argument_check.h"
#include "test_support.h"
#include <gpuradar/kernels/waveform/pulse_tx.h>

namespace gpuradar::test {
namespace {

using namespace gpuradar::kernels;

// PRI 700.5: pulse k starts at floor(700.5 k + 1/2) = (1401 k + 1) / 2.
std::uint64_t start_of(std::uint64_t k) { return (1401 * k + 1) / 2; }

pulse_tx_config base(burst_mode m)
{
    pulse_tx_config c;
    c.pulse = random_complex(40, 3);
    c.pri_samples = 700.5;
    c.mode = m;
    c.npulses = 3;
    c.nbursts = 4;
    return c;
}

std::vector<cfloat> run(pulse_tx& t, std::size_t chunk)
{
    std::vector<cfloat> all, buf(chunk);
    for (;;) {
        const std::size_t n = t.generate(buf.data(), chunk);
        if (n == 0)
            return all;
        all.insert(all.end(), buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(n));
    }
}

TEST(PulseTrain, test_001_cpi_timeline)
{
    const auto c = base(burst_mode::cpi);
    for (const std::size_t chunk : { 1u, 333u, 100000u }) {
        pulse_tx t(c, "test");
        const auto x = run(t, chunk);
        ASSERT_EQ(x.size(), start_of(12)) << chunk;
        EXPECT_EQ(t.total_samples(), start_of(12));
        std::vector<cfloat> want(x.size(), cfloat(0, 0));
        for (std::uint64_t k = 0; k < 12; ++k)
            std::copy(c.pulse.begin(), c.pulse.end(), want.begin() + start_of(k));
        EXPECT_EQ(x, want) << chunk;
    }
    pulse_tx t(c, "test");
    for (std::uint64_t b = 0; b < 4; ++b) {
        const burst br = t.burst_at(b);
        EXPECT_EQ(br.first_pulse, 3 * b);
        EXPECT_EQ(br.offset, start_of(3 * b));
        EXPECT_EQ(br.timeline, start_of(3 * b));
        EXPECT_EQ(br.length, start_of(3 * b + 3) - start_of(3 * b));
        EXPECT_EQ(t.burst_containing(br.offset), b);
        EXPECT_EQ(t.burst_containing(br.offset + br.length - 1), b);
    }
}

TEST(PulseTrain, test_002_pulse_bursts)
{
    const auto c = base(burst_mode::pulse);
    pulse_tx t(c, "test");
    const auto x = run(t, 17);
    ASSERT_EQ(x.size(), 4 * 40u);
    for (std::size_t i = 0; i < x.size(); ++i)
        EXPECT_EQ(x[i], c.pulse[i % 40]);
    for (std::uint64_t b = 0; b < 4; ++b) {
        const burst br = t.burst_at(b);
        EXPECT_EQ(br.offset, 40 * b);
        EXPECT_EQ(br.length, 40u);
        EXPECT_EQ(br.timeline, start_of(b)); // tx_time follows the pulse schedule
        EXPECT_EQ(t.burst_containing(40 * b + 39), b);
    }
}

TEST(PulseTrain, test_003_endless_and_bad_input)
{
    auto c = base(burst_mode::cpi);
    c.nbursts = 0;
    pulse_tx t(c, "test");
    std::vector<cfloat> buf(50000);
    EXPECT_EQ(t.generate(buf.data(), buf.size()), buf.size());
    EXPECT_EQ(t.total_samples(), 0u);
    c.pri_samples = 39.5;
    expect_invalid([&] { pulse_tx(c, "blk"); }, "prf", "gpuradar::blk");
    c = base(burst_mode::cpi);
    c.npulses = 0;
    expect_invalid([&] { pulse_tx(c, "blk"); }, "npulses", "gpuradar::blk");
    c = base(burst_mode::cpi);
    c.pulse.clear();
    expect_invalid([&] { pulse_tx(c, "blk"); }, "waveform", "gpuradar::blk");
    expect_invalid(
        [] { parse_burst_mode("frame", "blk"); }, "burst_mode", "gpuradar::blk");
}

} // namespace
} // namespace gpuradar::test
