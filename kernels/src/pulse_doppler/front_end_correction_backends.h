/* Backend factories of front_end_correction (internal). */
#ifndef INCLUDED_GPURADAR_KERNELS_FRONT_END_CORRECTION_BACKENDS_H
#define INCLUDED_GPURADAR_KERNELS_FRONT_END_CORRECTION_BACKENDS_H

#include <gpuradar/kernels/common/sample_convert.h>
#include <gpuradar/kernels/pulse_doppler/front_end_correction.h>

namespace gpuradar::kernels::detail {

std::unique_ptr<front_end_correction>
make_front_end_correction_cpu(const front_end_correction_config& cfg);
#ifdef GPURADAR_HAVE_CUDA
std::unique_ptr<front_end_correction>
make_front_end_correction_cuda(const front_end_correction_config& cfg, stream_ref stream);

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
