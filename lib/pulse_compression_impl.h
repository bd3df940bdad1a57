/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef INCLUDED_GPURADAR_PULSE_COMPRESSION_IMPL_H
#define INCLUDED_GPURADAR_PULSE_COMPRESSION_IMPL_H

#include "cpi_sequencer.h"
#include "gpu_stream_owner.h"
#include <gnuradio/gpuradar/pulse_compression.h>
#include <gpuradar/kernels/pulse_compression.h>
#include <memory>
#include <mutex>

namespace gr {
namespace gpuradar {

class pulse_compression_impl : public pulse_compression, public gpu_stream_owner
{
public:
    pulse_compression_impl(unsigned int nrange,
                           unsigned int npulses,
                           unsigned int channels,
                           const std::vector<gr_complex>& waveform,
                           double samp_rate,
                           const kernels::window_spec& window,
                           bool normalize,
                           kernels::pulse_compression::method method,
                           kernels::backend backend);

    void set_waveform(const std::vector<gr_complex>& waveform) override;
    std::vector<gr_complex> waveform() const override;
    std::string method() const override;
    unsigned int fft_length() const override;
    std::uint64_t dropped_cpis() const override { return d_sequencer.dropped(); }
    std::string backend() const override { return kernels::to_string(d_backend); }

    void forecast(int noutput_items, gr_vector_int& ninput_items_required) override;
    int general_work(int noutput_items,
                     gr_vector_int& ninput_items,
                     gr_vector_const_void_star& input_items,
                     gr_vector_void_star& output_items) override;

private:
    const unsigned int d_nrange, d_npulses, d_channels;
    const double d_samp_rate;
    const kernels::backend d_backend;
    std::unique_ptr<kernels::pulse_compression> d_kernel;
    cpi_sequencer d_sequencer;

    // Held by work() for each CPI and by set_waveform(): a new waveform lands between
    // CPIs (the kernel orders its upload after the queued work on the CUDA stream).
    mutable std::mutex d_kernel_mutex;
    std::vector<gr_complex> d_waveform; // the waveform of the next CPI
};

} // namespace gpuradar
} // namespace gr

#endif
