/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef INCLUDED_GPURADAR_DOPPLER_FILTER_IMPL_H
#define INCLUDED_GPURADAR_DOPPLER_FILTER_IMPL_H

#include "cpi_block.h"
#include <gnuradio/gpuradar/doppler_filter.h>
#include <gpuradar/kernels/pulse_doppler/doppler_filter.h>
#include <memory>

namespace gr {
namespace gpuradar {

class doppler_filter_impl : public cpi_block<doppler_filter, gr_complex, gr_complex>
{
public:
    doppler_filter_impl(unsigned int npulses,
                        unsigned int nrange,
                        unsigned int nfft,
                        unsigned int channels,
                        kernels::doppler_filter::mti_mode mti,
                        const kernels::window_spec& window,
                        bool fftshift,
                        kernels::backend backend,
                        int device);

private:
    void process_cpi(const cpi_io& io) override;

    const unsigned int d_nfft;
    const bool d_fftshift;
    std::unique_ptr<kernels::doppler_filter> d_kernel;
};

} // namespace gpuradar
} // namespace gr

#endif
