/* CPU twin of corner_turn: a blocked transpose (tiles that fit in L1, both sides); tile
 * rows of range bins shared out over the CPU pool (cpu_threads.h). */
#include "common/cpu/row_pool.h"
#include "pulse_doppler/corner_turn_backends.h"
#include <algorithm>

namespace gpuradar::kernels::detail {
namespace {

//! 32 x 32 complex samples = 8 KiB read + 8 KiB written per tile: inside any L1.
constexpr std::size_t cpu_tile = 32;

class corner_turn_cpu final : public corner_turn
{
public:
    corner_turn_cpu(std::size_t npulses, std::size_t nrange, std::size_t channels)
        : corner_turn(npulses, nrange, channels)
    {
    }

    void run(const cfloat* in, cfloat* out) override
    {
        const std::size_t in_row = d_channels * d_nrange;   // one pulse
        const std::size_t out_row = d_channels * d_npulses; // one range bin
        const std::size_t range_tiles = (d_nrange + cpu_tile - 1) / cpu_tile;
        parallel_rows(range_tiles, 1, ~0u, [&](std::size_t t0, std::size_t t1, unsigned) {
            for (std::size_t c = 0; c < d_channels; ++c)
                for (std::size_t r0 = t0 * cpu_tile;
                     r0 < std::min(t1 * cpu_tile, d_nrange);
                     r0 += cpu_tile)
                    for (std::size_t p0 = 0; p0 < d_npulses; p0 += cpu_tile) {
                        const std::size_t p1 = std::min(p0 + cpu_tile, d_npulses);
                        const std::size_t r1 = std::min(r0 + cpu_tile, d_nrange);
                        for (std::size_t r = r0; r < r1; ++r)
                            for (std::size_t p = p0; p < p1; ++p)
                                out[r * out_row + c * d_npulses + p] =
                                    in[p * in_row + c * d_nrange + r];
                    }
        });
    }
};

} // namespace

std::unique_ptr<corner_turn>
make_corner_turn_cpu(std::size_t npulses, std::size_t nrange, std::size_t channels)
{
    return std::make_unique<corner_turn_cpu>(npulses, nrange, channels);
}

} // namespace gpuradar::kernels::detail
