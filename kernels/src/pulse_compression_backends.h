/*
 * Backend factories of pulse_compression (internal; see factories.h for the pattern).
 * use_callbacks = false keeps the CUDA fft method on its five separate passes (the
 * benchmark's unfused baseline; pulse_doppler's fusion switches).
 */
#ifndef INCLUDED_GPURADAR_KERNELS_PULSE_COMPRESSION_BACKENDS_H
#define INCLUDED_GPURADAR_KERNELS_PULSE_COMPRESSION_BACKENDS_H

#include <gpuradar/kernels/pulse_compression.h>
#include <memory>

namespace gpuradar::kernels::detail {

std::unique_ptr<pulse_compression>
make_pulse_compression_cpu(std::size_t nrange,
                           std::size_t rows,
                           const std::vector<cfloat>& waveform,
                           const window_spec& window,
                           bool normalize,
                           pulse_compression::method m,
                           std::size_t fft_length = 0);
#ifdef GPURADAR_HAVE_CUDA
std::unique_ptr<pulse_compression>
make_pulse_compression_cuda(std::size_t nrange,
                            std::size_t rows,
                            const std::vector<cfloat>& waveform,
                            const window_spec& window,
                            bool normalize,
                            pulse_compression::method m,
                            stream_ref stream,
                            std::size_t fft_length = 0,
                            bool use_callbacks = true);
#endif

} // namespace gpuradar::kernels::detail

#endif
