/*
 * beamformer: CPU twin against an fp64 reference, CUDA against the CPU twin, the array
 * physics (a plane wave peaks in the beam steered at it; sidelobes follow the taper) and
 * the parameter checks.
 */
#include "common/sample_convert_codes.h"
#include "invalid_argument_check.h"
#include "test_support.h"
#include <gpuradar/kernels/array/beamformer.h>
#include <gpuradar/kernels/common/constants.h>
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

namespace gpuradar::test {
namespace {

using kernels::beamformer;
using kernels::window_spec;
using kernels::window_type;
using cdouble = std::complex<double>;

constexpr double pi = 3.14159265358979323846;

std::vector<cdouble> reference(const std::vector<cfloat>& x,
                               const std::vector<cfloat>& w,
                               std::size_t nch,
                               std::size_t nb,
                               std::size_t ns,
                               std::size_t nitems)
{
    std::vector<cdouble> y(nitems * nb * ns);
    for (std::size_t i = 0; i < nitems; ++i)
        for (std::size_t b = 0; b < nb; ++b)
            for (std::size_t s = 0; s < ns; ++s) {
                cdouble acc = 0;
                for (std::size_t c = 0; c < nch; ++c)
                    acc += cdouble(w[b * nch + c]) * cdouble(x[(i * nch + c) * ns + s]);
                y[(i * nb + b) * ns + s] = acc;
            }
    return y;
}

std::vector<cfloat> run_cpu(const std::vector<cfloat>& x,
                            const std::vector<cfloat>& w,
                            std::size_t nch,
                            std::size_t nb,
                            std::size_t ns)
{
    const std::size_t nitems = x.size() / (nch * ns);
    std::vector<cfloat> y(nitems * nb * ns, cfloat(NAN, NAN));
    beamformer::make(kernels::backend::cpu, nch, nb, ns, w)
        ->run(x.data(), y.data(), nitems);
    return y;
}

/*
 * Channel-major input whose sample s is a unit plane wave from sin(theta) = u[s] on a
 * ULA of nch elements spaced d wavelengths, centred: written from the geometry here,
 * not from the module's steering_vector().
 */
std::vector<cfloat>
ula_plane_waves(std::size_t nch, double d, const std::vector<double>& u)
{
    std::vector<cfloat> x(nch * u.size());
    for (std::size_t c = 0; c < nch; ++c) {
        const double pos = (double(c) - 0.5 * double(nch - 1)) * d;
        for (std::size_t s = 0; s < u.size(); ++s)
            x[c * u.size() + s] = cfloat(std::polar(1.0, 2.0 * pi * pos * u[s]));
    }
    return x;
}

std::vector<cfloat> ula_weights(std::size_t nch,
                                double d,
                                const std::vector<double>& angles_deg,
                                const window_spec& taper)
{
    const double lambda = kernels::speed_of_light / 10e9;
    return kernels::beamformer_weights(
        kernels::ula_positions(nch, d, lambda), lambda, angles_deg, taper);
}

//! Peak sidelobe (dB below the main lobe) of a pattern sampled on an increasing u grid.
double peak_sidelobe_db(const std::vector<cfloat>& pattern)
{
    std::vector<double> p(pattern.size());
    for (std::size_t i = 0; i < p.size(); ++i)
        p[i] = std::abs(pattern[i]);
    const std::size_t peak = std::max_element(p.begin(), p.end()) - p.begin();
    std::size_t right = peak, left = peak;
    while (right + 1 < p.size() && p[right + 1] < p[right])
        ++right;
    while (left > 0 && p[left - 1] < p[left])
        --left;
    double side = 0;
    for (std::size_t i = 0; i < p.size(); ++i)
        if (i < left || i > right)
            side = std::max(side, p[i]);
    return 20 * std::log10(side / p[peak]);
}

TEST(BeamformerCpu, test_001_matches_fp64_reference)
{
    const std::size_t nch = 5, nb = 3, ns = 37, nitems = 4;
    const auto x = random_complex(nitems * nch * ns, 1);
    const auto w = random_complex(nb * nch, 2);
    EXPECT_LT(rel_l2(run_cpu(x, w, nch, nb, ns), reference(x, w, nch, nb, ns, nitems)),
              1e-5);
}

TEST(BeamformerCpu, test_002_pd_a_shape_matches_fp64_reference)
{
    const std::size_t nch = 16, nb = 16, ns = 900, nitems = 3;
    const auto x = random_complex(nitems * nch * ns, 3);
    const auto w = ula_weights(nch, 0.5, kernels::beam_fan_deg(nb, -50, 50), {});
    EXPECT_LT(rel_l2(run_cpu(x, w, nch, nb, ns), reference(x, w, nch, nb, ns, nitems)),
              1e-5);
}

TEST(BeamformerCpu, test_003_plane_wave_peaks_in_its_beam)
{
    const std::size_t nch = 16;
    const auto angles = kernels::beam_fan_deg(31, -60, 60);
    for (double d : { 0.5, 0.4 }) {
        std::vector<double> u;
        for (double a : angles)
            u.push_back(std::sin(a * pi / 180));
        const auto x = ula_plane_waves(nch, d, u); // sample s: wave from beam s's angle
        const auto w = ula_weights(nch, d, angles, window_spec::make("taylor", 4, 30.0));
        const auto y = run_cpu(x, w, nch, angles.size(), u.size());
        for (std::size_t s = 0; s < u.size(); ++s) {
            std::size_t best = 0;
            for (std::size_t b = 1; b < angles.size(); ++b)
                if (std::abs(y[b * u.size() + s]) > std::abs(y[best * u.size() + s]))
                    best = b;
            EXPECT_EQ(best, s) << "spacing " << d << " wave from " << angles[s];
            // Coherent gain normalised: a unit wave on its own beam gives 1.
            EXPECT_NEAR(std::abs(y[s * u.size() + s]), 1.0, 1e-5);
        }
    }
}

TEST(BeamformerCpu, test_004_element_positions_steer_like_a_ula)
{
    // The same ULA given as x/y/z metres: a wave from 20 degrees peaks in the 20-degree
    // beam, and the weights equal the ULA's.
    const std::size_t nch = 8;
    const double fc = 3e9, lambda = kernels::speed_of_light / fc;
    std::vector<double> xyz;
    for (std::size_t c = 0; c < nch; ++c)
        xyz.insert(xyz.end(), { (double(c) - 3.5) * 0.5 * lambda, 0.0, 0.0 });
    const auto w_xyz = kernels::beamformer_weights(
        kernels::positions_from_xyz(xyz, nch), lambda, { -20.0, 0.0, 20.0 }, {});
    const auto w_ula = ula_weights(nch, 0.5, { -20.0, 0.0, 20.0 }, {});
    EXPECT_LT(rel_l2(w_xyz, std::vector<cdouble>(w_ula.begin(), w_ula.end())), 1e-6);
    const auto x = ula_plane_waves(nch, 0.5, { std::sin(20 * pi / 180) });
    const auto y = run_cpu(x, w_xyz, nch, 3, 1);
    EXPECT_GT(std::abs(y[2]), 0.99);
    EXPECT_LT(std::abs(y[1]), 0.5);
    EXPECT_LT(std::abs(y[0]), 0.5);
}

TEST(BeamformerCpu, test_005_sidelobes_follow_the_taper)
{
    // Broadside beam of a 64-element half-wavelength ULA, probed by plane waves over the
    // whole visible region (u = sin theta in [-1, 1]).
    const std::size_t nch = 64;
    std::vector<double> u;
    for (int i = -10000; i <= 10000; ++i)
        u.push_back(i / 10000.0);
    const auto x = ula_plane_waves(nch, 0.5, u);
    struct expectation {
        window_spec taper;
        double tol_db;
    };
    for (const auto& [taper, tol] :
         { expectation{ window_spec::make("rectangular"), 0.3 },
           expectation{ window_spec::make("taylor", 5, 35.0), 1.0 },
           expectation{ window_spec::make("chebyshev", 4, 40.0), 0.5 } }) {
        const auto y =
            run_cpu(x, ula_weights(nch, 0.5, { 0.0 }, taper), nch, 1, u.size());
        EXPECT_NEAR(peak_sidelobe_db(y), kernels::window_peak_sidelobe_db(taper), tol)
            << kernels::to_string(taper.type);
    }
}

TEST(BeamformerCpu, test_006_bad_parameters_name_themselves)
{
    const double lambda = 0.03;
    const auto ula = kernels::ula_positions(4, 0.5, lambda);
    expect_invalid(
        [] {
            kernels::positions_from_xyz({ 0, 0, 0, 1, 0 }, 2);
        },
        "element_positions_m");
    expect_invalid(
        [] {
            kernels::positions_from_xyz({ 0, 0, 0 }, 2);
        },
        "element_positions_m");
    expect_invalid([&] { kernels::beamformer_weights(ula, lambda, { 91.0 }, {}); },
                   "beam_angles_deg");
    expect_invalid([&] { kernels::beamformer_weights(ula, lambda, { -90.5 }, {}); },
                   "beam_angles_deg");
    expect_invalid([&] { kernels::beamformer_weights(ula, lambda, { NAN }, {}); },
                   "beam_angles_deg");
    expect_invalid([&] { kernels::beamformer_weights(ula, lambda, {}, {}); },
                   "beam_angles_deg");
    expect_invalid([] { kernels::beam_fan_deg(0, -10, 10); }, "nbeams");
    expect_invalid([] { kernels::beam_fan_deg(4, -95, 10); }, "fan_first_deg");
    expect_invalid([] { kernels::beam_fan_deg(4, -10, 100); }, "fan_last_deg");
    expect_invalid([] { kernels::ula_positions(4, 0.0, 0.03); }, "element_spacing_wl");
    expect_invalid([] { kernels::ula_positions(0, 0.5, 0.03); }, "nchannels");
    expect_invalid([&] { kernels::beamformer_weights(ula, -1.0, { 0.0 }, {}); },
                   "wavelength_m");
    const std::vector<cfloat> w(8, cfloat(1, 0));
    expect_invalid([&] { beamformer::make(kernels::backend::cpu, 4, 3, 10, w); },
                   "weights");
    expect_invalid([&] { beamformer::make(kernels::backend::cpu, 4, 0, 10, w); },
                   "nbeams");
    expect_invalid([&] { beamformer::make(kernels::backend::cpu, 0, 2, 10, w); },
                   "nchannels");
    expect_invalid([&] { beamformer::make(kernels::backend::cpu, 4, 2, 0, w); },
                   "nsamples");
}

TEST(BeamformerCuda, test_010_matches_cpu_twin)
{
    GPURADAR_REQUIRE_CUDA();
    kernels::cuda_stream stream;
    struct shape {
        std::size_t nch, nb, ns, nitems;
    };
    std::uint32_t seed = 100;
    for (const auto& [nch, nb, ns, nitems] : { shape{ 16, 16, 9000, 8 },
                                               shape{ 5, 3, 37, 4 },
                                               shape{ 1, 7, 1001, 3 },
                                               shape{ 12, 1, 64, 33 },
                                               // The cuBLAS path: > 16 beams, > 256
                                               // channels (beamformer_cuda.cu).
                                               shape{ 8, 24, 513, 5 },
                                               shape{ 300, 4, 257, 2 } }) {
        const auto x = random_complex(nitems * nch * ns, seed++);
        const auto w = random_complex(nb * nch, seed++);
        auto d_in = to_device(x, stream);
        kernels::device_memory d_out(nitems * nb * ns * sizeof(cfloat));
        poison(d_out, stream);
        beamformer::make(kernels::backend::cuda, nch, nb, ns, w, stream.ref())
            ->run(d_in.as<cfloat>(), d_out.as<cfloat>(), nitems);
        const auto got = to_host<cfloat>(d_out, nitems * nb * ns, stream);
        EXPECT_LT(rel_l2(got, run_cpu(x, w, nch, nb, ns)), 1e-5)
            << nch << " channels, " << nb << " beams, " << ns << " samples";
    }
}

// sc16 / sc8 items (run_samples) are run() on the codes' exact values bit for bit, in
// chunks of the conversion workspace: items of 4 MiB as float make chunks of two, so 5
// items take three chunks (2, 2, 1) and a chunk offset error cannot pass.
TEST(BeamformerCpu, test_007_integer_input_is_run_on_the_exact_values)
{
    const std::size_t nch = 4, nb = 3, ns = 131072, nitems = 5;
    const auto w = random_complex(nb * nch, 70);
    const auto q16 = random_codes<std::int16_t>(nitems * nch * ns, 71);
    const auto q8 = random_codes<std::int8_t>(nitems * nch * ns, 72);
    const auto want16 = run_cpu(exact_values(q16), w, nch, nb, ns);
    const auto want8 = run_cpu(exact_values(q8), w, nch, nb, ns);
    for (const auto f : { kernels::sample_format::sc16, kernels::sample_format::sc8 }) {
        SCOPED_TRACE(kernels::to_string(f));
        const bool is16 = f == kernels::sample_format::sc16;
        auto bf = beamformer::make(kernels::backend::cpu, nch, nb, ns, w, {}, f);
        EXPECT_EQ(bf->input_format(), f);
        EXPECT_EQ(bf->conversion_chunk_items(), 2u);
        std::vector<cfloat> got(nitems * nb * ns, cfloat(NAN, NAN));
        bf->run_samples(is16 ? static_cast<const void*>(q16.data())
                             : static_cast<const void*>(q8.data()),
                        got.data(),
                        nitems);
        const auto& want = is16 ? want16 : want8;
        EXPECT_TRUE(std::memcmp(got.data(), want.data(), got.size() * sizeof(cfloat)) ==
                    0);
    }
}

// CUDA: run_samples on fresh random codes equals the same object's run() on the codes'
// exact values bit for bit (both conversions are exact) and the CPU twin within float
// rounding, on the register kernel (converts in its loads: no workspace) and on the
// cuBLAS path (conversion pass, three chunks); output poisoned, input unchanged; a
// pointer off a whole sample refused.
TEST(BeamformerCuda, test_011_integer_input_matches_cpu)
{
    GPURADAR_REQUIRE_CUDA();
    kernels::cuda_stream stream;
    const std::uint32_t seed = std::random_device{}();
    SCOPED_TRACE("seed " + std::to_string(seed));
    struct shape {
        std::size_t nch, nb, ns, nitems;
        bool fused;
    };
    for (const auto& [nch, nb, ns, nitems, fused] :
         { shape{ 5, 3, 1001, 7, true }, shape{ 4, 24, 131072, 5, false } }) {
        const auto w = random_complex(nb * nch, seed);
        const auto q16 = random_codes<std::int16_t>(nitems * nch * ns, seed + 1);
        const auto q8 = random_codes<std::int8_t>(nitems * nch * ns, seed + 2);
        for (const auto f :
             { kernels::sample_format::sc16, kernels::sample_format::sc8 }) {
            SCOPED_TRACE(std::string(kernels::to_string(f)) + ", " + std::to_string(nb) +
                         " beams");
            const bool is16 = f == kernels::sample_format::sc16;
            auto gpu =
                beamformer::make(kernels::backend::cuda, nch, nb, ns, w, stream.ref(), f);
            EXPECT_EQ(gpu->conversion_chunk_items() == 0, fused);
            auto d_in = is16 ? to_device(q16, stream) : to_device(q8, stream);
            const auto exact = is16 ? exact_values(q16) : exact_values(q8);
            auto d_exact = to_device(exact, stream);
            kernels::device_memory d_out(nitems * nb * ns * sizeof(cfloat));
            kernels::device_memory d_ref(nitems * nb * ns * sizeof(cfloat));
            poison(d_out, stream);
            poison(d_ref, stream);
            gpu->run_samples(d_in.get(), d_out.as<cfloat>(), nitems);
            gpu->run(d_exact.as<cfloat>(), d_ref.as<cfloat>(), nitems);
            const auto got = to_host<cfloat>(d_out, nitems * nb * ns, stream);
            const auto ref = to_host<cfloat>(d_ref, nitems * nb * ns, stream);
            EXPECT_TRUE(
                std::memcmp(got.data(), ref.data(), got.size() * sizeof(cfloat)) == 0);
            EXPECT_LT(rel_l2(got, run_cpu(exact, w, nch, nb, ns)), 1e-5);
            if (is16)
                EXPECT_TRUE(to_host<std::int16_t>(d_in, q16.size(), stream) == q16);
            else
                EXPECT_TRUE(to_host<std::int8_t>(d_in, q8.size(), stream) == q8);
            if (fused && is16)
                expect_invalid(
                    [&] {
                        gpu->run_samples(
                            static_cast<char*>(d_in.get()) + 2, d_out.as<cfloat>(), 1);
                    },
                    "run_samples input");
        }
    }
}

} // namespace
} // namespace gpuradar::test
