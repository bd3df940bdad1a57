/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef INCLUDED_GPURADAR_PULSE_TX_SOURCE_IMPL_H
#define INCLUDED_GPURADAR_PULSE_TX_SOURCE_IMPL_H

#include <gnuradio/gpuradar/pulse_tx_source.h>
#include <gpuradar/kernels/waveform/pulse_timing.h>
#include <gpuradar/kernels/waveform/pulse_tx.h>

namespace gr {
namespace gpuradar {

namespace kernels = ::gpuradar::kernels;

class pulse_tx_source_impl : public pulse_tx_source
{
public:
    pulse_tx_source_impl(kernels::pulse_tx train,
                         double samp_rate,
                         bool timed,
                         double start_time);

    std::vector<gr_complex> pulse() const override { return d_train.config().pulse; }
    double pri_samples() const override { return d_train.config().pri_samples; }
    std::uint64_t bursts_sent() const override { return d_bursts; }

    int work(int noutput_items,
             gr_vector_const_void_star& input_items,
             gr_vector_void_star& output_items) override;

private:
    //! Tags the burst starts and ends among output samples [w0, w0 + n).
    void tag_bursts(std::uint64_t w0, std::uint64_t n);

    kernels::pulse_tx d_train;
    const double d_samp_rate;
    const bool d_timed;
    const kernels::time_spec d_start;
    std::uint64_t d_bursts = 0;
};

} // namespace gpuradar
} // namespace gr

#endif
