/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef INCLUDED_GPURADAR_BACKPROJECTION_IMPL_H
#define INCLUDED_GPURADAR_BACKPROJECTION_IMPL_H

#include "gpu_stream_owner.h"
#include <gnuradio/gpuradar/backprojection.h>
#include <gpuradar/kernels/backprojection.h>
#include <atomic>
#include <memory>
#include <vector>

namespace gr {
namespace gpuradar {

class backprojection_impl : public backprojection, public gpu_stream_owner
{
public:
    backprojection_impl(unsigned int nbins,
                        const kernels::image_grid& grid,
                        unsigned int pulses_per_image,
                        bool accumulate,
                        kernels::backprojection::precision precision,
                        kernels::backend backend,
                        int device);

    std::uint64_t skipped_pulses() const override { return d_skipped; }
    std::uint64_t nonfinite_samples() const override { return d_nonfinite; }
    std::uint64_t images() const override { return d_images; }
    std::string mode() const override { return d_accumulate ? "accumulate" : "restart"; }
    std::string precision() const override
    {
        return kernels::backprojection::to_string(d_kernel->get_precision());
    }
    std::string backend() const override { return kernels::to_string(d_backend); }
    int device() const override { return cuda_device(); }

    void forecast(int noutput_items, gr_vector_int& ninput_items_required) override;
    int general_work(int noutput_items,
                     gr_vector_int& ninput_items,
                     gr_vector_const_void_star& input_items,
                     gr_vector_void_star& output_items) override;

private:
    //! Backprojects n pulses into the image; never throws (errors are logged, counted).
    void integrate(const gr_complex* pulses, const double* geometry, int n);
    //! Copies the image to `out` (ny items) and clears it in mode restart.
    void emit(gr_complex* out);
    void clear_image();
    //! Tags output item `item`, an image's first, with its pulses' counts.
    void tag_image(std::uint64_t item);
    void note_skipped();

    const unsigned int d_nbins, d_pulses_per_image;
    const std::size_t d_npix;
    const bool d_accumulate;
    const kernels::backend d_backend;
    std::unique_ptr<kernels::backprojection> d_kernel;
    // The image being integrated: device memory on CUDA, host memory on the CPU.
    kernels::device_memory d_image_dev;
    std::vector<gr_complex> d_image_host;
    std::vector<double>
        d_geometry_scratch;            // geometry with dr <= 0 pulses made non-finite
    unsigned int d_count = 0;          // pulses in the current image
    std::uint64_t d_failed = 0;        // pulses lost to a kernel error (logged)
    std::uint64_t d_next_fail_log = 1; // failed count of the next error line
    std::uint64_t d_next_log = 1;      // skipped count of the next log line
    std::atomic<std::uint64_t> d_skipped{ 0 };
    std::atomic<std::uint64_t> d_images{ 0 };
    std::atomic<std::uint64_t> d_nonfinite{ 0 };
    // The kernel's counters when the last image was tagged.
    std::uint64_t d_nonfinite_at_emit = 0, d_skipped_at_emit = 0;
};

} // namespace gpuradar
} // namespace gr

#endif
