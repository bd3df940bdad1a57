/* corner_turn: CPU twin against index arithmetic; CUDA against the CPU twin. */
#include "test_support.h"
#include <gpuradar/kernels/pulse_doppler/corner_turn.h>

namespace gpuradar::test {
namespace {

using kernels::corner_turn;

struct shape {
    std::size_t npulses, nrange, channels;
};

// The reference: the definition in corner_turn.h, written as a plain gather.
std::vector<cfloat> reference(const std::vector<cfloat>& in, shape s)
{
    std::vector<cfloat> out(in.size());
    for (std::size_t r = 0; r < s.nrange; ++r)
        for (std::size_t c = 0; c < s.channels; ++c)
            for (std::size_t p = 0; p < s.npulses; ++p)
                out[(r * s.channels + c) * s.npulses + p] =
                    in[(p * s.channels + c) * s.nrange + r];
    return out;
}

// Not multiples of 32 on either side, single rows and columns, several channels.
const shape shapes[] = { { 1, 1, 1 },      { 1, 37, 1 },    { 37, 1, 2 },
                         { 32, 32, 1 },    { 33, 31, 3 },   { 128, 900, 4 },
                         { 100, 1000, 1 }, { 2, 5000, 16 }, { 1025, 65, 1 } };

TEST(CornerTurn, test_001_cpu_matches_definition)
{
    std::uint32_t seed = 1;
    for (auto s : shapes) {
        const auto x = random_complex(s.npulses * s.nrange * s.channels, seed++);
        std::vector<cfloat> y(x.size(), cfloat(NAN, NAN));
        corner_turn::make(kernels::backend::cpu, s.npulses, s.nrange, s.channels)
            ->run(x.data(), y.data());
        EXPECT_EQ(y, reference(x, s))
            << s.npulses << "x" << s.nrange << "x" << s.channels;
    }
}

TEST(CornerTurn, test_002_bad_parameters_name_the_parameter)
{
    const auto cpu = kernels::backend::cpu;
    EXPECT_NO_THROW(corner_turn::make(cpu, 1, 1, 1));
    for (auto [param, np, nr, nc] : { std::tuple{ "npulses", 0, 1, 1 },
                                      std::tuple{ "nrange", 1, 0, 1 },
                                      std::tuple{ "channels", 1, 1, 0 } }) {
        try {
            corner_turn::make(cpu, np, nr, nc);
            FAIL() << param;
        } catch (const std::invalid_argument& e) {
            EXPECT_NE(std::string(e.what()).find(std::string("corner_turn: ") + param),
                      std::string::npos)
                << e.what();
        }
    }
}

TEST(CornerTurnCuda, test_010_matches_cpu_twin_exactly)
{
    GPURADAR_REQUIRE_CUDA();
    kernels::cuda_stream stream;
    std::uint32_t seed = 50;
    std::vector<shape> all(std::begin(shapes), std::end(shapes));
    all.push_back({ 128, 9000, 16 }); // PD-A
    all.push_back({ 70000, 3, 1 });   // more pulse tiles than gridDim.y holds
    for (auto s : all) {
        const auto x = random_complex(s.npulses * s.nrange * s.channels, seed++);
        auto d_in = to_device(x, stream);
        kernels::device_memory d_out(x.size() * sizeof(cfloat));
        poison(d_out, stream);
        corner_turn::make(
            kernels::backend::cuda, s.npulses, s.nrange, s.channels, stream.ref())
            ->run(d_in.as<cfloat>(), d_out.as<cfloat>());
        std::vector<cfloat> want(x.size());
        corner_turn::make(kernels::backend::cpu, s.npulses, s.nrange, s.channels)
            ->run(x.data(), want.data());
        // A transpose moves bits: equality, not a tolerance.
        EXPECT_EQ(to_host<cfloat>(d_out, x.size(), stream), want)
            << s.npulses << "x" << s.nrange << "x" << s.channels;
    }
}

} // namespace
} // namespace gpuradar::test
