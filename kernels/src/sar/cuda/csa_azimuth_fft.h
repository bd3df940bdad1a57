/*
 * The chirp-scaling azimuth transform for long columns (internal): the FFT along each
 * range column of a naz x nrange matrix as a four-step transform, naz = N1 * N2, in two
 * passes over the matrix. cuFFT's strided column kernel makes several passes with
 * poorly coalesced reads once a column no longer fits one block (naz >= 8192).
 *
 * Forward, sample n = N2 n1 + n2, bin f = k1 + N1 k2:
 *   pass 1: for each n2, an N1-point FFT over n1, times W_naz^(n2 k1), back to row N2 k1
 * + n2; pass 2: for each k1, an N2-point FFT over n2, to row N2 k1 + k2. So row N2 k1 +
 * k2 holds azimuth bin k1 + N1 k2 (csa_azimuth_fft_bin): the bins are left in
 * digit-reversed order, the range stage (which treats rows independently) reads its
 * per-row tables in that order, and the inverse (the two passes transposed: N2-point
 * inverse FFTs, then the conjugate twiddles and N1-point inverse FFTs) restores natural
 * order. No scaling either way, as cuFFT.
 *
 * Each block transforms a tile of 32 adjacent range columns of one plane, so every
 * global access is a 256-byte row segment.
 */
#ifndef INCLUDED_GPURADAR_KERNELS_CSA_AZIMUTH_FFT_H
#define INCLUDED_GPURADAR_KERNELS_CSA_AZIMUTH_FFT_H

#include <cuda_runtime.h>
#include <gpuradar/kernels/common/cuda_resources.h>
#include <cstddef>

namespace gpuradar::kernels::detail {

//! naz is a power of two in [2^13, 2^16] (N1, N2 in [64, 256]).
bool csa_azimuth_fft_supported(std::size_t naz);

//! The azimuth bin that row `row` holds after the forward transform.
std::size_t csa_azimuth_fft_bin(std::size_t row, std::size_t naz);

//! The transform for one naz and nrange on the current device: its twiddle tables
//! (uploaded on construction, on stream s) and launch shape.
class csa_azimuth_fft
{
public:
    //! Requires csa_azimuth_fft_supported(naz).
    csa_azimuth_fft(std::size_t naz, std::size_t nrange, cudaStream_t s);

    //! Forward: in (natural rows) -> out (rows in csa_azimuth_fft_bin order); in may be
    //! out.
    void forward(const float2* in, float2* out, cudaStream_t s) const;
    //! Inverse, in place: rows in csa_azimuth_fft_bin order -> natural rows.
    void inverse(float2* rows, cudaStream_t s) const;

private:
    void pass_n1(const float2* in, float2* out, bool inverse, cudaStream_t s) const;
    void pass_n2(float2* rows, bool inverse, cudaStream_t s) const;

    std::size_t d_nrange;
    unsigned d_log2n1, d_log2n2;
    device_memory d_twiddle_n1, d_twiddle_n2, d_twiddle_naz;
};

} // namespace gpuradar::kernels::detail

#endif
