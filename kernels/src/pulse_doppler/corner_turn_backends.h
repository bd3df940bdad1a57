/* Backend factories of corner_turn (internal). */
#ifndef INCLUDED_GPURADAR_KERNELS_CORNER_TURN_BACKENDS_H
#define INCLUDED_GPURADAR_KERNELS_CORNER_TURN_BACKENDS_H

#include <gpuradar/kernels/pulse_doppler/corner_turn.h>
#include <memory>

namespace gpuradar::kernels::detail {

std::unique_ptr<corner_turn>
make_corner_turn_cpu(std::size_t npulses, std::size_t nrange, std::size_t channels);
#ifdef GPURADAR_HAVE_CUDA
std::unique_ptr<corner_turn> make_corner_turn_cuda(std::size_t npulses,
                                                   std::size_t nrange,
                                                   std::size_t channels,
                                                   stream_ref stream);
#endif

} // namespace gpuradar::kernels::detail

#endif
