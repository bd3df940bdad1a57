/* Backend factories of pulse_doppler (internal; see factories.h for the pattern). */
#ifndef INCLUDED_GPURADAR_KERNELS_PULSE_DOPPLER_BACKENDS_H
#define INCLUDED_GPURADAR_KERNELS_PULSE_DOPPLER_BACKENDS_H

#include <gpuradar/kernels/pulse_doppler.h>
#include <memory>
#include <vector>

namespace gpuradar::kernels::detail {

//! w[n] exp(+j 2 pi s n / nfft), n < npulses - MTI order, s = nfft/2 with fftshift: the
//! same table doppler_filter builds (its make_weights), for the fused CUDA load callback.
std::vector<cfloat> pulse_doppler_weights(const pulse_doppler_params& p);

std::unique_ptr<pulse_doppler> make_pulse_doppler_cpu(const pulse_doppler_params& p);
#ifdef GPURADAR_HAVE_CUDA
std::unique_ptr<pulse_doppler> make_pulse_doppler_cuda(const pulse_doppler_params& p,
                                                       stream_ref stream,
                                                       const pulse_doppler_fusion& f);
#endif

} // namespace gpuradar::kernels::detail

#endif
