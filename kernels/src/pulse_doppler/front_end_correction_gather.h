/* The corrections' sums taken by framer_copy's CUDA gather (internal): the one entry
 * point of front_end_correction that framer_copy uses besides the public class. */
#ifndef INCLUDED_GPURADAR_KERNELS_FRONT_END_CORRECTION_GATHER_H
#define INCLUDED_GPURADAR_KERNELS_FRONT_END_CORRECTION_GATHER_H

#include <gpuradar/kernels/common/sample_convert.h>
#include <gpuradar/kernels/pulse_doppler/front_end_correction.h>
#include <cstddef>

namespace gpuradar::kernels::detail {

#ifdef GPURADAR_HAVE_CUDA
/*!
 * framer_copy's CUDA gather with corrections that take sums: rows [row, row + rows) of
 * the CPI (row i of the batch at src + i * stride samples, format f) converted into dst
 * (row `row` of the staging CPI) as sample_convert converts them, by c's sums pass, which
 * takes their sums on the way, so that copy_finite's estimate() of a CPI gathered whole
 * and in order reads no sample again. Row 0 starts a CPI. false (nothing done) when c is
 * not a CUDA object or takes no sums (blank alone): gather as usual then.
 */
bool gather_rows_with_sums(front_end_correction& c,
                           cfloat* dst,
                           const void* src,
                           sample_format f,
                           std::size_t stride,
                           std::size_t row,
                           std::size_t rows);
#endif

} // namespace gpuradar::kernels::detail

#endif
