/* The process-wide worker pool behind cpu_threads.h (internal). */
#ifndef INCLUDED_GPURADAR_KERNELS_CPU_ROW_POOL_H
#define INCLUDED_GPURADAR_KERNELS_CPU_ROW_POOL_H

#include <cstddef>
#include <functional>

namespace gpuradar::kernels::detail {

//! fn(first, last, slot): rows [first, last); slot < max_slots is the participant's index
//! for per-thread scratch (0 is the caller).
using row_fn = std::function<void(std::size_t, std::size_t, unsigned)>;

/*!
 * Runs fn over rows [0, n) in chunks of at least `grain` rows, on the caller and up to
 * max_slots - 1 pool workers (never more than cpu_threads() participants). Returns when
 * every row is done; rethrows the first exception a chunk threw.
 */
void parallel_rows(std::size_t n,
                   std::size_t grain,
                   unsigned max_slots,
                   const row_fn& fn);

} // namespace gpuradar::kernels::detail

#endif
