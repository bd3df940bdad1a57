/* radar_channel: echoes of a random input against a direct fp64 reference (delays with
 * range walk, Doppler phase, leakage and system delay), independence from the call
 * chunking, agreement with radar_scene on a pulse train, noise power and SNR scaling, and
 * bad input naming the parameter or the target entry. */
#include "invalid_argument_check.h"
#include "test_support.h"
#include <gpuradar/kernels/scene/radar_channel.h>
#include <gpuradar/kernels/scene/radar_scene.h>
#include <gpuradar/kernels/waveform/waveform.h>
#include <algorithm>
#include <cmath>

namespace gpuradar::test {
namespace {

using namespace gpuradar::kernels;
using cdouble = std::complex<double>;
constexpr double c0 = 299792458.0;
constexpr double two_pi = 6.283185307179586476925;

channel_config base()
{
    channel_config c;
    c.fs = 10e6;
    c.fc = 3e9;
    c.noise_power = 0.0;
    // A fast target (delay walks by one sample every 500) and a receding slow one.
    c.targets = radar_scene::make_targets({ 3000.0, 7000.0 },
                                          { 3.0e5, -40.0 },
                                          { 6.0, -3.0 },
                                          "snr_db",
                                          0.0,
                                          "radar_channel");
    return c;
}

// y[m] = leak x[m - s] + sum a x[m - s - round(2 R(m/fs) fs / c)] exp(-j 4 pi fc R / c);
// with a clock offset e, m is read as the input time tau = m / (1 + e) (long double):
// x[round(tau) - s] and x[round(tau - 2 R(tau/fs) fs / c) - s].
std::vector<cdouble> reference(const channel_config& c, const std::vector<cfloat>& x)
{
    const auto s = static_cast<std::int64_t>(c.system_delay);
    const long double e = c.clock_offset_ppm * 1e-6L;
    std::vector<cdouble> y(x.size());
    auto at = [&](std::int64_t i) { return i < 0 ? cdouble(0) : cdouble(x[i]); };
    for (std::size_t m = 0; m < x.size(); ++m) {
        const long double tau = (long double)m / (1 + e);
        const auto mi = static_cast<std::int64_t>(std::llround(tau));
        y[m] = c.leakage_amplitude * at(mi - s);
        for (const auto& t : c.targets) {
            const double r = t.range_m - t.velocity_mps * double(tau) / c.fs;
            const double a = std::sqrt((c.noise_power > 0 ? c.noise_power : 1.0) *
                                       std::pow(10.0, t.snr_db / 10) / c.tx_power);
            const double ph = std::remainder(-2 * two_pi * c.fc * r / c0, two_pi);
            const auto src = e == 0 ? mi - std::llround(2 * r * c.fs / c0)
                                    : std::llround(tau - 2 * r * c.fs / c0);
            y[m] += a * at(src - s) * std::polar(1.0, ph);
        }
    }
    return y;
}

std::vector<cfloat> run(const channel_config& c,
                        const std::vector<cfloat>& x,
                        const std::vector<std::size_t>& chunks)
{
    radar_channel ch(c);
    std::vector<cfloat> y(x.size(), cfloat(9.0f, -9.0f)); // poisoned
    std::size_t done = 0, k = 0;
    while (done < x.size()) {
        const std::size_t n = std::min(chunks[k++ % chunks.size()], x.size() - done);
        ch.process(x.data() + done, y.data() + done, n);
        done += n;
    }
    return y;
}

TEST(RadarChannel, test_001_echoes_against_reference)
{
    auto c = base();
    c.tx_power = 2.0;
    c.leakage_amplitude = 0.7;
    c.system_delay = 37;
    const auto x = random_complex(40000, 11);
    const auto ref = reference(c, x);
    const auto one = run(c, x, { x.size() });
    EXPECT_LT(rel_l2(one, ref), 1e-6);
    // The output does not depend on how the stream is cut into calls.
    const auto cut = run(c, x, { 1, 4093, 17, 250, 9000 });
    EXPECT_LT(rel_l2(cut, ref), 1e-6);
    // The fast target's delay walked: its first and last delays differ by > 50 samples.
    const double d0 = 2 * 3000.0 * c.fs / c0,
                 d1 = 2 * (3000.0 - 3.0e5 * 40000 / c.fs) * c.fs / c0;
    EXPECT_GT(d0 - d1, 50.0);
}

TEST(RadarChannel, test_005_clock_offset_against_reference)
{
    // 500 ppm over 40 000 samples: the receive samples walk 20 samples ahead of the
    // input's, visible in the leakage and both echoes; chunking changes nothing.
    auto c = base();
    c.leakage_amplitude = 0.7;
    c.system_delay = 37;
    c.clock_offset_ppm = 500.0;
    const auto x = random_complex(40000, 12);
    const auto ref = reference(c, x);
    EXPECT_LT(rel_l2(run(c, x, { x.size() }), ref), 1e-6);
    EXPECT_LT(rel_l2(run(c, x, { 1, 4093, 17, 250, 9000 }), ref), 1e-6);
    auto same = c;
    same.clock_offset_ppm = 0.0;
    EXPECT_GT(rel_l2(run(c, x, { x.size() }), reference(same, x)), 0.5)
        << "the offset must change the stream";
    // A pulse sent at input sample n arrives at receive sample round(n (1 + e)).
    c.targets.clear();
    c.system_delay = 0;
    c.clock_offset_ppm = 20.0;
    std::vector<cfloat> pulse(600000, cfloat(0, 0));
    pulse[500000] = cfloat(1, 0);
    const auto y = run(c, pulse, { 65536 });
    const auto peak = std::max_element(
        y.begin(), y.end(), [](cfloat a, cfloat b) { return std::abs(a) < std::abs(b); });
    EXPECT_EQ(peak - y.begin(), 500010); // 500 000 x (1 + 20e-6)
    EXPECT_FLOAT_EQ(std::abs(*peak), 0.7f);
}

TEST(RadarChannel, test_002_same_echo_as_radar_scene)
{
    // The scene's leakage path (amplitude 1, no noise, no targets) is the transmit
    // timeline; the channel applied to it must give the scene's echoes.
    scene_config sc;
    sc.fs = 4e6;
    sc.fc = 1.3e9;
    sc.prf = 4e6 / 2000.0;
    sc.waveform = make_waveform("p4:64", 0, 16e-6, 4e6);
    sc.noise_power = 0.0;
    sc.leakage_amplitude = 1.0;
    const std::size_t n = 5 * 2000;
    std::vector<cfloat> x(n);
    radar_scene(sc).generate(x.data(), n);
    // 2 R fs / c = 166.3 samples: clear of a rounding boundary for the whole run.
    const auto targets =
        radar_scene::make_targets({ 6233.0 }, { 25.0 }, { 4.0 }, "snr_db", 0.0);
    sc.leakage_amplitude = 0.0;
    sc.targets = targets;
    std::vector<cfloat> want(n);
    radar_scene(sc).generate(want.data(), n);

    channel_config cc;
    cc.fs = sc.fs;
    cc.fc = sc.fc;
    cc.targets = targets;
    cc.noise_power = 0.0;
    const auto got = run(cc, x, { 777 });
    EXPECT_LT(rel_l2(got, want), 1e-6);
}

TEST(RadarChannel, test_003_noise_and_snr)
{
    channel_config c;
    c.fs = 1e6;
    c.fc = 1e9;
    c.noise_power = 0.5;
    c.tx_power = 4.0;
    c.targets = radar_scene::make_targets({ 1500.0 }, { 0.0 }, { 10.0 }, "snr_db", 0.0);
    radar_channel ch(c);
    // a^2 tx_power = noise_power 10^(SNR/10).
    EXPECT_NEAR(ch.amplitude(0), std::sqrt(0.5 * 10.0 / 4.0), 1e-12);
    const std::size_t n = 200000;
    std::vector<cfloat> zeros(n, cfloat(0, 0)), y(n);
    ch.process(zeros.data(), y.data(), n);
    double p = 0, re = 0, im = 0;
    for (const auto& v : y) {
        p += std::norm(cdouble(v));
        re += double(v.real()) * v.real();
        im += double(v.imag()) * v.imag();
    }
    // Estimates of a power from 2e5 samples: relative standard deviation 0.22%.
    EXPECT_NEAR(p / n, 0.5, 0.5 * 0.02);
    EXPECT_NEAR(re / im, 1.0, 0.03); // circular
    // Same seed, same noise; another seed, other noise.
    radar_channel again(c);
    std::vector<cfloat> y2(n);
    again.process(zeros.data(), y2.data(), n);
    EXPECT_EQ(y, y2);
    c.seed = 2;
    radar_channel other(c);
    other.process(zeros.data(), y2.data(), n);
    EXPECT_NE(y, y2);
}

TEST(RadarChannel, test_004_bad_input)
{
    const char* who = "gpuradar::radar_channel";
    auto with = [](auto edit) {
        auto c = base();
        edit(c);
        return radar_channel(c);
    };
    expect_invalid([&] { with([](channel_config& c) { c.fs = 0; }); }, "samp_rate", who);
    expect_invalid([&] { with([](channel_config& c) { c.fc = -1; }); }, "fc", who);
    expect_invalid(
        [&] { with([](channel_config& c) { c.tx_power = 0; }); }, "tx_power", who);
    expect_invalid([&] { with([](channel_config& c) { c.noise_power = NAN; }); },
                   "noise_power",
                   who);
    expect_invalid([&] { with([](channel_config& c) { c.leakage_amplitude = -1; }); },
                   "leakage_amplitude",
                   who);
    expect_invalid([&] { with([](channel_config& c) { c.clock_offset_ppm = -1; }); },
                   "clock_offset_ppm",
                   who);
    expect_invalid([&] { with([](channel_config& c) { c.clock_offset_ppm = 1001; }); },
                   "clock_offset_ppm",
                   who);
    with([](channel_config& c) { c.clock_offset_ppm = 1000; }); // the limit passes
    auto targets =
        [&](std::vector<double> r, std::vector<double> v, std::vector<double> a) {
            radar_scene::make_targets(r, v, a, "snr_db", 0.0, "radar_channel");
        };
    expect_invalid([&] { targets({ 1e3, 2e3 }, { 0 }, { 0, 0 }); }, "velocities", who);
    expect_invalid([&] { targets({ 1e3 }, { 0 }, {}); }, "amplitudes", who);
    expect_invalid([&] { targets({ 1e3, -5 }, { 0, 0 }, { 0, 0 }); }, "ranges[1]", who);
    expect_invalid([&] { targets({ 1e3 }, { 4e8 }, { 0 }); }, "velocities[0]", who);
    expect_invalid([&] { targets({ 1e3 }, { 0 }, { INFINITY }); }, "amplitudes[0]", who);
}

} // namespace
} // namespace gpuradar::test
