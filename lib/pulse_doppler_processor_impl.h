/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef INCLUDED_GPURADAR_PULSE_DOPPLER_PROCESSOR_IMPL_H
#define INCLUDED_GPURADAR_PULSE_DOPPLER_PROCESSOR_IMPL_H

#include "cpi_sequencer.h"
#include "gpu_stream_owner.h"
#include "map_tap.h"
#include "pending_change.h"
#include <gnuradio/gpuradar/pulse_doppler_processor.h>
#include <gpuradar/kernels/pulse_doppler.h>
#include <memory>
#include <mutex>

namespace gr {
namespace gpuradar {

class pulse_doppler_processor_impl : public pulse_doppler_processor,
                                     public gpu_stream_owner
{
public:
    pulse_doppler_processor_impl(const kernels::pulse_doppler_params& p,
                                 double samp_rate,
                                 kernels::backend backend,
                                 unsigned tap_every);

    void set_waveform(const std::vector<gr_complex>& waveform) override;
    void set_mti(const std::string& mti) override;
    void set_range_window(const std::string& window,
                          int nbar,
                          double sll_db,
                          double beta) override;
    void set_doppler_window(const std::string& window,
                            int nbar,
                            double sll_db,
                            double beta) override;
    void set_db(bool db) override;
    std::uint64_t dropped_cpis() const override { return d_sequencer.dropped(); }
    std::string implementation() const override;
    std::string backend() const override { return kernels::to_string(d_backend); }

    bool stop() override;
    void forecast(int noutput_items, gr_vector_int& ninput_items_required) override;
    int general_work(int noutput_items,
                     gr_vector_int& ninput_items,
                     gr_vector_const_void_star& input_items,
                     gr_vector_void_star& output_items) override;

private:
    //! Before a CPI: swaps in the kernels object of the newest setter change, if any.
    void apply_pending_change();
    //! The `map` message's car for the CPI of cpi dict `dict`.
    pmt::pmt_t tap_meta(const pmt::pmt_t& dict) const;

    const std::size_t d_npulses, d_nrange, d_nfft, d_channels;
    const bool d_fftshift;
    const double d_samp_rate;
    const kernels::backend d_backend;
    std::unique_ptr<kernels::pulse_doppler> d_kernel;
    // Guards d_kernel's swap against implementation() from other threads.
    mutable std::mutex d_kernel_mutex;
    pending_change<kernels::pulse_doppler_params, kernels::pulse_doppler> d_changes;
    cpi_sequencer d_sequencer;
    map_tap d_tap;
};

} // namespace gpuradar
} // namespace gr

#endif
