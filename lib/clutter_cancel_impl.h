/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef INCLUDED_GPURADAR_CLUTTER_CANCEL_IMPL_H
#define INCLUDED_GPURADAR_CLUTTER_CANCEL_IMPL_H

#include "gpu_stream_owner.h"
#include "log_limiter.h"
#include "rx_rate_check.h"
#include <gnuradio/gpuradar/clutter_cancel.h>
#include <gpuradar/kernels/passive/clutter_cancel.h>
#include <memory>
#include <mutex>
#include <vector>

namespace gr {
namespace gpuradar {

class clutter_cancel_impl : public clutter_cancel, public gpu_stream_owner
{
public:
    clutter_cancel_impl(const kernels::clutter_cancel_params& p,
                        unsigned int nsurv,
                        kernels::backend backend,
                        int device);

    std::vector<double> cancellation_db() const override;
    std::uint64_t cpis() const override;
    std::uint64_t rate_mismatch_cpis() const override;
    std::string method() const override;
    std::string backend() const override { return kernels::to_string(d_backend); }
    int device() const override { return cuda_device(); }

    int work(int noutput_items,
             gr_vector_const_void_star& input_items,
             gr_vector_void_star& output_items) override;

private:
    //! The message, the tags and the log lines of one CPI, its first sample at `item`.
    void report(const std::vector<kernels::clutter_cancel_result>& res,
                std::uint64_t item);
    //! Reads the `rx_rate` tags of every input up to the CPI's end (its first sample
    //! `item` of each input); false, logged and counted, when the rates disagree.
    bool rates_agree(std::uint64_t item);
    //! Zeros the surveillance outputs of the CPI at `at` (host or device).
    void zero_surveillance(gr_vector_void_star& output_items, std::size_t at);

    const kernels::clutter_cancel_params d_params;
    const unsigned int d_nsurv;
    const kernels::backend d_backend;
    //! every surveillance channel (NLMS keeps each channel's weights in it)
    std::unique_ptr<kernels::clutter_cancel> d_kernel;
    std::vector<kernels::clutter_cancel_result> d_results; //!< one CPI's, reused
    std::vector<const gr_complex*> d_surveillance;         //!< one CPI's channels, reused
    std::vector<gr_complex*> d_out;
    log_limiter d_loaded_log, d_nonfinite_log, d_rate_log;
    rx_rate_check d_rates;
    std::vector<gr_complex> d_zeros; //!< one CPI of zeros, the device copies' source
    std::uint64_t d_loaded_total = 0, d_nonfinite_total = 0;
    mutable std::mutex d_mutex; //!< d_last_db and d_cpis, read from other threads
    std::vector<double> d_last_db;
    std::uint64_t d_cpis = 0;
    std::uint64_t d_rate_mismatch_cpis = 0;
};

} // namespace gpuradar
} // namespace gr

#endif
