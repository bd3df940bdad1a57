/* Backend factories of front_end_correction (internal). */
#ifndef INCLUDED_GPURADAR_KERNELS_FRONT_END_CORRECTION_BACKENDS_H
#define INCLUDED_GPURADAR_KERNELS_FRONT_END_CORRECTION_BACKENDS_H

#include <gpuradar/kernels/pulse_doppler/front_end_correction.h>

namespace gpuradar::kernels::detail {

std::unique_ptr<front_end_correction>
make_front_end_correction_cpu(const front_end_correction_config& cfg);
#ifdef GPURADAR_HAVE_CUDA
std::unique_ptr<front_end_correction>
make_front_end_correction_cuda(const front_end_correction_config& cfg, stream_ref stream);
#endif

} // namespace gpuradar::kernels::detail

#endif
