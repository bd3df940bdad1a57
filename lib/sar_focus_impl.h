/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef INCLUDED_GPURADAR_SAR_FOCUS_IMPL_H
#define INCLUDED_GPURADAR_SAR_FOCUS_IMPL_H

#include "azimuth_blocks.h"
#include "gpu_stream_owner.h"
#include <gnuradio/gpuradar/sar_focus.h>
#include <gpuradar/kernels/sar/csa.h>
#include <atomic>
#include <memory>
#include <vector>

namespace gr {
namespace gpuradar {

class sar_focus_impl : public sar_focus, public gpu_stream_owner
{
public:
    sar_focus_impl(const kernels::stripmap_params& p,
                   const azimuth_blocks& plan,
                   const kernels::csa::options& o,
                   kernels::backend backend,
                   int device);

    unsigned int naz() const override { return unsigned(d_plan.naz); }
    unsigned int lead() const override { return unsigned(d_plan.lead); }
    unsigned int trail() const override { return unsigned(d_plan.trail); }
    unsigned int stride() const override { return unsigned(d_plan.stride()); }
    std::uint64_t blocks() const override { return d_blocks; }
    std::uint64_t restarts() const override { return d_restarts; }
    std::uint64_t mismatched_tags() const override { return d_mismatched; }
    std::uint64_t failed_blocks() const override { return d_failed; }
    std::string algorithm() const override { return "csa"; }
    int device() const override { return cuda_device(); }
    std::string backend() const override { return kernels::to_string(d_backend); }

    void forecast(int noutput_items, gr_vector_int& ninput_items_required) override;
    int general_work(int noutput_items,
                     gr_vector_int& ninput_items,
                     gr_vector_const_void_star& input_items,
                     gr_vector_void_star& output_items) override;

private:
    //! Absolute offset of the first `stripmap` tag in [from, to), or `to` when none;
    //! checks every tag it passes against the block's parameters (once each).
    std::uint64_t next_strip_start(std::uint64_t from, std::uint64_t to);
    //! Takes the strip's along-track origin and pulse number from its `stripmap` tag at
    //! `offset` (y0 0 and the stream offset when it has none).
    void adopt_strip_tag(std::uint64_t offset);
    //! Focuses the block whose first pulse is `raw` and writes its middle rows to `out`.
    void focus(const gr_complex* raw, gr_complex* out);
    //! The `stripmap` tag on the first output row of a strip.
    void tag_first_row(std::uint64_t out_offset);

    const kernels::stripmap_params d_params;
    const azimuth_blocks d_plan;
    const kernels::backend d_backend;
    std::unique_ptr<kernels::csa> d_csa;
    // One focused block: device memory on CUDA, host memory on the CPU.
    kernels::device_memory d_image_dev;
    std::vector<gr_complex> d_image_host;

    std::uint64_t d_strip_start = 0; // input offset of the current strip's first pulse
    double d_strip_y0 = 0.0;         // its along-track position (m)
    std::uint64_t d_strip_pulse = 0; // its pulse number (the tag's `pulse`)
    bool d_tag_pending = true;       // the strip's first output row is not out yet
    std::uint64_t d_tags_checked_to = 0; // tags before this offset were checked
    std::uint64_t d_next_fail_log = 1;
    std::atomic<std::uint64_t> d_blocks{ 0 };
    std::atomic<std::uint64_t> d_restarts{ 0 };
    std::atomic<std::uint64_t> d_mismatched{ 0 };
    std::atomic<std::uint64_t> d_failed{ 0 };
};

} // namespace gpuradar
} // namespace gr

#endif
