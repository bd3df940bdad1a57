/* envelope: CPU twin against an fp64 reference; CUDA against the CPU twin. */
#include "test_support.h"
#include <gpuradar/kernels/pulse_doppler/envelope.h>

namespace gpuradar::test {
namespace {

using kernels::envelope;

struct envelope_case {
    envelope::mode mode;
    bool db;
};

std::vector<double> reference(const std::vector<cfloat>& x, envelope_case c)
{
    std::vector<double> y(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
        const double p = std::norm(std::complex<double>(x[i]));
        const double v = c.mode == envelope::mode::square_law ? p : std::sqrt(p);
        y[i] = c.db ? (c.mode == envelope::mode::square_law ? 10.0 * std::log10(v)
                                                            : 20.0 * std::log10(v))
                    : v;
    }
    return y;
}

class EnvelopeCpu : public ::testing::TestWithParam<envelope_case>
{
};

TEST_P(EnvelopeCpu, test_001_matches_fp64_reference)
{
    const auto c = GetParam();
    // 1001: odd, not a multiple of any SIMD width.
    const auto x = random_complex(1001, 7);
    std::vector<float> y(x.size(), NAN);
    envelope::make(kernels::backend::cpu, c.mode, c.db)
        ->run(x.data(), y.data(), x.size());
    EXPECT_LT(rel_l2(y, reference(x, c)), 1e-6);
}

INSTANTIATE_TEST_SUITE_P(
    AllModes,
    EnvelopeCpu,
    ::testing::Values(envelope_case{ envelope::mode::square_law, false },
                      envelope_case{ envelope::mode::square_law, true },
                      envelope_case{ envelope::mode::linear, false },
                      envelope_case{ envelope::mode::linear, true }));

TEST(EnvelopeApi, test_002_unknown_mode_names_parameter)
{
    try {
        envelope::parse_mode("cubic");
        FAIL() << "no exception";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("mode"), std::string::npos);
        EXPECT_NE(std::string(e.what()).find("cubic"), std::string::npos);
    }
    EXPECT_EQ(envelope::parse_mode("linear"), envelope::mode::linear);
    EXPECT_EQ(envelope::parse_mode("square_law"), envelope::mode::square_law);
}

TEST(EnvelopeApi, test_003_zero_and_nan_samples_do_not_throw)
{
    std::vector<cfloat> x = { { 0, 0 }, { NAN, 1 }, { 3, 4 } };
    std::vector<float> y(3);
    envelope::make(kernels::backend::cpu, envelope::mode::linear, true)
        ->run(x.data(), y.data(), 3);
    EXPECT_TRUE(std::isinf(y[0]) && y[0] < 0);
    EXPECT_TRUE(std::isnan(y[1]));
    EXPECT_NEAR(y[2], 20.0 * std::log10(5.0), 1e-5);
}

TEST(EnvelopeApi, test_004_cuda_without_device_is_a_clear_error)
{
    if (kernels::cuda_available())
        GTEST_SKIP() << "a CUDA device is present";
    try {
        envelope::make(kernels::backend::cuda, envelope::mode::linear, false);
        FAIL() << "no exception";
    } catch (const kernels::cuda_error& e) {
        EXPECT_NE(std::string(e.what()).find("envelope"), std::string::npos);
    }
}

class EnvelopeCuda : public ::testing::TestWithParam<envelope_case>
{
};

TEST_P(EnvelopeCuda, test_010_matches_cpu_twin)
{
    GPURADAR_REQUIRE_CUDA();
    const auto c = GetParam();
    kernels::cuda_stream stream;
    auto gpu = envelope::make(kernels::backend::cuda, c.mode, c.db, stream.ref());
    auto cpu = envelope::make(kernels::backend::cpu, c.mode, c.db);
    // Odd sizes exercise the scalar tail; offset 1 exercises the unaligned path.
    std::uint32_t seed = 100;
    for (std::size_t n :
         { std::size_t(1), std::size_t(255), std::size_t(4097), std::size_t(1) << 20 }) {
        for (std::size_t offset : { std::size_t(0), std::size_t(1) }) {
            const auto x = random_complex(n + offset, seed++);
            auto d_in = to_device(x, stream);
            kernels::device_memory d_out((n + offset) * sizeof(float));
            poison(d_out, stream);
            gpu->run(d_in.as<cfloat>() + offset, d_out.as<float>() + offset, n);
            const auto y = to_host<float>(d_out, n + offset, stream);
            std::vector<float> got(y.begin() + offset, y.end());
            std::vector<float> want(n);
            cpu->run(x.data() + offset, want.data(), n);
            EXPECT_LT(rel_l2(got, want), 1e-5) << "n=" << n << " offset=" << offset;
        }
    }
}

INSTANTIATE_TEST_SUITE_P(
    AllModes,
    EnvelopeCuda,
    ::testing::Values(envelope_case{ envelope::mode::square_law, false },
                      envelope_case{ envelope::mode::square_law, true },
                      envelope_case{ envelope::mode::linear, false },
                      envelope_case{ envelope::mode::linear, true }));

} // namespace
} // namespace gpuradar::test
