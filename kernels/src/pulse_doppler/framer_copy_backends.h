/* Backend factories of framer_copy (internal). */
#ifndef INCLUDED_GPURADAR_KERNELS_FRAMER_COPY_BACKENDS_H
#define INCLUDED_GPURADAR_KERNELS_FRAMER_COPY_BACKENDS_H

#include <gpuradar/kernels/pulse_doppler/framer_copy.h>

namespace gpuradar::kernels::detail {

//! With corrections, copy_finite takes one whole CPI: n = npulses * nrange of c's
//! config, else std::invalid_argument from `who`.
void require_whole_cpi(const front_end_correction& c, std::size_t n, const char* who);

std::unique_ptr<framer_copy>
make_framer_copy_cpu(std::size_t cpi_samples,
                     sample_format input,
                     std::unique_ptr<front_end_correction> corrections);
#ifdef GPURADAR_HAVE_CUDA
std::unique_ptr<framer_copy>
make_framer_copy_cuda(std::size_t cpi_samples,
                      stream_ref stream,
                      sample_format input,
                      std::unique_ptr<front_end_correction> corrections);
#endif

} // namespace gpuradar::kernels::detail

#endif
