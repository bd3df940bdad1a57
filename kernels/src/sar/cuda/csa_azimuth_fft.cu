/*
 * The four-step azimuth transform of the chirp-scaling focusing (csa_azimuth_fft.h).
 *
 * One kernel serves all four passes: a block transforms `len` samples (one sequence's
 * stride apart) of each of 32 adjacent range columns of one plane, with the len-point
 * FFT split once more, len = R1 * R2 (R1 = 16, or 8 for len 64): sample n = n1 + R2 r,
 * bin k = k1 + R1 k2. A thread loads the R1 samples r of one (column, n1) straight
 * from global memory, runs the R1-point DFT in registers, multiplies by W_len^(n1 k1)
 * and writes them to shared memory; after one barrier a thread reads the R2 values n1
 * of one (column, k1), runs the R2-point DFT in registers and stores bin k1 + R1 k2 to
 * the k-th sample position in global memory. Lanes of a warp are 32 adjacent columns,
 * so every global access is a 256-byte row segment, and the shared memory (a column's
 * values len + 1 apart) is conflict-free both ways. An inverse transform is the forward
 * one conjugated on the way in and out; the inter-pass twiddle W_naz^(plane * index) is
 * applied to the outputs (forward pass 1) or to the inputs (inverse pass 1).
 */
#include "common/cuda/complex_math.cuh"
#include "common/cuda/cuda_check.h"
#include "common/cuda/device_upload.h"
#include "common/cuda/power_of_two.h"
#include "common/cuda/smem_fft.cuh"
#include "common/dft_tables.h"
#include "sar/cuda/csa_azimuth_fft.h"
#include <vector>

