/*
 * The CPU CFAR's row kernels (internal): the separable sums of cfar_math.h evaluated for
 * a whole row of cells at once, lanes = adjacent columns. Every cell still adds the same
 * floats in the same order as cfar_row_sums_of / cfar_halves / cfar_sum_threshold (so
 * the CPU thresholds stay bit-identical to the CUDA segmented estimator); only the loop
 * order changes, cells side by side instead of one after the other, which the compiler
 * vectorises without reassociating anything. On x86-64 with GCC each kernel is also built
 * for AVX2 and picked at load time (target_clones; FMA is not enabled, so no product is
 * contracted into an add and the rounding is the baseline build's).
 */
#ifndef INCLUDED_GPURADAR_KERNELS_CPU_CFAR_CPU_ROWS_H
#define INCLUDED_GPURADAR_KERNELS_CPU_CFAR_CPU_ROWS_H

#include "detection/cfar_math.h"
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace gpuradar::kernels::detail::cfar_rows {

//! Sanitised copy (cfar_sanitize: non-finite -> +Inf, above cfar_max_training_power ->
//! that level) of n floats.
void sanitize(const float* in, std::size_t n, float* out);

/*!
 * Row sums of ncols cells (cfar_row_sums_of): xp is the padded row, ncols + 2 (gc + tc)
 * floats, cell c's window starting at xp[c]. Writes full, side, lo, hi (ncols each).
 */
void row_sums(const float* xp,
              std::size_t ncols,
              int gc,
              int tc,
              float* full,
              float* side,
              float* lo,
              float* hi);

/*!
 * The lead and lag sums of ncols cells (cfar_halves): lead = ((0 + a[0]) + a[1]) + ...
 * over the nlead rows a, lag = ((b[0] + b[1]) + ...) over the nlag >= 1 rows b, both in
 * the order given.
 */
void column_sums(std::size_t ncols,
                 const float* const* a,
                 int nlead,
                 const float* const* b,
                 int nlag,
                 float* lead,
                 float* lag);

//! T for cells [c0, c1) of one clip class (cfar_sum_threshold; v is ca, go or so).
void thresholds(cfar_variant v,
                const float* lead,
                const float* lag,
                std::size_t c0,
                std::size_t c1,
                const cfar_class_entry& e,
                float* t);

struct test_counts {
    std::size_t detections = 0; //!< cells with x finite and x > T
    std::size_t nonfinite = 0;  //!< cells with x NaN or +-Inf
};

//! mask[c] = x[c] finite and x[c] > t[c], for n cells.
test_counts test(const float* x, const float* t, std::size_t n, std::uint8_t* mask);

/*!
 * os: a comparator network that sorts n values ascending (Batcher's odd-even merge sort
 * of the next power of two, the comparators that touch positions >= n dropped: those
 * positions would hold +Inf and never move), pruned to the comparators that position
 * k - 1 depends on. Pairs (i, j), i < j: after a comparator, position i holds the
 * minimum and j the maximum.
 */
std::vector<std::pair<std::uint16_t, std::uint16_t>> selection_network(int n, int k);

/*!
 * os thresholds of cells [0, ncells) of one row and one clip class, a vector of cells at
 * a time: T = scale * (k-th smallest of the n values ctr[c + offsets[i]]), the k-th
 * smallest taken by `net` (selection_network(n, k)). Absent cells must read +Inf (so
 * that they rank above every present one; k never exceeds the present count). `work`
 * holds n * os_lanes floats. Returns how many cells were done, a multiple of os_lanes;
 * the rest are the caller's.
 */
std::size_t os_thresholds(const float* ctr,
                          const std::ptrdiff_t* offsets,
                          int n,
                          const std::pair<std::uint16_t, std::uint16_t>* net,
                          std::size_t ncomparators,
                          int k,
                          float scale,
                          std::size_t ncells,
                          float* work,
                          float* t);

//! Cells per os_thresholds vector.
constexpr std::size_t os_lanes = 8;

} // namespace gpuradar::kernels::detail::cfar_rows

#endif
