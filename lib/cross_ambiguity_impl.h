/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef INCLUDED_GPURADAR_CROSS_AMBIGUITY_IMPL_H
#define INCLUDED_GPURADAR_CROSS_AMBIGUITY_IMPL_H

#include "gpu_stream_owner.h"
#include "log_limiter.h"
#include "rx_rate_check.h"
#include <gnuradio/gpuradar/cross_ambiguity.h>
#include <gpuradar/kernels/passive/cross_ambiguity.h>
#include <atomic>
#include <memory>

namespace gr {
namespace gpuradar {

class cross_ambiguity_impl : public cross_ambiguity, public gpu_stream_owner
{
public:
    cross_ambiguity_impl(double fs,
                         double fc,
                         const kernels::cross_ambiguity_params& p,
                         kernels::backend backend,
                         int device);

    std::string method() const override;
    std::uint64_t rate_mismatch_cpis() const override;
    std::string backend() const override { return kernels::to_string(d_backend); }
    int device() const override { return cuda_device(); }

    void forecast(int noutput_items, gr_vector_int& ninput_items_required) override;
    int general_work(int noutput_items,
                     gr_vector_int& ninput_items,
                     gr_vector_const_void_star& input_items,
                     gr_vector_void_star& output_items) override;

private:
    pmt::pmt_t cpi_dict() const;
    //! Reads both inputs' `rx_rate` tags up to the CPI's end (its first sample `item`
    //! of each input); false, logged and counted, when they disagree.
    bool rates_agree(std::uint64_t item);

    const double d_fs, d_fc;
    const kernels::cross_ambiguity_params d_params;
    const kernels::backend d_backend;
    std::unique_ptr<kernels::cross_ambiguity> d_kernel;
    std::uint64_t d_cpis = 0;
    rx_rate_check d_rates{ { "reference (input 0)", "surveillance (input 1)" } };
    log_limiter d_rate_log;
    bool d_fs_warned = false;
    std::atomic<std::uint64_t> d_rate_mismatch_cpis{ 0 };
};

} // namespace gpuradar
} // namespace gr

#endif