namespace gpuradar::kernels::detail {
namespace {

constexpr const char* who = "csa";
constexpr unsigned tile_columns = 32;
constexpr int pass_threads = 256;
constexpr unsigned min_log2_part = 6, max_log2_part = 8;

enum class twiddle_side { none, on_output, on_input };

struct pass_args {
    const float2* in;
    float2* out;
    std::size_t nrange;          //!< columns
    std::size_t seq_stride;      //!< elements between a sequence's consecutive samples
    std::size_t plane_stride;    //!< elements between planes
    const float2* fft_twiddle;   //!< len values W_len^t
    const float2* plane_twiddle; //!< naz values W_naz^t
    twiddle_side twiddle;
    bool inverse;
};

__device__ __forceinline__ float2 conj_if(float2 v, bool c)
{
    return c ? make_float2(v.x, -v.y) : v;
}

template <int LEN>
__global__ void __launch_bounds__(pass_threads, 4) csa_azimuth_pass(pass_args a)
{
    constexpr int R1 = LEN >= 128 ? 16 : 8, R2 = LEN / R1;
    constexpr unsigned S = LEN + 1;
    extern __shared__ float2 sm[]; // tile_columns * S: over the static limit at 256
    const unsigned plane = blockIdx.y;
    const unsigned c = threadIdx.x % tile_columns;
    const std::size_t col0 = std::size_t(blockIdx.x) * tile_columns;
    const bool live = col0 + c < a.nrange;
    const std::size_t base = plane * a.plane_stride + col0 + c;
    const bool twiddle_in = a.twiddle == twiddle_side::on_input && plane != 0;
    const bool twiddle_out = a.twiddle == twiddle_side::on_output && plane != 0;
    // Pass 1: (column, n1) per thread, R1 samples n1 + R2 r from global memory.
    for (unsigned n1 = threadIdx.x / tile_columns; n1 < R2;
         n1 += pass_threads / tile_columns) {
        float2 v[R1];
#pragma unroll
        for (int r = 0; r < R1; ++r)
            v[r] = live ? a.in[base + (n1 + R2 * r) * a.seq_stride]
                        : make_float2(0.0f, 0.0f);
#pragma unroll
        for (int r = 0; r < R1; ++r) {
            v[r] = conj_if(v[r], a.inverse);
            if (twiddle_in)
                v[r] = cmul(v[r], __ldg(a.plane_twiddle + plane * (n1 + R2 * r)));
        }
        smem_fft_reg_dft<R1>(v);
        if (n1 != 0)
            smem_fft_twiddle<R1>(v, a.fft_twiddle, n1);
#pragma unroll
        for (int k1 = 0; k1 < R1; ++k1)
            sm[c * S + k1 * R2 + n1] = v[k1];
    }
    __syncthreads();
    if (!live)
        return;
    // Pass 2: (column, k1) per thread, the R2 values n1, bins k1 + R1 k2 to global.
    for (unsigned k1 = threadIdx.x / tile_columns; k1 < R1;
         k1 += pass_threads / tile_columns) {
        float2 v[R2];
#pragma unroll
        for (int n1 = 0; n1 < R2; ++n1)
            v[n1] = sm[c * S + k1 * R2 + n1];
        smem_fft_reg_dft<R2>(v);
#pragma unroll
        for (int k2 = 0; k2 < R2; ++k2) {
            const unsigned k = k1 + R1 * k2;
            float2 x = v[k2];
            if (twiddle_out)
                x = cmul(x, __ldg(a.plane_twiddle + plane * k));
            a.out[base + k * a.seq_stride] = conj_if(x, a.inverse);
        }
    }
}

//! log2 of N1 in the split naz = N1 N2 (N1 = N2 or 2 N2).
unsigned log2_n1(std::size_t naz) { return (log2_ceil(naz) + 1) / 2; }

constexpr std::size_t shared_bytes(unsigned len)
{
    return tile_columns * (len + 1) * sizeof(float2);
}

void launch(const pass_args& a, unsigned log2len, unsigned planes, cudaStream_t s)
{
    const dim3 grid(unsigned((a.nrange + tile_columns - 1) / tile_columns), planes);
    const std::size_t bytes = shared_bytes(1u << log2len);
    switch (log2len) {
    case 6:
        csa_azimuth_pass<64><<<grid, pass_threads, bytes, s>>>(a);
        break;
    case 7:
        csa_azimuth_pass<128><<<grid, pass_threads, bytes, s>>>(a);
        break;
    default:
        csa_azimuth_pass<256><<<grid, pass_threads, bytes, s>>>(a);
        break;
    }
    GPURADAR_CUDA_CHECK_LAUNCH(who, "csa_azimuth_pass");
}

} // namespace

bool csa_azimuth_fft_supported(std::size_t naz)
{
    return power_of_two_between(naz, 2 * min_log2_part + 1, 2 * max_log2_part);
}

std::size_t csa_azimuth_fft_bin(std::size_t row, std::size_t naz)
{
    const std::size_t n1 = std::size_t(1) << log2_n1(naz), n2 = naz / n1;
    return row / n2 + n1 * (row % n2);
}

csa_azimuth_fft::csa_azimuth_fft(std::size_t naz, std::size_t nrange, cudaStream_t s)
    : d_nrange(nrange),
      d_log2n1(log2_n1(naz)),
      d_log2n2(log2_ceil(naz) - d_log2n1),
      d_twiddle_n1(upload(dft_twiddles(std::size_t(1) << d_log2n1), s, who)),
      d_twiddle_n2(upload(dft_twiddles(std::size_t(1) << d_log2n2), s, who)),
      d_twiddle_naz(upload(dft_twiddles(naz), s, who))
{
    // Only the 256-point instance needs more than the default 48 KB.
    GPURADAR_CUDA_CHECK(who,
                        cudaFuncSetAttribute(csa_azimuth_pass<256>,
                                             cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             int(shared_bytes(256))));
}

/*
 * The N1-point pass: in plane n2 (rows n2, n2 + N2, ...) the FFTs over n1, the
 * inter-pass twiddles on its outputs (forward) or inputs (inverse).
 */
void csa_azimuth_fft::pass_n1(const float2* in,
                              float2* out,
                              bool inverse,
                              cudaStream_t s) const
{
    const std::size_t n2 = std::size_t(1) << d_log2n2;
    pass_args a{};
    a.in = in;
    a.out = out;
    a.nrange = d_nrange;
    a.seq_stride = n2 * d_nrange;
    a.plane_stride = d_nrange;
    a.fft_twiddle = d_twiddle_n1.as<float2>();
    a.plane_twiddle = d_twiddle_naz.as<float2>();
    a.twiddle = inverse ? twiddle_side::on_input : twiddle_side::on_output;
    a.inverse = inverse;
    launch(a, d_log2n1, unsigned(n2), s);
}

//! The N2-point pass: in plane k1 (rows N2 k1 .. N2 k1 + N2 - 1) the FFTs over n2.
void csa_azimuth_fft::pass_n2(float2* rows, bool inverse, cudaStream_t s) const
{
    const std::size_t n2 = std::size_t(1) << d_log2n2;
    pass_args a{};
    a.in = rows;
    a.out = rows;
    a.nrange = d_nrange;
    a.seq_stride = d_nrange;
    a.plane_stride = n2 * d_nrange;
    a.fft_twiddle = d_twiddle_n2.as<float2>();
    a.twiddle = twiddle_side::none;
    a.inverse = inverse;
    launch(a, d_log2n2, 1u << d_log2n1, s);
}

void csa_azimuth_fft::forward(const float2* in, float2* out, cudaStream_t s) const
{
    pass_n1(in, out, false, s);
    pass_n2(out, false, s);
}

void csa_azimuth_fft::inverse(float2* rows, cudaStream_t s) const
{
    // The forward passes transposed.
    pass_n2(rows, true, s);
    pass_n1(rows, rows, true, s);
}

} // namespace gpuradar::kernels::detail
