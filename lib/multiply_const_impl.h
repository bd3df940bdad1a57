/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef INCLUDED_GPURADAR_MULTIPLY_CONST_IMPL_H
#define INCLUDED_GPURADAR_MULTIPLY_CONST_IMPL_H

#include "gpu_stream_owner.h"
#include <gnuradio/gpuradar/multiply_const.h>
#include <gpuradar/kernels/common/multiply_const.h>
#include <memory>
#include <mutex>

namespace gr {
namespace gpuradar {

class multiply_const_impl : public multiply_const, public gpu_stream_owner
{
public:
    multiply_const_impl(gr_complex k,
                        unsigned int vlen,
                        kernels::backend backend,
                        int device);

    gr_complex k() const override;
    void set_k(gr_complex k) override;
    int device() const override { return cuda_device(); }
    std::string backend() const override { return kernels::to_string(d_backend); }

    int work(int noutput_items,
             gr_vector_const_void_star& input_items,
             gr_vector_void_star& output_items) override;

private:
    const unsigned int d_vlen;
    const kernels::backend d_backend;
    mutable std::mutex d_mutex; // guards d_k between set_k() and work()
    gr_complex d_k;
    std::unique_ptr<kernels::multiply_const> d_kernel;
};

} // namespace gpuradar
} // namespace gr

#endif
