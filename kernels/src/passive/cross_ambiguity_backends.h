/* Cross-ambiguity internals shared by the neutral front (cross_ambiguity.cc) and the
 * backends (internal). */
#ifndef INCLUDED_GPURADAR_KERNELS_CROSS_AMBIGUITY_BACKENDS_H
#define INCLUDED_GPURADAR_KERNELS_CROSS_AMBIGUITY_BACKENDS_H

#include <gpuradar/kernels/passive/cross_ambiguity.h>
#include <cstddef>
#include <memory>

namespace gpuradar::kernels::detail {

//! The correlation FFT length: the smallest 2^a 3^b 5^c 7^d >= n (fast on FFTW and
//! cuFFT), so that lags 0..M-1 of a linear correlation of n samples never wrap.
std::size_t caf_fft_length(std::size_t n);

//! Smallest value of 10 log10(power) in a dB map: power below FLT_MIN is clamped there.
constexpr float caf_db_floor_power = 1.17549435e-38f; // FLT_MIN

std::unique_ptr<cross_ambiguity>
make_cross_ambiguity_cpu(const cross_ambiguity_params& p);
#ifdef GPURADAR_HAVE_CUDA
std::unique_ptr<cross_ambiguity>
make_cross_ambiguity_cuda(const cross_ambiguity_params& p, stream_ref s);
#endif

} // namespace gpuradar::kernels::detail

#endif
