/* Backend factories of pulse_compression (internal; see factories.h for the pattern). */
#ifndef INCLUDED_GPURADAR_KERNELS_PULSE_COMPRESSION_BACKENDS_H
#define INCLUDED_GPURADAR_KERNELS_PULSE_COMPRESSION_BACKENDS_H

// The CUDA factory, make_pulse_compression_cuda, is declared there: other stages'
// engines use it too.
#include "pulse_doppler/pulse_compression_engine.h"
#include <gpuradar/kernels/pulse_doppler/pulse_compression.h>
#include <memory>

namespace gpuradar::kernels::detail {

std::unique_ptr<pulse_compression>
make_pulse_compression_cpu(std::size_t nrange,
                           std::size_t rows,
                           const std::vector<cfloat>& waveform,
                           const window_spec& window,
                           bool normalize,
                           pulse_compression::method m,
                           std::size_t fft_length = 0,
                           sample_format input = sample_format::fc32);

} // namespace gpuradar::kernels::detail

#endif
