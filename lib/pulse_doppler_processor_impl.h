/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef INCLUDED_GPURADAR_PULSE_DOPPLER_PROCESSOR_IMPL_H
#define INCLUDED_GPURADAR_PULSE_DOPPLER_PROCESSOR_IMPL_H

#include <gnuradio/gpuradar/corner_turn.h>
#include <gnuradio/gpuradar/doppler_filter.h>
#include <gnuradio/gpuradar/envelope.h>
#include <gnuradio/gpuradar/pulse_compression.h>
#include <gnuradio/gpuradar/pulse_doppler_processor.h>

namespace gr {
namespace gpuradar {

class pulse_doppler_processor_impl : public pulse_doppler_processor
{
public:
    pulse_doppler_processor_impl(pulse_compression::sptr pc,
                                 corner_turn::sptr ct,
                                 doppler_filter::sptr df,
                                 envelope::sptr env,
                                 std::size_t in_itemsize,
                                 std::size_t out_itemsize);

    void set_waveform(const std::vector<gr_complex>& waveform) override;
    std::uint64_t dropped_cpis() const override;
    std::string backend() const override { return d_pc->backend(); }

private:
    pulse_compression::sptr d_pc;
    corner_turn::sptr d_ct;
    doppler_filter::sptr d_df;
    envelope::sptr d_env;
};

} // namespace gpuradar
} // namespace gr

#endif
