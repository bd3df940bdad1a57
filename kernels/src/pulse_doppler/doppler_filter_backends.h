/* Backend factories of doppler_filter (internal). */
#ifndef INCLUDED_GPURADAR_KERNELS_DOPPLER_FILTER_BACKENDS_H
#define INCLUDED_GPURADAR_KERNELS_DOPPLER_FILTER_BACKENDS_H

#include <gpuradar/kernels/pulse_doppler/doppler_filter.h>
#include <memory>

namespace gpuradar::kernels::detail {

std::unique_ptr<doppler_filter> make_doppler_filter_cpu(std::size_t npulses,
                                                        std::size_t rows,
                                                        std::size_t nfft,
                                                        doppler_filter::mti_mode mti,
                                                        const window_spec& window,
                                                        bool fftshift);
#ifdef GPURADAR_HAVE_CUDA
std::unique_ptr<doppler_filter> make_doppler_filter_cuda(std::size_t npulses,
                                                         std::size_t rows,
                                                         std::size_t nfft,
                                                         doppler_filter::mti_mode mti,
                                                         const window_spec& window,
                                                         bool fftshift,
                                                         stream_ref stream);
#endif

} // namespace gpuradar::kernels::detail

#endif
