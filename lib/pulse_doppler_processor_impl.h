/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef INCLUDED_GPURADAR_PULSE_DOPPLER_PROCESSOR_IMPL_H
#define INCLUDED_GPURADAR_PULSE_DOPPLER_PROCESSOR_IMPL_H

#include "cpi_sequencer.h"
#include "gpu_stream_owner.h"
#include "map_tap.h"
#include <gnuradio/gpuradar/pulse_doppler_processor.h>
#include <gpuradar/kernels/pulse_doppler_processor.h>
#include <memory>
#include <mutex>

namespace gr {
namespace gpuradar {

class pulse_doppler_processor_impl : public pulse_doppler_processor,
                                     public gpu_stream_owner
{
public:
    pulse_doppler_processor_impl(const kernels::pulse_doppler_processor_params& p,
                                 double samp_rate,
                                 kernels::backend backend,
                                 unsigned tap_every);

    void set_waveform(const std::vector<gr_complex>& waveform) override;
    std::uint64_t dropped_cpis() const override { return d_sequencer.dropped(); }
    std::string implementation() const override { return d_kernel->implementation(); }
    std::string backend() const override { return kernels::to_string(d_backend); }

    bool stop() override;
    void forecast(int noutput_items, gr_vector_int& ninput_items_required) override;
    int general_work(int noutput_items,
                     gr_vector_int& ninput_items,
                     gr_vector_const_void_star& input_items,
                     gr_vector_void_star& output_items) override;

private:
    //! The `map` message's car for the CPI of cpi dict `dict`.
    pmt::pmt_t tap_meta(const pmt::pmt_t& dict) const;

    const std::size_t d_npulses, d_nrange, d_nfft, d_channels;
    const bool d_fftshift;
    const double d_samp_rate;
    const kernels::backend d_backend;
    std::unique_ptr<kernels::pulse_doppler_processor> d_kernel;
    // Held by work() for each CPI and by set_waveform(): a new waveform lands between
    // CPIs.
    std::mutex d_kernel_mutex;
    cpi_sequencer d_sequencer;
    map_tap d_tap;
};

} // namespace gpuradar
} // namespace gr

#endif
