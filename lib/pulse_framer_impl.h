/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef INCLUDED_GPURADAR_PULSE_FRAMER_IMPL_H
#define INCLUDED_GPURADAR_PULSE_FRAMER_IMPL_H

#include "gpu_stream_owner.h"
#include <gnuradio/gpuradar/pulse_framer.h>
#include <gpuradar/kernels/pulse_doppler/front_end_correction.h>
#include <gpuradar/kernels/pulse_doppler/pulse_framer.h>
#include <pmt/pmt.h>
#include <atomic>
#include <mutex>

namespace gr {
namespace gpuradar {

class pulse_framer_impl : public pulse_framer, public gpu_stream_owner
{
public:
    pulse_framer_impl(const kernels::framer_config& cfg,
                      const std::string& trigger_tag,
                      kernels::backend backend,
                      int device,
                      const kernels::front_end_correction_config& corrections);

    std::uint64_t dropped_cpis() const override { return d_dropped; }
    std::uint64_t emitted_cpis() const override { return d_emitted; }
    std::string input_type() const override
    {
        return kernels::to_string(d_core.config().input);
    }
    std::uint64_t lost_samples() const override { return d_lost; }
    std::uint64_t iq_uncorrected_cpis() const override { return d_iq_uncorrected; }
    std::uint64_t rejected_time_jumps() const override { return d_rejected; }
    std::uint64_t nonfinite_samples() const override { return d_nonfinite; }
    std::uint64_t clamped_samples() const override { return d_clamped; }
    std::uint64_t saturated_samples() const override { return d_saturated; }
    double clock_offset_ppm() const override { return d_clock_ppm; }
    double prf() const override { return d_core.prf(); }
    double r0() const override { return d_core.r0(); }
    int device() const override { return cuda_device(); }
    std::string backend() const override { return kernels::to_string(d_backend); }
    void set_threshold(double threshold) override;

    void forecast(int noutput_items, gr_vector_int& ninput_items_required) override;
    int general_work(int noutput_items,
                     gr_vector_int& ninput_items,
                     gr_vector_const_void_star& input_items,
                     gr_vector_void_star& output_items) override;

private:
    //! `iq`: the CPI's I/Q estimate (null when the I/Q correction is off).
    pmt::pmt_t cpi_dict(const kernels::framer_cpi& c,
                        const kernels::iq_estimate* iq) const;
    void log_events(const kernels::framer_result& r);
    void log_nonfinite(const kernels::framer_result& r);
    void correct(const kernels::framer_result& r);

    const kernels::backend d_backend;
    //! The receiver corrections (null when all are off), on the framer's stream: owned
    //! by d_core's framer_copy, which applies them; set while d_core is made (so
    //! declared before it).
    kernels::front_end_correction* d_correction = nullptr;
    kernels::pulse_framer d_core;
    std::mutex d_core_mutex; //!< process() against set_threshold()
    const pmt::pmt_t d_rx_time_key, d_trigger_key;
    std::vector<gr::tag_t> d_tags;               // reused per call
    std::vector<kernels::framer_event> d_events; // reused per call
    std::atomic<std::uint64_t> d_dropped{ 0 }, d_emitted{ 0 }, d_lost{ 0 },
        d_rejected{ 0 }, d_nonfinite{ 0 }, d_clamped{ 0 }, d_saturated{ 0 };
    std::uint64_t d_nonfinite_cpis = 0; // CPIs with any, for the log's rate limit
    std::uint64_t d_clipped_cpis = 0;   // CPIs with clamped or saturated samples, ditto
    std::int64_t d_logged_slip = 0;     // the last CPI's schedule move (clock drift)
    std::uint64_t d_slip_moves = 0;     // moves so far, for the log's rate limit
    std::atomic<double> d_clock_ppm{ 0.0 };
    bool d_warned_no_anchor = false;
    std::vector<kernels::iq_estimate> d_iq; // reused per call
    std::atomic<std::uint64_t> d_iq_uncorrected{ 0 };
};

} // namespace gpuradar
} // namespace gr

#endif
