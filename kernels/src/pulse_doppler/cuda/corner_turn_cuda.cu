/*
 * CUDA corner turn: tiled transpose through shared memory. Reads and writes are both
 * 32 consecutive complex samples (256 B) per warp; the padding column makes the column
 * reads from the tile hit 32 distinct banks (row stride 33 float2 = 66 words).
 */
#include "common/cuda/cuda_check.h"
#include "pulse_doppler/corner_turn_backends.h"
#include <cuda_runtime.h>
#include <algorithm>

namespace gpuradar::kernels::detail {
namespace {

constexpr const char* who = "corner_turn";

//! Tile edge: one warp spans a tile row, so global accesses are 256-byte runs.
constexpr unsigned tile_dim = 32;
//! Rows of threads per tile: 32 x 8 = 256 threads, each moving 4 samples; more bytes in
//! flight per thread than a 32 x 32 block while keeping 8 warps to hide latency.
constexpr unsigned tile_rows = 8;
//! CUDA's limit on gridDim.y and gridDim.z; larger counts are walked by the loops.
constexpr std::size_t max_grid_yz = 65535;

__global__ void __launch_bounds__(tile_dim* tile_rows)
    transpose_tiles(const float2* __restrict__ in,
                    float2* __restrict__ out,
                    unsigned npulses,
                    unsigned nrange,
                    unsigned channels)
{
    __shared__ float2 tile[tile_dim][tile_dim + 1];
    const std::size_t in_row = std::size_t(channels) * nrange;
    const std::size_t out_row = std::size_t(channels) * npulses;
    const unsigned r0 = blockIdx.x * tile_dim;
    for (unsigned c = blockIdx.z; c < channels; c += gridDim.z)
        for (unsigned p0 = blockIdx.y * tile_dim; p0 < npulses;
             p0 += gridDim.y * tile_dim) {
            __syncthreads(); // the previous tile has been written out
#pragma unroll
            for (unsigned j = 0; j < tile_dim; j += tile_rows) {
                const unsigned p = p0 + threadIdx.y + j, r = r0 + threadIdx.x;
                if (p < npulses && r < nrange)
                    tile[threadIdx.y + j][threadIdx.x] =
                        in[p * in_row + std::size_t(c) * nrange + r];
            }
            __syncthreads();
#pragma unroll
            for (unsigned j = 0; j < tile_dim; j += tile_rows) {
                const unsigned r = r0 + threadIdx.y + j, p = p0 + threadIdx.x;
                if (p < npulses && r < nrange)
                    out[r * out_row + std::size_t(c) * npulses + p] =
                        tile[threadIdx.x][threadIdx.y + j];
            }
        }
}

class corner_turn_cuda final : public corner_turn
{
public:
    corner_turn_cuda(std::size_t npulses,
                     std::size_t nrange,
                     std::size_t channels,
                     stream_ref s)
        : corner_turn(npulses, nrange, channels), d_stream(native(s))
    {
    }

    void run(const cfloat* in, cfloat* out) override
    {
        const dim3 grid(static_cast<unsigned>((d_nrange + tile_dim - 1) / tile_dim),
                        static_cast<unsigned>(
                            std::min((d_npulses + tile_dim - 1) / tile_dim, max_grid_yz)),
                        static_cast<unsigned>(std::min(d_channels, max_grid_yz)));
        transpose_tiles<<<grid, dim3(tile_dim, tile_rows), 0, d_stream>>>(
            reinterpret_cast<const float2*>(in),
            reinterpret_cast<float2*>(out),
            static_cast<unsigned>(d_npulses),
            static_cast<unsigned>(d_nrange),
            static_cast<unsigned>(d_channels));
        GPURADAR_CUDA_CHECK_LAUNCH(who, "transpose_tiles");
    }

private:
    cudaStream_t d_stream;
};

} // namespace

std::unique_ptr<corner_turn> make_corner_turn_cuda(std::size_t npulses,
                                                   std::size_t nrange,
                                                   std::size_t channels,
                                                   stream_ref stream)
{
    return std::make_unique<corner_turn_cuda>(npulses, nrange, channels, stream);
}

} // namespace gpuradar::kernels::detail
