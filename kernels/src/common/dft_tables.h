/*
 * Tables of complex exponentials that several stages upload to their kernels (internal):
 * one definition each, so that the CPU twin, the separate CUDA stages and the fused CUDA
 * kernels use the same floats.
 */
#ifndef INCLUDED_GPURADAR_KERNELS_DFT_TABLES_H
#define INCLUDED_GPURADAR_KERNELS_DFT_TABLES_H

#include <gpuradar/kernels/common/backend.h>
#include <gpuradar/kernels/common/window.h>
#include <cstddef>
#include <vector>

namespace gpuradar::kernels::detail {

//! exp(-2 pi i t / n) for t < n (one entry for n = 0): the forward DFT's twiddles,
//! angles in double from the integer ratio, exact to float rounding.
std::vector<cfloat> dft_twiddles(std::size_t n);

//! The twiddles of one radix-r pass of an l-point transform (r even, l a multiple of r),
//! pairs by butterfly: with nb = l / r butterflies, entries 2 (q nb + n1) and
//! 2 (q nb + n1) + 1 are exp(-2 pi i k n1 / l) for k = 2 q and 2 q + 1 (q < r / 2), so
//! that a warp's butterflies n1 read pair q of theirs from consecutive places.
std::vector<cfloat> dft_pass_twiddles(std::size_t l, std::size_t r);

//! The Doppler filter's weights w[k] exp(+2 pi i s k / nfft), k < m, w the slow-time
//! window of length m (npulses less the MTI order) and s = nfft / 2 with fftshift (else
//! 0): the window and the fftshift modulation in one product per sample.
std::vector<cfloat> doppler_weights(const window_spec& window,
                                    std::size_t m,
                                    std::size_t nfft,
                                    bool fftshift);

} // namespace gpuradar::kernels::detail

#endif
