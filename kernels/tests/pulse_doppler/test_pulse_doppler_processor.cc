/*
 * pulse_doppler_processor: the CPU chain against an fp64 reference written here
 * (correlation, canceller, window, DFT with the fftshift offset, envelope, all in
 * double); bad input; CUDA (every fusion switch) against the CPU chain, output poisoned,
 * input untouched.
 */
#include "common/sample_convert_codes.h"
#include "invalid_argument_check.h"
#include "test_support.h"
#include <gpuradar/kernels/detection/cfar_2d.h>
#include <gpuradar/kernels/pulse_doppler/pulse_compression.h>
#include <gpuradar/kernels/pulse_doppler/pulse_doppler_processor.h>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

namespace gpuradar::test {
namespace {

using kernels::doppler_filter;
using kernels::envelope;
using kernels::pulse_doppler_processor;
using kernels::window_spec;
using mti_mode = doppler_filter::mti_mode;
using cdouble = std::complex<double>;

constexpr double pi = 3.14159265358979323846;

// out[(r*C + c)*nfft + k] per CONVENTIONS.md's range stream, from the definitions.
std::vector<double> reference(const std::vector<cfloat>& x,
                              const pulse_doppler_processor::params& p)
{
    const std::size_t P = p.npulses, C = p.channels, R = p.nrange, L = p.waveform.size();
    const std::size_t nfft = p.nfft ? p.nfft : P;
    // Matched filter: y[d] = g sum_k x[d+k] conj(w[k] s[k]).
    const auto wr = kernels::window_coefficients(p.range_window, L);
    std::vector<cdouble> ref(L);
    double energy = 0;
    for (std::size_t k = 0; k < L; ++k) {
        ref[k] = wr[k] * cdouble(p.waveform[k]);
        energy += std::norm(ref[k]);
    }
    const double g = p.normalize ? 1.0 / std::sqrt(energy) : 1.0;
    std::vector<cdouble> y(P * C * R);
    for (std::size_t row = 0; row < P * C; ++row)
        for (std::size_t d = 0; d < R; ++d) {
            cdouble acc = 0;
            for (std::size_t k = 0; k < L && d + k < R; ++k)
                acc += cdouble(x[row * R + d + k]) * std::conj(ref[k]);
            y[row * R + d] = g * acc;
        }
    // Slow time per (range, channel): canceller, window, DFT of bins (k - s).
    const std::size_t order = doppler_filter::mti_order(p.mti);
    const std::size_t m = P - order;
    const auto wd = kernels::window_coefficients(p.doppler_window, m);
    const double s = p.fftshift ? double(nfft / 2) : 0.0;
    std::vector<double> out(R * C * nfft);
    for (std::size_t r = 0; r < R; ++r)
        for (std::size_t c = 0; c < C; ++c) {
            auto at = [&](std::size_t pulse) { return y[(pulse * C + c) * R + r]; };
            std::vector<cdouble> v(m);
            for (std::size_t n = 0; n < m; ++n)
                v[n] = order == 0   ? at(n)
                       : order == 1 ? at(n + 1) - at(n)
                                    : at(n + 2) - 2.0 * at(n + 1) + at(n);
            for (std::size_t k = 0; k < nfft; ++k) {
                cdouble acc = 0;
                for (std::size_t n = 0; n < m; ++n)
                    acc += wd[n] * v[n] *
                           std::polar(1.0, -2 * pi * (double(k) - s) * double(n) / nfft);
                const double pw = std::norm(acc);
                double e = p.env_mode == envelope::mode::linear ? std::sqrt(pw) : pw;
                if (p.db)
                    e = 10 * std::log10(pw);
                out[(r * C + c) * nfft + k] = e;
            }
        }
    return out;
}

pulse_doppler_processor::params make_params(std::size_t P,
                                            std::size_t C,
                                            std::size_t R,
                                            std::size_t L,
                                            std::size_t nfft,
                                            mti_mode mti,
                                            bool fftshift,
                                            envelope::mode env,
                                            bool db,
                                            unsigned seed)
{
    pulse_doppler_processor::params p;
    p.npulses = P;
    p.channels = C;
    p.nrange = R;
    p.waveform = random_complex(L, seed);
    p.range_window = window_spec::make("taylor");
    p.normalize = true;
    p.nfft = nfft;
    p.mti = mti;
    p.doppler_window = window_spec::make("hann");
    p.fftshift = fftshift;
    p.env_mode = env;
    p.db = db;
    return p;
}

struct chain_case {
    std::size_t P, C, R, L, nfft;
    mti_mode mti;
    bool fftshift;
    envelope::mode env;
    bool db;
};

class PulseDopplerCpu : public ::testing::TestWithParam<chain_case>
{
};

TEST_P(PulseDopplerCpu, test_001_matches_fp64_reference)
{
    const auto c = GetParam();
    const auto p =
        make_params(c.P, c.C, c.R, c.L, c.nfft, c.mti, c.fftshift, c.env, c.db, 3);
    auto pd = pulse_doppler_processor::make(kernels::backend::cpu, p);
    EXPECT_EQ(pd->nfft(), c.nfft ? c.nfft : c.P);
    const auto x = random_complex(pd->input_size(), 4);
    std::vector<float> out(pd->output_size(), NAN);
    pd->run(x.data(), out.data());
    EXPECT_LT(rel_l2(out, reference(x, p)), 1e-5) << pd->implementation();
}

INSTANTIATE_TEST_SUITE_P(
    Shapes,
    PulseDopplerCpu,
    ::testing::Values(
        chain_case{
            8, 1, 37, 5, 0, mti_mode::none, true, envelope::mode::square_law, false },
        chain_case{
            8, 3, 37, 30, 0, mti_mode::none, false, envelope::mode::square_law, false },
        chain_case{
            9, 2, 41, 7, 12, mti_mode::two_pulse, true, envelope::mode::linear, false },
        chain_case{ 7,
                    2,
                    33,
                    33,
                    9,
                    mti_mode::three_pulse,
                    true,
                    envelope::mode::square_law,
                    true },
        chain_case{
            2, 1, 1, 1, 2, mti_mode::none, true, envelope::mode::square_law, false }));

TEST(PulseDoppler, test_002_bad_parameters_name_the_parameter)
{
    const auto cpu = kernels::backend::cpu;
    auto ok = make_params(
        4, 2, 10, 10, 4, mti_mode::none, true, envelope::mode::square_law, false, 1);
    EXPECT_NO_THROW(pulse_doppler_processor::make(cpu, ok));
    auto p = ok;
    p.nrange = 0;
    expect_invalid([&] { pulse_doppler_processor::make(cpu, p); },
                   "pulse_doppler_processor: nrange");
    p = ok;
    p.channels = 0;
    expect_invalid([&] { pulse_doppler_processor::make(cpu, p); },
                   "pulse_doppler_processor: channels");
    // npulses: 2 passes without MTI, 1 throws; three_pulse needs 3.
    p = ok;
    p.npulses = 2;
    p.nfft = 0;
    EXPECT_NO_THROW(pulse_doppler_processor::make(cpu, p));
    p.npulses = 1;
    expect_invalid([&] { pulse_doppler_processor::make(cpu, p); },
                   "pulse_doppler_processor: npulses");
    p = ok;
    p.mti = mti_mode::three_pulse;
    p.npulses = 3;
    p.nfft = 3;
    EXPECT_NO_THROW(pulse_doppler_processor::make(cpu, p));
    p.npulses = 2;
    p.nfft = 2;
    expect_invalid([&] { pulse_doppler_processor::make(cpu, p); },
                   "pulse_doppler_processor: npulses");
    // nfft: npulses passes (and 0), npulses - 1 throws.
    p = ok;
    p.nfft = 3;
    expect_invalid([&] { pulse_doppler_processor::make(cpu, p); },
                   "pulse_doppler_processor: nfft");
    // waveform: nrange samples pass, nrange + 1 and none throw.
    p = ok;
    p.waveform = random_complex(11, 1);
    expect_invalid([&] { pulse_doppler_processor::make(cpu, p); },
                   "pulse_doppler_processor: waveform");
    p.waveform.clear();
    expect_invalid([&] { pulse_doppler_processor::make(cpu, p); },
                   "pulse_doppler_processor: waveform");
    p = ok;
    p.doppler_window.nbar = 0;
    p.doppler_window = window_spec::make("taylor");
    p.doppler_window.nbar = 0;
    expect_invalid([&] { pulse_doppler_processor::make(cpu, p); },
                   "pulse_doppler_processor: doppler_nbar");
}

TEST(PulseDoppler, test_003_a_bad_window_names_which_of_the_two)
{
    const auto cpu = kernels::backend::cpu;
    const auto ok = make_params(
        4, 2, 10, 10, 4, mti_mode::none, true, envelope::mode::square_law, false, 1);
    // The same bad setting on each window in turn: the message names that window's
    // parameter and not the other's.
    struct bad {
        const char* what;
        window_spec w;
    };
    window_spec taylor = window_spec::make("taylor");
    taylor.nbar = 0;
    window_spec chebyshev = window_spec::make("chebyshev");
    chebyshev.sll_db = -3.0;
    window_spec kaiser = window_spec::make("kaiser");
    kaiser.beta = -1.0;
    const std::vector<bad> cases = { { "nbar", taylor },
                                     { "sll_db", chebyshev },
                                     { "beta", kaiser } };
    for (const auto& c : cases) {
        for (const bool range : { true, false }) {
            auto p = ok;
            (range ? p.range_window : p.doppler_window) = c.w;
            const std::string name = std::string(range ? "range_" : "doppler_") + c.what;
            const std::string other = std::string(range ? "doppler_" : "range_") + c.what;
            try {
                pulse_doppler_processor::validate(p);
                ADD_FAILURE() << "no exception for " << name;
            } catch (const std::invalid_argument& e) {
                const std::string m = e.what();
                EXPECT_NE(m.find("pulse_doppler_processor: " + name), std::string::npos)
                    << m;
                EXPECT_EQ(m.find(other), std::string::npos) << m;
            }
        }
    }
    // A bad name, through window_spec::make with the block's prefix.
    expect_invalid(
        [] {
            window_spec::make("gauss", 4, 35, 6, "pulse_doppler_processor", "doppler_");
        },
        "pulse_doppler_processor: doppler_window");
}

// ---- CUDA against the CPU chain ----

struct cuda_case {
    chain_case shape;
    bool fused_doppler;
    kernels::pulse_compression::method pc_method =
        kernels::pulse_compression::method::fft;
};

class PulseDopplerCuda : public ::testing::TestWithParam<cuda_case>
{
};

TEST_P(PulseDopplerCuda, test_010_matches_cpu_chain)
{
    GPURADAR_REQUIRE_CUDA();
    const auto c = GetParam().shape;
    pulse_doppler_processor::fusion f;
    f.fused_doppler = GetParam().fused_doppler;
    auto p = make_params(c.P, c.C, c.R, c.L, c.nfft, c.mti, c.fftshift, c.env, c.db, 7);
    // Both backends on the same matched-filter method (their automatic crossovers
    // differ).
    // (overlap_save resolves to fft on the CPU).
    p.pc_method = GetParam().pc_method;
    kernels::cuda_stream stream;
    auto gpu = pulse_doppler_processor::make(kernels::backend::cuda, p, stream.ref(), f);
    if (p.pc_method == kernels::pulse_compression::method::overlap_save)
        EXPECT_NE(gpu->implementation().find("pc: overlap_save"), std::string::npos)
            << gpu->implementation();
    auto cpu = pulse_doppler_processor::make(kernels::backend::cpu, p);
    const std::size_t nfft = gpu->nfft();
    const bool pow2 = (nfft & (nfft - 1)) == 0 && nfft <= 4096;
    const std::string impl = gpu->implementation();
    std::printf("[ impl ] %s\n", impl.c_str());
    EXPECT_EQ(impl.find("doppler: fused kernel") != std::string::npos,
              f.fused_doppler && pow2)
        << impl;
    const auto x = random_complex(gpu->input_size(), 8);
    auto d_in = to_device(x, stream);
    kernels::device_memory d_out(gpu->output_size() * sizeof(float));
    poison(d_out, stream);
    gpu->run(d_in.as<cfloat>(), d_out.as<float>());
    const auto got = to_host<float>(d_out, gpu->output_size(), stream);
    std::vector<float> want(cpu->output_size());
    cpu->run(x.data(), want.data());
    EXPECT_LT(rel_l2(got, want), 1e-5) << gpu->implementation();
    EXPECT_EQ(rel_l2(to_host<cfloat>(d_in, x.size(), stream), x), 0.0);
}

std::vector<cuda_case> cuda_cases()
{
    const std::vector<chain_case> shapes = {
        // PD-C-like, one channel, FFT lengths 4374 and 64.
        { 64, 1, 4096, 256, 0, mti_mode::none, true, envelope::mode::square_law, false },
        // Fused Doppler lengths: odd and even log2 (one plain radix-2 stage or none), the
        // largest tile (4096), one range bin per tile, partial tiles, 2 pulses.
        { 128, 3, 1000, 100, 0, mti_mode::none, true, envelope::mode::square_law, false },
        { 100,
          2,
          333,
          60,
          1024,
          mti_mode::two_pulse,
          true,
          envelope::mode::square_law,
          false },
        { 7, 2, 45, 20, 8, mti_mode::three_pulse, false, envelope::mode::linear, false },
        { 300, 1, 50, 9, 4096, mti_mode::none, true, envelope::mode::square_law, true },
        { 2, 5, 97, 3, 2, mti_mode::none, true, envelope::mode::square_law, false },
        { 3, 1, 64, 64, 4, mti_mode::none, false, envelope::mode::square_law, false },
        // Channels > 1, odd sizes, zero-padded Doppler, every MTI and envelope form.
        { 33,
          4,
          777,
          200,
          40,
          mti_mode::three_pulse,
          true,
          envelope::mode::square_law,
          false },
        { 17,
          3,
          1001,
          37,
          17,
          mti_mode::two_pulse,
          false,
          envelope::mode::linear,
          false },
        { 16, 2, 515, 64, 32, mti_mode::none, true, envelope::mode::square_law, true },
        // Register-first fused kernel (nfft >= 128, full tiles): every canceller order,
        // partial last tiles, linear and dB envelopes.
        { 128,
          3,
          100,
          20,
          0,
          mti_mode::three_pulse,
          true,
          envelope::mode::linear,
          false },
        { 256,
          2,
          70,
          16,
          0,
          mti_mode::two_pulse,
          false,
          envelope::mode::square_law,
          true },
        // The two-pass plans (radix 16 then 2 / 8): nfft 512 zero-padded, nfft 2048.
        { 40, 2, 37, 8, 512, mti_mode::none, true, envelope::mode::square_law, false },
        { 20, 1, 20, 5, 2048, mti_mode::two_pulse, false, envelope::mode::linear, false },
        // PD-C's Doppler shape (nfft = npulses = 1024) on the wide 8192-sample tile (8
        // range bins) with the three-pulse canceller and a partial last tile (21 bins).
        { 1024, 1, 21, 5, 0, mti_mode::three_pulse, true, envelope::mode::linear, false },
    };
    std::vector<cuda_case> v;
    for (const auto& s : shapes)
        for (bool fused : { true, false })
            v.push_back({ s, fused });
    // Overlap-save pulse compression: the fused Doppler kernel reads its plain
    // rows x nrange CPI (row stride nrange) instead of the FFT workspace.
    for (const auto& s : shapes)
        for (bool fused : { true, false })
            v.push_back({ s, fused, kernels::pulse_compression::method::overlap_save });
    return v;
}

INSTANTIATE_TEST_SUITE_P(ShapesAndFusions,
                         PulseDopplerCuda,
                         ::testing::ValuesIn(cuda_cases()));

TEST(PulseDopplerCudaApi, test_011_output_and_waveform_change_between_queued_runs)
{
    GPURADAR_REQUIRE_CUDA();
    kernels::cuda_stream stream;
    auto p = make_params(
        12, 2, 900, 100, 16, mti_mode::none, true, envelope::mode::square_law, false, 9);
    p.pc_method = kernels::pulse_compression::method::fft;
    auto gpu = pulse_doppler_processor::make(kernels::backend::cuda, p, stream.ref());
    const auto x = random_complex(gpu->input_size(), 10);
    auto d_in = to_device(x, stream);
    kernels::device_memory a(gpu->output_size() * sizeof(float)),
        b(gpu->output_size() * sizeof(float));
    poison(a, stream);
    poison(b, stream);
    const auto s2 = random_complex(300, 11);
    gpu->run(d_in.as<cfloat>(), a.as<float>());
    gpu->set_waveform(s2); // a new FFT length too
    gpu->run(d_in.as<cfloat>(), b.as<float>());
    std::vector<float> want_a(gpu->output_size()), want_b(gpu->output_size());
    pulse_doppler_processor::make(kernels::backend::cpu, p)->run(x.data(), want_a.data());
    auto p2 = p;
    p2.waveform = s2;
    pulse_doppler_processor::make(kernels::backend::cpu, p2)
        ->run(x.data(), want_b.data());
    EXPECT_LT(rel_l2(to_host<float>(a, gpu->output_size(), stream), want_a), 1e-5);
    EXPECT_LT(rel_l2(to_host<float>(b, gpu->output_size(), stream), want_b), 1e-5);
    // A third buffer after the first two, queued back to back.
    kernels::device_memory c3(gpu->output_size() * sizeof(float));
    poison(c3, stream);
    gpu->run(d_in.as<cfloat>(), c3.as<float>());
    gpu->run(d_in.as<cfloat>(), a.as<float>());
    EXPECT_LT(rel_l2(to_host<float>(c3, gpu->output_size(), stream), want_b), 1e-5);
    EXPECT_LT(rel_l2(to_host<float>(a, gpu->output_size(), stream), want_b), 1e-5);
}

TEST(PulseDopplerCudaOverlapSave, test_012_waveform_change_between_queued_runs)
{
    GPURADAR_REQUIRE_CUDA();
    kernels::cuda_stream stream;
    auto p = make_params(12,
                         2,
                         900,
                         100,
                         16,
                         mti_mode::two_pulse,
                         true,
                         envelope::mode::square_law,
                         false,
                         19);
    p.pc_method = kernels::pulse_compression::method::overlap_save;
    auto gpu = pulse_doppler_processor::make(kernels::backend::cuda, p, stream.ref());
    EXPECT_NE(gpu->implementation().find("pc: overlap_save: F = "), std::string::npos)
        << gpu->implementation();
    const auto x = random_complex(gpu->input_size(), 20);
    auto d_in = to_device(x, stream);
    // Segment FFT lengths 1024, 1024, 2048 (nrange 900), the last with L = nrange.
    const std::vector<std::vector<cfloat>> waves = { p.waveform,
                                                     random_complex(300, 21),
                                                     random_complex(900, 22) };
    std::vector<kernels::device_memory> outs;
    for (std::size_t i = 0; i < waves.size(); ++i) {
        outs.emplace_back(gpu->output_size() * sizeof(float));
        poison(outs.back(), stream);
    }
    for (std::size_t i = 0; i < waves.size(); ++i) {
        if (i > 0)
            gpu->set_waveform(waves[i]);
        gpu->run(d_in.as<cfloat>(), outs[i].as<float>());
    }
    for (std::size_t i = 0; i < waves.size(); ++i) {
        auto pi = p;
        pi.waveform = waves[i];
        std::vector<float> want(gpu->output_size());
        pulse_doppler_processor::make(kernels::backend::cpu, pi)
            ->run(x.data(), want.data());
        EXPECT_LT(rel_l2(to_host<float>(outs[i], gpu->output_size(), stream), want), 1e-5)
            << i;
    }
}

TEST(PulseDopplerCudaFused, test_013_map_not_16_byte_aligned)
{
    // The register-first fused kernel stores 4 Doppler bins at once only into a 16-byte
    // aligned map; one float past an allocation takes its scalar path.
    GPURADAR_REQUIRE_CUDA();
    kernels::cuda_stream stream;
    auto p = make_params(
        128, 2, 77, 10, 0, mti_mode::none, true, envelope::mode::square_law, false, 23);
    auto gpu = pulse_doppler_processor::make(kernels::backend::cuda, p, stream.ref());
    EXPECT_NE(gpu->implementation().find("doppler: fused kernel"), std::string::npos)
        << gpu->implementation();
    const auto x = random_complex(gpu->input_size(), 24);
    auto d_in = to_device(x, stream);
    kernels::device_memory d_out((gpu->output_size() + 1) * sizeof(float));
    poison(d_out, stream);
    gpu->run(d_in.as<cfloat>(), d_out.as<float>() + 1);
    const auto all = to_host<float>(d_out, gpu->output_size() + 1, stream);
    const std::vector<float> got(all.begin() + 1, all.end());
    std::vector<float> want(gpu->output_size());
    pulse_doppler_processor::make(kernels::backend::cpu, p)->run(x.data(), want.data());
    EXPECT_LT(rel_l2(got, want), 1e-5);
}

// sc16 and sc8 CPIs quantised from an fc32 CPI give its linear (magnitude) map within
// the quantisation error. The chain before the envelope is linear and the error e is
// independent of x, so ||map_q - map|| <= ||L e|| and ||L e|| / ||L x|| ~ sigma_e /
// sigma_x, sigma_e^2 = 2 LSB^2 / 12 (each part uniform in +-LSB/2), sigma_x^2 = 2 s^2:
// the bound LSB / (sqrt(12) s), doubled for the spread of one CPI's error (thousands of
// samples). Read with the wrong scale (sc8 as 1/32768) the map is 256 times too small
// and the error about 1.
TEST(PulseDoppler, test_004_integer_input_within_quantisation_error)
{
    const double s = 0.2; // RMS of each part, in full scale
    auto p = make_params(
        16, 2, 300, 31, 16, mti_mode::none, true, envelope::mode::linear, false, 9);
    const auto x = random_complex(p.npulses * p.channels * p.nrange, 10, float(s));
    auto fc32 = pulse_doppler_processor::make(kernels::backend::cpu, p);
    std::vector<float> want(fc32->output_size());
    fc32->run(x.data(), want.data());

    const auto q16 = quantise<std::int16_t>(x);
    const auto q8 = quantise<std::int8_t>(x);
    struct variant {
        kernels::sample_format f;
        const void* codes;
        double lsb;
    };
    for (const auto& v :
         { variant{ kernels::sample_format::sc16, q16.data(), 1.0 / 32768 },
           variant{ kernels::sample_format::sc8, q8.data(), 1.0 / 128 } }) {
        SCOPED_TRACE(kernels::to_string(v.f));
        p.input = v.f;
        auto pd = pulse_doppler_processor::make(kernels::backend::cpu, p);
        std::vector<float> got(pd->output_size(), NAN);
        pd->run_samples(v.codes, got.data());
        const double bound = 2.0 * v.lsb / (std::sqrt(12.0) * s);
        const double err = rel_l2(got, want);
        std::printf("[ quantised ] %s: error %.3g, bound %.3g\n",
                    kernels::to_string(v.f),
                    err,
                    bound);
        EXPECT_LT(err, bound);
        EXPECT_GT(err, 0.0) << "a quantised CPI cannot give the float map exactly";
        // run_samples is the conversion then run(): the same bits as run() on the
        // codes' exact values.
        std::vector<cfloat> exact(x.size());
        for (std::size_t i = 0; i < x.size(); ++i)
            exact[i] = kernels::sample_at(v.codes, v.f, i);
        std::vector<float> direct(pd->output_size());
        pd->run(exact.data(), direct.data());
        EXPECT_TRUE(std::memcmp(got.data(), direct.data(), got.size() * sizeof(float)) ==
                    0);
    }
}

// The acceptance test on the CPU chain: CPIs quantised to sc16 and sc8 from an
// fc32 CPI (noise and four targets well inside full scale) give the same CFAR
// detections, cell for cell, as the fc32 CPI. The quantisation noise (LSB / sqrt(12) per
// part) is 48 dB (sc8: 0.1 full-scale noise = 12.8 codes RMS -> 33 dB) below the
// receiver noise, so only a cell within a fraction of a percent of its threshold could
// change; with this seed none is, and every target is found by every format.
TEST(PulseDoppler, test_004b_integer_input_gives_the_same_detections)
{
    const std::size_t P = 32, R = 600;
    auto p = make_params(
        P, 1, R, 1, 32, mti_mode::none, true, envelope::mode::square_law, false, 1);
    p.waveform = kernels::lfm_chirp(5e6, 8e-6, 10e6); // 80 samples
    p.range_window = window_spec::make("hamming");
    const double noise = 0.1; // RMS of each part, in full scale
    auto x = random_complex(P * R, 20261129, float(noise));
    struct target {
        std::size_t delay;
        double doppler_cycles; // per pulse
        double amplitude;
    };
    const target targets[] = { { 40, 0.125, 0.04 },
                               { 200, -0.3125, 0.03 },
                               { 333, 0.0, 0.05 },
                               { 500, 0.4375, 0.03 } };
    for (const auto& t : targets)
        for (std::size_t n = 0; n < P; ++n)
            for (std::size_t k = 0; k < p.waveform.size() && t.delay + k < R; ++k)
                x[n * R + t.delay + k] +=
                    cfloat(
                        std::polar(t.amplitude, 2 * pi * t.doppler_cycles * double(n))) *
                    p.waveform[k];
    for (const auto& v : x)
        ASSERT_LT(std::max(std::abs(v.real()), std::abs(v.imag())), 1.0f) << "clipped";

    kernels::cfar_2d::params cp;
    cp.nrange = R;
    cp.ndoppler = 32;
    cp.guard_range = 2;
    cp.train_range = 8;
    cp.guard_doppler = 1;
    cp.train_doppler = 2;
    cp.pfa = 1e-5;
    cp.local_max = true;
    auto detect = [&](const std::vector<float>& map) {
        auto cfar = kernels::cfar_2d::make(kernels::backend::cpu, cp);
        std::vector<std::uint8_t> mask(map.size());
        cfar->run(map.data(), mask.data(), nullptr, 1);
        return cfar->collect().detections;
    };
    using cell = std::pair<std::uint32_t, std::uint32_t>;
    auto cells = [](const std::vector<kernels::cfar_detection>& ds) {
        std::vector<cell> c;
        for (const auto& d : ds)
            c.emplace_back(d.range_bin, d.doppler_bin);
        return c;
    };
    auto fc32 = pulse_doppler_processor::make(kernels::backend::cpu, p);
    std::vector<float> map(fc32->output_size());
    fc32->run(x.data(), map.data());
    const auto want = detect(map);
    const auto want_cells = cells(want);
    std::printf("[ detections ] fc32: %zu\n", want.size());
    for (const auto& t : targets) {
        const auto bin = static_cast<std::uint32_t>(
            std::lround(16 + 32 * t.doppler_cycles)); // fftshift: zero Doppler at 16
        EXPECT_NE(std::find(want_cells.begin(), want_cells.end(), cell(t.delay, bin)),
                  want_cells.end())
            << "target at range " << t.delay << ", Doppler bin " << bin
            << " not detected";
    }
    const auto q16 = quantise<std::int16_t>(x);
    const auto q8 = quantise<std::int8_t>(x);
    for (const auto f : { kernels::sample_format::sc16, kernels::sample_format::sc8 }) {
        SCOPED_TRACE(kernels::to_string(f));
        p.input = f;
        auto pd = pulse_doppler_processor::make(kernels::backend::cpu, p);
        std::vector<float> qmap(pd->output_size(), NAN);
        pd->run_samples(f == kernels::sample_format::sc16
                            ? static_cast<const void*>(q16.data())
                            : static_cast<const void*>(q8.data()),
                        qmap.data());
        EXPECT_GT(rel_l2(qmap, map), 0.0) << "quantised: the maps cannot be equal";
        const auto got = detect(qmap);
        ASSERT_EQ(cells(got), want_cells);
        // CFAR is scale-free: the powers show that the integers were read at 1.0 = full
        // scale (a wrong scale is off by 2^16 or more).
        for (std::size_t i = 0; i < got.size(); ++i)
            EXPECT_NEAR(got[i].power / want[i].power, 1.0, 0.05);
    }
}

// sc16 / sc8 on CUDA: pulse compression's first kernel converts the integers as it loads
// them, for every matched-filter method and both Doppler paths. The map from fresh random
// codes must be the same engine's run() on the codes' exact values bit for bit (the fused
// conversion is exactly x / 32768, x / 128, as VOLK's on the CPU), and the CPU twin's
// run_samples within float rounding. Output poisoned, input unchanged.
TEST(PulseDopplerCudaApi, test_014_integer_input_matches_cpu)
{
    GPURADAR_REQUIRE_CUDA();
    using pc_method = kernels::pulse_compression::method;
    const std::uint32_t seed = std::random_device{}();
    SCOPED_TRACE("seed " + std::to_string(seed));
    auto p = make_params(32,
                         2,
                         1000,
                         101,
                         32,
                         mti_mode::two_pulse,
                         true,
                         envelope::mode::square_law,
                         false,
                         11);
    const std::size_t n = p.npulses * p.channels * p.nrange;
    const auto q16 = random_codes<std::int16_t>(n, seed);
    const auto q8 = random_codes<std::int8_t>(n, seed + 1);
    kernels::cuda_stream stream;
    for (const pc_method m : { pc_method::fir, pc_method::fft, pc_method::overlap_save })
        for (const bool fused : { true, false })
            for (auto f : { kernels::sample_format::sc16, kernels::sample_format::sc8 }) {
                SCOPED_TRACE(std::string(kernels::to_string(f)) + ", " +
                             kernels::pulse_compression::to_string(m) +
                             (fused ? ", fused Doppler" : ", separate Doppler"));
                p.input = f;
                p.pc_method = m;
                pulse_doppler_processor::fusion fu;
                fu.fused_doppler = fused;
                auto gpu = pulse_doppler_processor::make(
                    kernels::backend::cuda, p, stream.ref(), fu);
                auto cpu = pulse_doppler_processor::make(kernels::backend::cpu, p);
                const bool is16 = f == kernels::sample_format::sc16;
                const auto d_in = is16 ? to_device(q16, stream) : to_device(q8, stream);
                const auto d_exact =
                    to_device(is16 ? exact_values(q16) : exact_values(q8), stream);
                kernels::device_memory d_out(gpu->output_size() * sizeof(float));
                kernels::device_memory d_ref(gpu->output_size() * sizeof(float));
                poison(d_out, stream);
                poison(d_ref, stream);
                gpu->run_samples(d_in.get(), d_out.as<float>());
                gpu->run(d_exact.as<cfloat>(), d_ref.as<float>());
                const auto got = to_host<float>(d_out, gpu->output_size(), stream);
                const auto ref = to_host<float>(d_ref, gpu->output_size(), stream);
                EXPECT_TRUE(
                    std::memcmp(got.data(), ref.data(), got.size() * sizeof(float)) == 0)
                    << gpu->implementation();
                std::vector<float> want(cpu->output_size());
                cpu->run_samples(is16 ? static_cast<const void*>(q16.data())
                                      : static_cast<const void*>(q8.data()),
                                 want.data());
                EXPECT_LT(rel_l2(got, want), 1e-5) << gpu->implementation();
                if (is16)
                    EXPECT_TRUE(to_host<std::int16_t>(d_in, q16.size(), stream) == q16);
                else
                    EXPECT_TRUE(to_host<std::int8_t>(d_in, q8.size(), stream) == q8);
            }
}

} // namespace
} // namespace gpuradar::test
