/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef INCLUDED_GPURADAR_DOPPLER_FILTER_IMPL_H
#define INCLUDED_GPURADAR_DOPPLER_FILTER_IMPL_H

#include "cpi_sequencer.h"
#include "gpu_stream_owner.h"
#include <gnuradio/gpuradar/doppler_filter.h>
#include <gpuradar/kernels/doppler_filter.h>
#include <memory>

namespace gr {
namespace gpuradar {

class doppler_filter_impl : public doppler_filter, public gpu_stream_owner
{
public:
    doppler_filter_impl(unsigned int npulses,
                        unsigned int nrange,
                        unsigned int nfft,
                        unsigned int channels,
                        kernels::doppler_filter::mti_mode mti,
                        const kernels::window_spec& window,
                        bool fftshift,
                        kernels::backend backend);

    std::uint64_t dropped_cpis() const override { return d_sequencer.dropped(); }
    std::string backend() const override { return kernels::to_string(d_backend); }

    void forecast(int noutput_items, gr_vector_int& ninput_items_required) override;
    int general_work(int noutput_items,
                     gr_vector_int& ninput_items,
                     gr_vector_const_void_star& input_items,
                     gr_vector_void_star& output_items) override;

private:
    const unsigned int d_npulses, d_nrange, d_nfft, d_channels;
    const bool d_fftshift;
    const kernels::backend d_backend;
    std::unique_ptr<kernels::doppler_filter> d_kernel;
    cpi_sequencer d_sequencer;
};

} // namespace gpuradar
} // namespace gr

#endif
