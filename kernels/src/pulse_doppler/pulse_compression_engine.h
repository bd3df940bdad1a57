/*
 * pulse_compression as a part of another stage's CUDA engine (internal): what
 * pulse_doppler_processor's CUDA engine composes, beside the public API. Backend-neutral
 * (no CUDA types), so that a stage's backend reaches another stage only through this
 * layer, never through that stage's backend files or its *_backends.h (DESIGN.md,
 * Layers); pulse_compression_backends.h declares its factories on top of it.
 */
#ifndef INCLUDED_GPURADAR_KERNELS_PULSE_COMPRESSION_ENGINE_H
#define INCLUDED_GPURADAR_KERNELS_PULSE_COMPRESSION_ENGINE_H

#include <gpuradar/kernels/pulse_doppler/pulse_compression.h>
#include <memory>

namespace gpuradar::kernels::detail {

#ifdef GPURADAR_HAVE_CUDA
//! Where a CUDA run left the compressed rows: row i's nrange samples start at
//! data + i * row_stride (device memory).
struct pc_rows_view {
    const cfloat* data;
    std::size_t row_stride;
};

/*!
 * The CUDA pulse_compression with more entry points for pulse_doppler_processor:
 * run_view() may leave the result in the fft workspace (row stride = fft length) and skip
 * the strip pass; the view stays valid until the next run_view/run/set_waveform.
 * run_samples_view() is run_view() on input in input_format(), converted in the first
 * kernel's load (run_samples()).
 */
class pulse_compression_cuda_engine : public pulse_compression
{
public:
    using pulse_compression::pulse_compression;
    virtual pc_rows_view run_view(const cfloat* in, cfloat* out) = 0;
    virtual pc_rows_view run_samples_view(const void* in, cfloat* out) = 0;
};

std::unique_ptr<pulse_compression_cuda_engine>
make_pulse_compression_cuda(std::size_t nrange,
                            std::size_t rows,
                            const std::vector<cfloat>& waveform,
                            const window_spec& window,
                            bool normalize,
                            pulse_compression::method m,
                            stream_ref stream,
                            std::size_t fft_length = 0,
                            sample_format input = sample_format::fc32);
#endif

} // namespace gpuradar::kernels::detail

#endif
