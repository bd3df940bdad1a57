/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef INCLUDED_GPURADAR_CFAR_2D_IMPL_H
#define INCLUDED_GPURADAR_CFAR_2D_IMPL_H

#include "gpu_stream_owner.h"
#include <gnuradio/gpuradar/cfar_2d.h>
#include <gpuradar/kernels/cfar_2d.h>
#include <atomic>
#include <memory>

namespace gr {
namespace gpuradar {

class cfar_2d_impl : public cfar_2d, public gpu_stream_owner
{
public:
    cfar_2d_impl(const kernels::cfar_2d_params& params, kernels::backend backend);

    std::uint64_t dropped_cpis() const override { return d_dropped; }
    std::uint64_t nonfinite_cells() const override { return d_nonfinite; }
    std::uint64_t overflowed_cpis() const override { return d_overflowed; }
    int training_cells() const override { return d_kernel->training_cells(); }
    double alpha() const override { return d_kernel->alpha(); }
    int os_k() const override { return d_kernel->os_k(); }
    std::string backend() const override { return kernels::to_string(d_backend); }

    void forecast(int noutput_items, gr_vector_int& ninput_items_required) override;
    int general_work(int noutput_items,
                     gr_vector_int& ninput_items,
                     gr_vector_const_void_star& input_items,
                     gr_vector_void_star& output_items) override;

private:
    //! False (and logged) when a cpi tag describes another map shape.
    bool shape_matches(const pmt::pmt_t& dict);
    void publish(const pmt::pmt_t& dict, std::uint64_t index);

    const kernels::cfar_2d_params d_params;
    const kernels::backend d_backend;
    std::unique_ptr<kernels::cfar_2d> d_kernel;
    std::uint64_t d_next_index = 0;
    std::atomic<std::uint64_t> d_dropped{ 0 };
    std::atomic<std::uint64_t> d_nonfinite{ 0 };
    std::atomic<std::uint64_t> d_overflowed{ 0 };
};

} // namespace gpuradar
} // namespace gr

#endif
