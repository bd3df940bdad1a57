/* Backend factories of pulse_doppler (internal; see factories.h for the pattern). */
#ifndef INCLUDED_GPURADAR_KERNELS_PULSE_DOPPLER_PROCESSOR_BACKENDS_H
#define INCLUDED_GPURADAR_KERNELS_PULSE_DOPPLER_PROCESSOR_BACKENDS_H

#include <gpuradar/kernels/pulse_doppler/pulse_doppler_processor.h>
#include <memory>
#include <vector>

namespace gpuradar::kernels::detail {

std::unique_ptr<pulse_doppler_processor>
make_pulse_doppler_processor_cpu(const pulse_doppler_processor_params& p);
#ifdef GPURADAR_HAVE_CUDA
std::unique_ptr<pulse_doppler_processor>
make_pulse_doppler_processor_cuda(const pulse_doppler_processor_params& p,
                                  stream_ref stream,
                                  const pulse_doppler_processor_fusion& f);
#endif

} // namespace gpuradar::kernels::detail

#endif
