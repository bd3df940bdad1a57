/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef INCLUDED_GPURADAR_PULSE_COMPRESSION_IMPL_H
#define INCLUDED_GPURADAR_PULSE_COMPRESSION_IMPL_H

#include "cpi_block.h"
#include <gnuradio/gpuradar/pulse_compression.h>
#include <gpuradar/kernels/pulse_doppler/pulse_compression.h>
#include <memory>
#include <mutex>

namespace gr {
namespace gpuradar {

class pulse_compression_impl
    : public cpi_block<pulse_compression, std::uint8_t, gr_complex> // input as bytes
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
                           kernels::backend backend,
                           int device,
                           kernels::sample_format input);

    void set_waveform(const std::vector<gr_complex>& waveform) override;
    std::vector<gr_complex> waveform() const override;
    std::string method() const override;
    unsigned int fft_length() const override;

private:
    void process_cpi(const cpi_io& io) override;

    const unsigned int d_npulses;
    const double d_samp_rate;
    std::unique_ptr<kernels::pulse_compression> d_kernel;

    // Held by work() for each CPI and by set_waveform(): a new waveform lands between
    // CPIs (the kernel orders its upload after the queued work on the CUDA stream).
    mutable std::mutex d_kernel_mutex;
    std::vector<gr_complex> d_waveform; // the waveform of the next CPI
};

} // namespace gpuradar
} // namespace gr

#endif
