/*
 * Phase-history autofocus sums (kernels::pulse_autofocus): the CPU twin against an fp64
 * reference of pulse_autofocus.h's formulas (both interpolators), bad parameters refused
 * by name, and CUDA against the CPU twin on fresh random data with poisoned outputs. The
 * Python reference (the NumPy autofocus) is checked against the twin in
 * qa_pulse_autofocus.py.
 */
#include "invalid_argument_check.h"
#include "test_support.h"
#include <gpuradar/kernels/common/constants.h>
#include <gpuradar/kernels/common/cpu_threads.h>
#include <gpuradar/kernels/sar/pulse_autofocus.h>
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

namespace gpuradar::test {
namespace {

using kernels::pulse_autofocus;
using interp = pulse_autofocus::interpolator;
using cd = std::complex<double>;

struct problem {
    std::size_t npulses, nbins, npixels;
    std::vector<cfloat> pulses;
    std::vector<double> geometry, phi;
    std::vector<std::int32_t> pixels;
    pulse_autofocus::grid grid{ -20.0, -15.0, 0.25, 0.3, 1.5 };
    std::vector<std::int32_t> centres, start, window;
    std::vector<cd> weights;
};

//! A straight X-band pass ~1 km off a 40 x 30 m patch; random pulses, pixels, phases,
//! windows. One pulse with a NaN geometry and one with a NaN sample. The patch spans
//! bins ~200 to ~430 of 512 from r0 = 1000 m; nbins = 128 and r0 = 1040 m put both
//! ends of the pulses inside it (bins ~-70 to ~165).
problem make_problem(std::size_t npulses,
                     std::size_t npixels,
                     std::uint32_t seed,
                     std::size_t nbins = 512,
                     double r0 = 1000.0)
{
    problem q{
        npulses, nbins, npixels, random_complex(npulses * nbins, seed), {}, {}, {}
    };
    std::mt19937 rng(seed + 1);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    for (std::size_t n = 0; n < npulses; ++n) {
        const double ax = -100.0 + 200.0 * double(n) / double(npulses);
        q.geometry.insert(q.geometry.end(),
                          { ax, -1000.0 + 0.01 * u(rng), 300.0, r0, 0.15, 9.6e9 });
        q.phi.push_back(6.0 * (u(rng) - 0.5));
    }
    q.geometry[6 * (npulses / 3) + 4] = std::numeric_limits<double>::quiet_NaN();
    q.pulses[q.nbins * (npulses / 2) + nbins / 3] = cfloat(NAN, 0.0f);
    for (std::size_t p = 0; p < npixels; ++p) {
        q.pixels.push_back(std::int32_t(u(rng) * 100)); // iy
        q.pixels.push_back(std::int32_t(u(rng) * 160)); // ix
        q.weights.emplace_back(u(rng) - 0.5, u(rng) - 0.5);
    }
    q.start.push_back(0);
    for (int t = 0; t < 3; ++t) {
        q.centres.push_back(std::int32_t(u(rng) * double(npixels)));
        for (std::size_t p = 0; p < npixels; ++p)
            if (u(rng) < 0.6)
                q.window.push_back(std::int32_t(p));
        q.start.push_back(std::int32_t(q.window.size()));
    }
    return q;
}

struct outputs {
    std::vector<cd> image, projection, echoes;
};

outputs run(kernels::backend b, const problem& q, interp i = interp::linear)
{
    auto pa = pulse_autofocus::make(b, q.npulses, q.nbins, q.npixels, {}, i);
    pa->set_terms(q.pulses.data(), q.geometry.data(), q.grid, q.pixels.data());
    const cd nan(std::numeric_limits<double>::quiet_NaN(), 0.0);
    outputs o{ std::vector<cd>(q.npixels, nan),
               std::vector<cd>(q.npulses, nan),
               std::vector<cd>(q.centres.size() * q.npulses, nan) };
    pa->image(q.phi.data(), o.image.data());
    pa->project(q.weights.data(), o.projection.data());
    pa->target_echoes(q.centres.size(),
                      q.centres.data(),
                      q.start.data(),
                      q.window.data(),
                      o.image.data(),
                      o.echoes.data());
    return o;
}

//! sinc16's tap for offset x (pulse_autofocus.h), from the standard library's I0.
double sinc16_tap(double x)
{
    const double pi = 3.14159265358979323846, beta = 6.0;
    const double sinc = x == 0.0 ? 1.0 : std::sin(pi * x) / (pi * x);
    const double u = std::max(0.0, 1.0 - (x / 8.0) * (x / 8.0));
    return sinc * std::cyl_bessel_i(0.0, beta * std::sqrt(u)) /
           std::cyl_bessel_i(0.0, beta);
}

//! pulse_autofocus.h's formulas in double throughout.
outputs reference(const problem& q, interp interpolator = interp::linear)
{
    const std::size_t N = q.npulses, P = q.npixels;
    std::vector<cd> D(N * P), U(N * P);
    std::vector<double> B(N * P, -1e9);
    for (std::size_t n = 0; n < N; ++n) {
        const double* g = &q.geometry[6 * n];
        if (!(std::isfinite(g[4]) && g[4] > 0))
            continue;
        const double k = 4.0 * 3.14159265358979323846 * g[5] / kernels::speed_of_light;
        for (std::size_t p = 0; p < P; ++p) {
            const double px = q.grid.x0 + q.grid.dx * q.pixels[2 * p + 1];
            const double py = q.grid.y0 + q.grid.dy * q.pixels[2 * p];
            const double r = std::hypot(px - g[0], py - g[1], q.grid.z - g[2]);
            const double b = (r - g[3]) / g[4];
            U[n * P + p] = std::polar(1.0, k * r);
            B[n * P + p] = b;
            if (b < 0 || b > double(q.nbins - 1))
                continue;
            auto s = [&](long j) {
                if (j < 0 || j >= long(q.nbins))
                    return cd(0.0);
                const cd v(q.pulses[n * q.nbins + std::size_t(j)]);
                return std::isfinite(v.real()) ? v : cd(0.0);
            };
            cd v = 0.0;
            if (interpolator == interp::sinc16) {
                const double fk = std::floor(b);
                const double f = std::nearbyint((b - fk) * 1024.0) / 1024.0;
                for (long j = -7; j <= 8; ++j)
                    v += sinc16_tap(f - double(j)) * s(long(fk) + j);
            } else {
                const std::size_t i = std::min(std::size_t(b), q.nbins - 2);
                const double w = b - double(i);
                v = (1 - w) * s(long(i)) + w * s(long(i) + 1);
            }
            D[n * P + p] = v * U[n * P + p];
        }
    }
    outputs o{ std::vector<cd>(P), std::vector<cd>(N), std::vector<cd>() };
    for (std::size_t n = 0; n < N; ++n)
        for (std::size_t p = 0; p < P; ++p) {
            o.image[p] += std::polar(1.0, -q.phi[n]) * D[n * P + p];
            o.projection[n] += D[n * P + p] * q.weights[p];
        }
    for (std::size_t t = 0; t < q.centres.size(); ++t)
        for (std::size_t n = 0; n < N; ++n) {
            const std::size_t c = n * P + std::size_t(q.centres[t]);
            cd s = 0;
            for (std::int32_t k = q.start[t]; k < q.start[t + 1]; ++k) {
                const std::size_t i = n * P + std::size_t(q.window[k]);
                const double w = std::max(0.0, 1.0 - std::abs(B[i] - B[c]));
                s += w * std::conj(U[i]) * o.image[q.window[k]];
            }
            o.echoes.push_back(U[c] * s);
        }
    return o;
}

TEST(PulseAutofocus, CpuMatchesDoubleReference)
{
    const problem q = make_problem(96, 300, 7);
    const outputs got = run(kernels::backend::cpu, q), want = reference(q);
    // D and U are kept in float: ~1e-7 relative per term.
    EXPECT_LT(rel_l2(got.image, want.image), 1e-5);
    EXPECT_LT(rel_l2(got.projection, want.projection), 1e-5);
    // Bins are kept in float too: half an ulp at bin 512 is 1.5e-5, so each tri()
    // weight is off by up to 3e-5.
    EXPECT_LT(rel_l2(got.echoes, want.echoes), 1e-4);
    // The data are not trivially zero: a third of the pixels lit by most pulses.
    double energy = 0;
    for (const cd& v : want.image)
        energy += std::norm(v);
    EXPECT_GT(energy, 1.0);
}

TEST(PulseAutofocus, CpuSinc16MatchesDoubleReference)
{
    // Both ends of the pulses inside the patch: taps beyond them and bins outside
    // [0, nbins - 1] exercised.
    const problem q = make_problem(96, 300, 17, 128, 1040.0);
    const outputs got = run(kernels::backend::cpu, q, interp::sinc16),
                  want = reference(q, interp::sinc16);
    EXPECT_LT(rel_l2(got.image, want.image), 1e-5);
    EXPECT_LT(rel_l2(got.projection, want.projection), 1e-5);
    EXPECT_LT(rel_l2(got.echoes, want.echoes), 1e-4);
    // The interpolators differ by far more than the tolerance (the test can tell them
    // apart), and the image is not trivially zero.
    EXPECT_GT(rel_l2(reference(q, interp::linear).image, want.image), 1e-2);
    double energy = 0;
    for (const cd& v : want.image)
        energy += std::norm(v);
    EXPECT_GT(energy, 1.0);
}

TEST(PulseAutofocus, CpuOutputDoesNotDependOnThreadCount)
{
    const problem q = make_problem(64, 3000, 11);
    const int saved = kernels::cpu_threads();
    kernels::set_cpu_threads(1);
    const outputs one = run(kernels::backend::cpu, q);
    kernels::set_cpu_threads(3);
    const outputs three = run(kernels::backend::cpu, q);
    kernels::set_cpu_threads(saved);
    EXPECT_TRUE(bitwise_equal(one.image, three.image));
    EXPECT_TRUE(bitwise_equal(one.projection, three.projection));
    EXPECT_TRUE(bitwise_equal(one.echoes, three.echoes));
}

TEST(PulseAutofocus, RefusesBadParameters)
{
    const auto cpu = kernels::backend::cpu;
    expect_invalid([&] { pulse_autofocus::make(cpu, 2, 64, 10); }, "npulses");
    expect_invalid([&] { pulse_autofocus::make(cpu, 8, 1, 10); }, "nbins");
    expect_invalid([&] { pulse_autofocus::make(cpu, 8, 64, 0); }, "npixels");
    expect_invalid([&] { pulse_autofocus::make(cpu, 1 << 20, 64, 1 << 10); }, "npixels");
    expect_invalid(
        [&] { pulse_autofocus::make(cpu, 8, 64, 10, {}, static_cast<interp>(7)); },
        "interpolator");
    expect_invalid([&] { pulse_autofocus::parse_interpolator("cubic"); }, "interpolator");
    EXPECT_EQ(pulse_autofocus::parse_interpolator("sinc16"), interp::sinc16);
    EXPECT_EQ(pulse_autofocus::parse_interpolator("linear"), interp::linear);
    problem q = make_problem(8, 10, 3);
    auto pa = pulse_autofocus::make(cpu, q.npulses, q.nbins, q.npixels);
    q.grid.dx = 0.0;
    expect_invalid(
        [&] {
            pa->set_terms(q.pulses.data(), q.geometry.data(), q.grid, q.pixels.data());
        },
        "grid.dx");
    std::vector<cd> img(q.npixels), g(q.npulses);
    const std::int32_t bad_centre = 10, start[2] = { 0, 1 }, window = 0;
    expect_invalid(
        [&] { pa->target_echoes(1, &bad_centre, start, &window, img.data(), g.data()); },
        "centres");
    const std::int32_t centre = 0, bad_window = -1;
    expect_invalid(
        [&] { pa->target_echoes(1, &centre, start, &bad_window, img.data(), g.data()); },
        "window");
}

TEST(PulseAutofocusCuda, MatchesCpuTwin)
{
    GPURADAR_REQUIRE_CUDA();
    // 200 pulses: several chunks of image() and a ragged last one.
    const problem q = make_problem(200, 777, std::random_device{}());
    const outputs gpu = run(kernels::backend::cuda, q),
                  cpu = run(kernels::backend::cpu, q);
    // The same float terms; sums in double in another order.
    EXPECT_LT(rel_l2(gpu.image, cpu.image), 1e-9);
    EXPECT_LT(rel_l2(gpu.projection, cpu.projection), 1e-9);
    EXPECT_LT(rel_l2(gpu.echoes, cpu.echoes), 1e-9);
}

TEST(PulseAutofocusCuda, Sinc16MatchesCpuTwin)
{
    GPURADAR_REQUIRE_CUDA();
    // Both ends of the pulses inside the patch (make_problem).
    const problem q = make_problem(200, 777, std::random_device{}(), 128, 1040.0);
    const outputs gpu = run(kernels::backend::cuda, q, interp::sinc16),
                  cpu = run(kernels::backend::cpu, q, interp::sinc16);
    // The same float terms (the taps summed in double); sums in another order.
    EXPECT_LT(rel_l2(gpu.image, cpu.image), 1e-9);
    EXPECT_LT(rel_l2(gpu.projection, cpu.projection), 1e-9);
    EXPECT_LT(rel_l2(gpu.echoes, cpu.echoes), 1e-9);
}

} // namespace
} // namespace gpuradar::test
