/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef INCLUDED_GPURADAR_CORNER_TURN_IMPL_H
#define INCLUDED_GPURADAR_CORNER_TURN_IMPL_H

#include "cpi_block.h"
#include <gnuradio/gpuradar/corner_turn.h>
#include <gpuradar/kernels/pulse_doppler/corner_turn.h>
#include <memory>

namespace gr {
namespace gpuradar {

class corner_turn_impl : public cpi_block<corner_turn, gr_complex, gr_complex>
{
public:
    corner_turn_impl(unsigned int npulses,
                     unsigned int nrange,
                     unsigned int channels,
                     kernels::backend backend,
                     int device);

private:
    void process_cpi(const cpi_io& io) override;

    std::unique_ptr<kernels::corner_turn> d_kernel;
};

} // namespace gpuradar
} // namespace gr

#endif
