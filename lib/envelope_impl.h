/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef INCLUDED_GPURADAR_ENVELOPE_IMPL_H
#define INCLUDED_GPURADAR_ENVELOPE_IMPL_H

#include "gpu_stream_owner.h"
#include <gnuradio/gpuradar/envelope.h>
#include <gpuradar/kernels/pulse_doppler/envelope.h>
#include <memory>

namespace gr {
namespace gpuradar {

class envelope_impl : public envelope, public gpu_stream_owner
{
public:
    envelope_impl(unsigned int vlen,
                  kernels::envelope::mode mode,
                  bool db,
                  kernels::backend backend,
                  int device);

    int device() const override { return cuda_device(); }
    std::string backend() const override { return kernels::to_string(d_backend); }

    int work(int noutput_items,
             gr_vector_const_void_star& input_items,
             gr_vector_void_star& output_items) override;

private:
    const unsigned int d_vlen;
    const kernels::backend d_backend;
    std::unique_ptr<kernels::envelope> d_kernel;
};

} // namespace gpuradar
} // namespace gr

#endif
