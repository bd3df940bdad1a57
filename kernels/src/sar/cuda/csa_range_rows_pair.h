/*
 * The fused chirp-scaling range stage with each row split over a two-block cluster
 * (internal; csa_range_rows_pair.cu has the transform's split). csa_range_rows_prepare
 * takes it for nrange = 16384, the one supported length whose row leaves no room for a
 * second row in a block's shared memory, on devices with thread-block clusters (other
 * devices take the cuFFT range path for that length); the launch is csa_range_rows'.
 */
#ifndef INCLUDED_GPURADAR_KERNELS_CSA_RANGE_ROWS_PAIR_H
#define INCLUDED_GPURADAR_KERNELS_CSA_RANGE_ROWS_PAIR_H

#include "sar/cuda/csa_range_rows.h"
#include <cstddef>

namespace gpuradar::kernels::detail {

//! nrange = 16384 and the current device launches thread-block clusters.
bool csa_range_rows_pair_supported(std::size_t nrange);

//! Requires csa_range_rows_pair_supported(nrange).
csa_range_rows_launch csa_range_rows_pair_prepare(std::size_t naz);

} // namespace gpuradar::kernels::detail

#endif
