/* Backend factories of envelope (internal; see factories.h for the pattern). */
#ifndef INCLUDED_GPURADAR_KERNELS_ENVELOPE_BACKENDS_H
#define INCLUDED_GPURADAR_KERNELS_ENVELOPE_BACKENDS_H

#include <gpuradar/kernels/pulse_doppler/envelope.h>
#include <memory>

namespace gpuradar::kernels::detail {

std::unique_ptr<envelope> make_envelope_cpu(envelope::mode m, bool db);
#ifdef GPURADAR_HAVE_CUDA
std::unique_ptr<envelope> make_envelope_cuda(envelope::mode m, bool db, stream_ref s);
#endif

} // namespace gpuradar::kernels::detail

#endif
