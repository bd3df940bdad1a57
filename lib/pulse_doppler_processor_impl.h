/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef INCLUDED_GPURADAR_PULSE_DOPPLER_PROCESSOR_IMPL_H
#define INCLUDED_GPURADAR_PULSE_DOPPLER_PROCESSOR_IMPL_H

#include "cpi_block.h"
#include "map_tap.h"
#include "pending_change.h"
#include <gnuradio/gpuradar/pulse_doppler_processor.h>
#include <gpuradar/kernels/pulse_doppler/pulse_doppler_processor.h>
#include <memory>
#include <mutex>

namespace gr {
namespace gpuradar {

class pulse_doppler_processor_impl
    : public cpi_block<pulse_doppler_processor, std::uint8_t, float> // input as bytes
{
public:
    pulse_doppler_processor_impl(const kernels::pulse_doppler_processor_params& p,
                                 double samp_rate,
                                 kernels::backend backend,
                                 unsigned tap_every,
                                 int device);

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
    std::string implementation() const override;

    bool stop() override;

private:
    void process_cpi(const cpi_io& io) override;
    void after_work() override;
    //! set_range_window / set_doppler_window: the window `which` of the params; errors
    //! name the parameters with `prefix` ("range_", "doppler_").
    void set_window(kernels::window_spec kernels::pulse_doppler_processor_params::*which,
                    const std::string& window,
                    int nbar,
                    double sll_db,
                    double beta,
                    const char* prefix);
    //! Before a CPI: swaps in the kernels object of the newest setter change, if any.
    void apply_pending_change();
    //! The `map` message's car for the CPI of cpi dict `dict`.
    pmt::pmt_t tap_meta(const pmt::pmt_t& dict) const;

    const std::size_t d_npulses, d_nrange, d_nfft, d_channels;
    const bool d_fftshift;
    const double d_samp_rate;
    std::unique_ptr<kernels::pulse_doppler_processor> d_kernel;
    // Guards d_kernel's swap against implementation() from other threads.
    mutable std::mutex d_kernel_mutex;
    pending_change<kernels::pulse_doppler_processor_params,
                   kernels::pulse_doppler_processor>
        d_changes;
    map_tap d_tap;
};

} // namespace gpuradar
} // namespace gr

#endif
