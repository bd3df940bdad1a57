/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef INCLUDED_GPURADAR_CORNER_TURN_IMPL_H
#define INCLUDED_GPURADAR_CORNER_TURN_IMPL_H

#include "cpi_sequencer.h"
#include "gpu_stream_owner.h"
#include <gnuradio/gpuradar/corner_turn.h>
#include <gpuradar/kernels/corner_turn.h>
#include <memory>

namespace gr {
namespace gpuradar {

class corner_turn_impl : public corner_turn, public gpu_stream_owner
{
public:
    corner_turn_impl(unsigned int npulses,
                     unsigned int nrange,
                     unsigned int channels,
                     kernels::backend backend);

    std::uint64_t dropped_cpis() const override { return d_sequencer.dropped(); }
    std::string backend() const override { return kernels::to_string(d_backend); }

    void forecast(int noutput_items, gr_vector_int& ninput_items_required) override;
    int general_work(int noutput_items,
                     gr_vector_int& ninput_items,
                     gr_vector_const_void_star& input_items,
                     gr_vector_void_star& output_items) override;

private:
    const unsigned int d_npulses, d_nrange, d_channels;
    const kernels::backend d_backend;
    std::unique_ptr<kernels::corner_turn> d_kernel;
    cpi_sequencer d_sequencer;
};

} // namespace gpuradar
} // namespace gr

#endif
