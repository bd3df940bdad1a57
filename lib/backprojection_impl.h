/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef INCLUDED_GPURADAR_BACKPROJECTION_IMPL_H
#define INCLUDED_GPURADAR_BACKPROJECTION_IMPL_H

#include "gpu_stream_owner.h"
#include <gnuradio/gpuradar/backprojection.h>
#include <gpuradar/kernels/sar/backprojection.h>
#include <gpuradar/kernels/sar/backprojection_factorized.h>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
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
                        int device,
                        kernels::bp_algorithm algorithm,
                        const kernels::ffbp_options& ffbp);

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
    std::string algorithm() const override { return kernels::to_string(d_algorithm); }

    void forecast(int noutput_items, gr_vector_int& ninput_items_required) override;
    //! Waits for the kernels still queued (a partial image's): none outlives the run.
    bool stop() override;
    int general_work(int noutput_items,
                     gr_vector_int& ninput_items,
                     gr_vector_const_void_star& input_items,
                     gr_vector_void_star& output_items) override;

private:
    //! An image emitted in this work() call whose counts are not yet tagged.
    struct emitted_image {
        std::uint64_t item;    //!< its first output item
        std::uint64_t skipped; //!< the kernel's skipped count after its last pulse
        unsigned slot;         //!< its entries in d_image_counts / d_image_done
    };

    //! Pulses of one kernel call: at most a staging area (CUDA), at most what completes
    //! the image, and one short of that when the image could not be emitted now.
    int next_batch(int available, int produced, int noutput_items) const;
    // CUDA: a staging area for pulses; `staged` on the block's stream after the copy
    // in, `consumed` on the kernel stream after the kernel that reads it.
    struct pulse_stage {
        kernels::device_memory pulses;
        kernels::cuda_event staged, consumed;
    };
    /*!
     * CUDA: copies n pulses from the input buffer into `area` (on the block's stream,
     * once the area's previous kernel is done) and returns the copy, so that the input
     * is released without waiting for the kernel that reads it.
     */
    const gr_complex* stage(pulse_stage& area, const gr_complex* pulses, int n);
    //! Backprojects n pulses into the image (CUDA: through the next staging area);
    //! never throws (errors are logged, counted).
    void integrate(const gr_complex* pulses, const double* geometry, int n);
    //! Copies the image to `out` (ny items), clears it in mode restart and notes its
    //! counts for tag_images(); on CUDA all of it queued behind the image's kernels.
    void emit(gr_complex* out, std::uint64_t item);
    void clear_image();
    //! Tags each image emitted by this call (its first item) with its pulses' counts:
    //! waits for those images only, not for the kernels queued after them.
    void tag_images();
    void note_skipped();
    /*!
     * Factorized: copies n pulses and their geometry into the image's aperture (CUDA: on
     * the block's stream, once the aperture's previous FFBP is done with it); true when
     * the aperture is then complete.
     */
    bool collect(const gr_complex* pulses, const double* geometry, int n);
    kernels::stream_ref kernel_stream() const
    {
        return d_kernel_stream ? d_kernel_stream->ref() : kernels::stream_ref();
    }

    //! Images one work() call emits at most (the slots of their counts).
    static constexpr unsigned max_images_per_call = 4;

    const unsigned int d_nbins, d_pulses_per_image;
    const std::size_t d_npix;
    const bool d_accumulate;
    const kernels::backend d_backend;
    const kernels::bp_algorithm d_algorithm;
    // CUDA: the kernels' own stream. The device buffers queue their copies on the
    // block's stream (stream()): pulses in, images out; these overlap the kernels.
    std::unique_ptr<kernels::cuda_stream> d_kernel_stream;
    std::unique_ptr<kernels::backprojection> d_kernel;
    // The image being integrated: device memory on CUDA, host memory on the CPU.
    kernels::device_memory d_image_dev;
    std::vector<gr_complex> d_image_host;
    // CUDA: two staging areas, used in turn: one is copied into while the kernel
    // reads the other.
    std::vector<pulse_stage> d_stages;
    int d_stage_pulses = 0; //!< pulses per staging area
    unsigned d_next_stage = 0;
    // Non-finite count after each emitted image (pinned on CUDA, host on the CPU) and,
    // on CUDA, the event after its copy out.
    kernels::pinned_memory d_image_counts_pinned;
    std::vector<std::uint64_t> d_image_counts_host;
    std::uint64_t* d_image_counts = nullptr;
    std::vector<kernels::cuda_event> d_image_done;
    //! CUDA: recorded on stream() after begin_work(); the kernel stream follows it.
    std::optional<kernels::cuda_event> d_work_start;
    std::vector<emitted_image> d_emitted;
    // Factorized: an image's pulses (device memory on CUDA, host on the CPU) and
    // geometry, formed at once when complete; CUDA: `staged` on the block's stream after
    // the last copy in, `free` on the kernel stream after the FFBP that reads them.
    kernels::device_memory d_aperture_dev;
    std::vector<gr_complex> d_aperture_host;
    std::vector<double> d_aperture_geometry;
    std::optional<kernels::cuda_event> d_aperture_staged, d_aperture_free;
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
