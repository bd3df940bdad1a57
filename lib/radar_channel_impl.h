/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef INCLUDED_GPURADAR_RADAR_CHANNEL_IMPL_H
#define INCLUDED_GPURADAR_RADAR_CHANNEL_IMPL_H

#include <gnuradio/gpuradar/radar_channel.h>
#include <gpuradar/kernels/scene/radar_channel.h>
#include <atomic>

namespace gr {
namespace gpuradar {

namespace kernels = ::gpuradar::kernels;

class radar_channel_impl : public radar_channel
{
public:
    explicit radar_channel_impl(kernels::radar_channel channel);

    std::vector<double> echo_amplitudes() const override;
    std::uint64_t adc_clipped() const override
    {
        return d_clipped.load(std::memory_order_relaxed);
    }

    int work(int noutput_items,
             gr_vector_const_void_star& input_items,
             gr_vector_void_star& output_items) override;

private:
    //! The rx_time of the receive sample at `offset` that carries tx_time's tag: the
    //! same time without a clock offset, earlier by offset (1/fs - 1/fs_rx) with one.
    pmt::pmt_t rx_time_of(std::uint64_t offset, const pmt::pmt_t& tx_time) const;
    kernels::radar_channel d_channel;
    //! d_channel's clip count, published by work() for the getter's thread.
    std::atomic<std::uint64_t> d_clipped{ 0 };
};

} // namespace gpuradar
} // namespace gr

#endif
