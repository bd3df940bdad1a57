/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef INCLUDED_GPURADAR_SAR_AUTOFOCUS_IMPL_H
#define INCLUDED_GPURADAR_SAR_AUTOFOCUS_IMPL_H

#include "gpu_stream_owner.h"
#include <gnuradio/gpuradar/sar_autofocus.h>
#include <gpuradar/kernels/sar/autofocus.h>
#include <atomic>
#include <memory>

namespace gr {
namespace gpuradar {

class sar_autofocus_impl : public sar_autofocus, public gpu_stream_owner
{
public:
    sar_autofocus_impl(unsigned int nx,
                       unsigned int ny,
                       const kernels::autofocus::options& o,
                       kernels::backend backend,
                       int device);

    unsigned long long converged_images() const override { return d_converged; }
    unsigned long long unconverged_images() const override { return d_unconverged; }
    int device() const override { return cuda_device(); }
    std::string backend() const override { return kernels::to_string(d_backend); }

    int work(int noutput_items,
             gr_vector_const_void_star& input_items,
             gr_vector_void_star& output_items) override;

private:
    void report(const kernels::autofocus_result& r);

    const unsigned int d_ny;
    const std::size_t d_image_samples;
    const kernels::backend d_backend;
    std::unique_ptr<kernels::autofocus> d_kernel;
    std::atomic<unsigned long long> d_converged{ 0 }, d_unconverged{ 0 };
    unsigned long long d_images = 0;
};

} // namespace gpuradar
} // namespace gr

#endif
