/*
 * The chirp-scaling range stage in one pass over the matrix (internal): for each
 * azimuth-frequency row, phase 1, the range FFT, phase 2 with the range window, the
 * inverse range FFT, the squint resampler when there is one, and phase 3 with the
 * azimuth window, with the row held in shared memory throughout. It replaces five
 * passes (three elementwise kernels and two cuFFT transforms) by one.
 *
 * Which path csa_cuda takes: this one when nrange is a power of two from 2^9 to 2^14
 * (csa_range_rows_supported: the row and its padding fit the shared memory of one block,
 * up to 2^13, or of a two-block cluster, 2^14 on devices with clusters (sm_90 on), and
 * the transform is the module's radix-16 shared-memory FFT); cuFFT with the elementwise
 * kernels otherwise. Both are
 * checked against the CPU twin (test_csa.cc, CsaCuda).
 */
#ifndef INCLUDED_GPURADAR_KERNELS_CSA_RANGE_ROWS_H
#define INCLUDED_GPURADAR_KERNELS_CSA_RANGE_ROWS_H

#include "sar/csa_backends.h"
#include <cuda_runtime.h>
#include <cstddef>

namespace gpuradar::kernels::detail {

struct csa_range_rows_args {
    float2* rows;                //!< naz x nrange, transformed in place
    const csa_quadratic* q1;     //!< per row: phase 1 over range sample k
    const csa_quadratic* q2;     //!< per row: phase 2 over signed range bin
    const csa_quadratic* q3;     //!< per row: phase 3 over output column j
    const float* range_weight;   //!< per range bin
    const float* azimuth_weight; //!< per row (0: the row is outside the Doppler band)
    const int* resample_first;   //!< squint only (else null): per output column
    const float* resample_taps;  //!< squint only: csa_resample_taps per output column
    const float2* twiddle;       //!< nrange values exp(-2 pi i t / nrange)
    std::size_t naz;
    unsigned nrange;
};

//! nrange is a power of two in [512, 8192], or 16384 on a device with thread-block
//! clusters (csa_range_rows_pair.h).
bool csa_range_rows_supported(std::size_t nrange);

//! The pass's kernel and launch shape for one nrange and naz on the current device:
//! found once per csa object (the shared-memory attribute and the occupancy query are
//! host calls that need not repeat per run).
struct csa_range_rows_launch {
    void (*kernel)(csa_range_rows_args) = nullptr;
    unsigned threads = 0, blocks = 0;
    unsigned cluster = 1; //!< blocks per thread-block cluster
    std::size_t shared_bytes = 0;
};

//! Requires csa_range_rows_supported(nrange).
csa_range_rows_launch csa_range_rows_prepare(std::size_t nrange, std::size_t naz);

//! The launch configuration of `l` on `s`, its cluster size in `cluster` (which the
//! configuration points to).
cudaLaunchConfig_t csa_range_rows_config(const csa_range_rows_launch& l,
                                         cudaStream_t s,
                                         cudaLaunchAttribute& cluster);

//! Queues the pass on `s` (`l` from csa_range_rows_prepare(a.nrange, a.naz)).
void csa_range_rows(const csa_range_rows_args& a,
                    const csa_range_rows_launch& l,
                    cudaStream_t s);

} // namespace gpuradar::kernels::detail

#endif
