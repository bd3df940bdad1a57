/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "backend_select.h"
#include "backprojection_impl.h"
#include <gnuradio/buffer_double_mapped.h>
#include <gnuradio/io_signature.h>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace gr {
namespace gpuradar {

namespace {

constexpr const char* block_name = "backprojection";
constexpr std::size_t geometry_bytes = backprojection::geometry_length * sizeof(double);
static_assert(backprojection::geometry_length == kernels::backprojection::geometry_length,
              "the block's geometry item is the kernel's geometry vector");
//! Pulses a work() call waits for (see forecast): 64 keeps the per-call image traffic
//! (~6 pulses' worth) near 10% of the kernel's work.
constexpr int min_pulses_per_call = 64;
//! Bytes of pulses per CUDA staging area (at most an image's pulses, at least one
//! pulse). When an image is copied out, the host waits for that copy while the kernels
//! of up to two areas run: large enough that they outlast an image's copy over PCIe.
constexpr std::size_t stage_bytes = std::size_t(32) << 20;
//! Index of dr in the geometry vector [x, y, z, r0, dr, f0] (CONVENTIONS.md).
constexpr std::size_t geometry_dr = 4;
//! Most image columns: one output item (nx complex, 1 GiB) must fit GNU Radio's int
//! item size.
constexpr unsigned int max_columns = 1u << 27;

bool parse_mode(const std::string& mode)
{
    if (mode == "restart")
        return false;
    if (mode == "accumulate")
        return true;
    throw std::invalid_argument(std::string("gpuradar::") + block_name +
                                ": mode must be one of restart, accumulate (got '" +
                                mode + "')");
}

//! Input 0 pulses (device buffer on CUDA), input 1 geometry (host: the kernel prepares
//! each pulse on the host in double).
gr::io_signature::sptr pulse_geometry_signature(kernels::backend b, unsigned int nbins)
{
    const int pulse_bytes = static_cast<int>(std::size_t(nbins) * sizeof(gr_complex));
    if (b == kernels::backend::cuda)
        return gr::io_signature::make2(2,
                                       2,
                                       pulse_bytes,
                                       int(geometry_bytes),
                                       device_buffer::type,
                                       gr::buffer_double_mapped::type);
    return gr::io_signature::make2(2, 2, pulse_bytes, int(geometry_bytes));
}

} // namespace

backprojection::sptr backprojection::make(unsigned int nbins,
                                          unsigned int nx,
                                          unsigned int ny,
                                          double x0,
                                          double y0,
                                          double dx,
                                          double dy,
                                          double z,
                                          unsigned int pulses_per_image,
                                          const std::string& mode,
                                          const std::string& precision,
                                          const std::vector<float>& height,
                                          const std::string& backend,
                                          unsigned int nz,
                                          double dz,
                                          int device,
                                          const std::string& algorithm,
                                          int ffbp_stages,
                                          int ffbp_factor,
                                          int ffbp_order_range,
                                          int ffbp_order_angle,
                                          double ffbp_oversample_range,
                                          double ffbp_oversample_angle)
{
    check_positive(block_name, "pulses_per_image", pulses_per_image);
    if (nx > max_columns)
        throw std::invalid_argument(
            std::string("gpuradar::") + block_name + ": nx must be at most " +
            std::to_string(max_columns) +
            " columns (one output item, a row of nx complex, at most 1 GiB; got " +
            std::to_string(nx) + ", " + std::to_string(double(nx) * 8 / (1 << 30)) +
            " GiB)");
    const bool accumulate = parse_mode(mode);
    const auto p = kernels::backprojection::parse_precision(precision);
    const auto alg = kernels::parse_bp_algorithm(algorithm);
    kernels::ffbp_options ffbp;
    ffbp.stages = ffbp_stages;
    ffbp.factor = ffbp_factor;
    ffbp.order_range = ffbp_order_range;
    ffbp.order_angle = ffbp_order_angle;
    ffbp.oversample_range = ffbp_oversample_range;
    ffbp.oversample_angle = ffbp_oversample_angle;
    if (alg == kernels::bp_algorithm::factorized) {
        kernels::backprojection_factorized::validate(ffbp);
        // Every image is formed from its pulses_per_image pulses at once.
        kernels::backprojection_factorized::stages_for(ffbp, pulses_per_image);
    }
    kernels::image_grid g;
    g.x0 = x0;
    g.y0 = y0;
    g.dx = dx;
    g.dy = dy;
    g.nx = nx;
    g.ny = ny;
    g.z = z;
    g.height.assign(height.begin(), height.end());
    g.nz = nz;
    g.dz = dz;
    // The whole grid and nbins, overflow-safe, before the port signatures (item sizes)
    // and the image are made.
    kernels::backprojection::validate(g, nbins);
    const auto b = select_backend(backend, block_name);
    return make_block_on_device<backprojection_impl>(b,
                                                     device,
                                                     block_name,
                                                     nbins,
                                                     g,
                                                     pulses_per_image,
                                                     accumulate,
                                                     p,
                                                     b,
                                                     device,
                                                     alg,
                                                     ffbp);
}

backprojection_impl::backprojection_impl(unsigned int nbins,
                                         const kernels::image_grid& grid,
                                         unsigned int pulses_per_image,
                                         bool accumulate,
                                         kernels::backprojection::precision precision,
                                         kernels::backend backend,
                                         int device,
                                         kernels::bp_algorithm algorithm,
                                         const kernels::ffbp_options& ffbp)
    : gr::block("backprojection",
                pulse_geometry_signature(backend, nbins),
                stream_signature(backend, std::size_t(grid.nx) * sizeof(gr_complex))),
      gpu_stream_owner(backend, block_name, kernels::stream_priority::normal, device),
      d_nbins(nbins),
      d_pulses_per_image(pulses_per_image),
      d_npix(static_cast<std::size_t>(grid.voxels())),
      d_accumulate(accumulate),
      d_backend(backend),
      d_algorithm(algorithm),
      d_kernel_stream(backend == kernels::backend::cuda
                          ? std::make_unique<kernels::cuda_stream>()
                          : nullptr),
      d_kernel(algorithm == kernels::bp_algorithm::factorized
                   ? kernels::backprojection_factorized::make(
                         backend, grid, nbins, ffbp, kernel_stream())
                   : kernels::backprojection::make(
                         backend, grid, nbins, precision, kernel_stream()))
{
    const std::size_t pulse_bytes = std::size_t(nbins) * sizeof(gr_complex);
    const bool factorized = algorithm == kernels::bp_algorithm::factorized;
    if (factorized) {
        d_aperture_geometry.resize(std::size_t(pulses_per_image) * geometry_length);
        if (backend == kernels::backend::cuda) {
            d_aperture_dev =
                kernels::device_memory(std::size_t(pulses_per_image) * pulse_bytes);
            d_aperture_staged.emplace();
            d_aperture_free.emplace();
        } else {
            d_aperture_host.resize(std::size_t(pulses_per_image) * nbins);
        }
    }
    if (backend == kernels::backend::cuda) {
        d_image_dev = kernels::device_memory(d_npix * sizeof(gr_complex));
        // Factorized collects its pulses in the aperture instead of staging areas.
        if (!factorized) {
            d_stage_pulses = static_cast<int>(
                std::clamp<std::size_t>(stage_bytes / pulse_bytes, 1, pulses_per_image));
            d_stages.resize(2);
            for (auto& area : d_stages)
                area.pulses =
                    kernels::device_memory(std::size_t(d_stage_pulses) * pulse_bytes);
        }
        d_image_counts_pinned =
            kernels::pinned_memory(max_images_per_call * sizeof(std::uint64_t));
        d_image_counts = d_image_counts_pinned.as<std::uint64_t>();
        d_image_done.resize(max_images_per_call);
        d_work_start.emplace();
    } else {
        d_image_host.resize(d_npix);
        d_image_counts_host.resize(max_images_per_call);
        d_image_counts = d_image_counts_host.data();
    }
    d_emitted.reserve(max_images_per_call);
    clear_image();
    if (d_kernel_stream)
        d_kernel_stream->synchronize("gpuradar::backprojection");
    synchronize_stream();
    // One image = nz*ny output items (validated: at most 2^30). The relative rate stays
    // 1: pulses are integrated as they come, so the upstream buffer need not hold a
    // whole aperture.
    set_output_multiple(static_cast<int>(grid.ny * grid.nz));
    // Images do not map to pulses item for item: no tag propagation.
    set_tag_propagation_policy(TPP_DONT);
}

void backprojection_impl::forecast(int, gr_vector_int& ninput_items_required)
{
    // Any number of pulses can be integrated, but every kernel call reads and writes the
    // whole image (16 bytes per pixel, as long as a few pulses take to integrate, plus
    // the launch and the host's turn-around): wait for a batch, never more than
    // completes the image, nor more than ny pulses (GNU Radio sizes the input buffers
    // for at least 2 x ny items from the output multiple).
    const int batch = std::min<int>({ static_cast<int>(d_pulses_per_image - d_count),
                                      min_pulses_per_call,
                                      output_multiple() });
    ninput_items_required[0] = batch;
    ninput_items_required[1] = batch;
}

bool backprojection_impl::stop()
{
    if (d_kernel_stream) {
        const device_guard on(*this);
        d_kernel_stream->synchronize("gpuradar::backprojection");
    }
    return true;
}

void backprojection_impl::clear_image()
{
    if (d_backend == kernels::backend::cuda)
        kernels::fill_bytes_async(d_image_dev.get(),
                                  0,
                                  d_image_dev.size(),
                                  kernel_stream(),
                                  "gpuradar::backprojection");
    else
        std::fill(d_image_host.begin(), d_image_host.end(), gr_complex(0, 0));
}

void backprojection_impl::tag_images()
{
    for (const emitted_image& e : d_emitted) {
        // CUDA: the count was copied behind the image's last kernel; this waits for that
        // image only, the kernels queued after it keep running.
        if (d_backend == kernels::backend::cuda)
            d_image_done[e.slot].synchronize();
        const std::uint64_t nonfinite = d_image_counts[e.slot];
        add_item_tag(0,
                     e.item,
                     pmt::intern("nonfinite_samples"),
                     pmt::from_uint64(nonfinite - d_nonfinite_at_emit));
        add_item_tag(0,
                     e.item,
                     pmt::intern("skipped_pulses"),
                     pmt::from_uint64(e.skipped - d_skipped_at_emit));
        d_nonfinite_at_emit = nonfinite;
        d_skipped_at_emit = e.skipped;
        d_nonfinite = nonfinite;
    }
    d_emitted.clear();
}

void backprojection_impl::emit(gr_complex* out, std::uint64_t item)
{
    const std::size_t bytes = d_npix * sizeof(gr_complex);
    const auto slot = static_cast<unsigned>(d_emitted.size());
    if (d_backend == kernels::backend::cuda)
        // On the kernel stream: behind the image's kernels, before the next image's
        // (which then need no second image buffer). The output's copy to the host runs
        // on the block's stream after tag_images() has seen this copy done.
        kernels::copy_async(out,
                            d_image_dev.get(),
                            bytes,
                            kernels::copy_kind::device_to_device,
                            kernel_stream(),
                            "gpuradar::backprojection");
    else
        std::memcpy(out, d_image_host.data(), bytes);
    if (!d_accumulate)
        clear_image();
    d_kernel->nonfinite_samples_async(&d_image_counts[slot]);
    if (d_backend == kernels::backend::cuda)
        d_image_done[slot].record(kernel_stream());
    d_emitted.push_back({ item, d_kernel->skipped_pulses(), slot });
    ++d_images;
}

const gr_complex*
backprojection_impl::stage(pulse_stage& area, const gr_complex* pulses, int n)
{
    area.consumed.make_stream_wait(stream());
    kernels::copy_async(area.pulses.get(),
                        pulses,
                        std::size_t(n) * d_nbins * sizeof(gr_complex),
                        kernels::copy_kind::device_to_device,
                        stream(),
                        "gpuradar::backprojection");
    area.staged.record(stream());
    area.staged.make_stream_wait(kernel_stream());
    return area.pulses.as<gr_complex>();
}

void backprojection_impl::integrate(const gr_complex* pulses,
                                    const double* geometry,
                                    int n)
{
    // A finite dr <= 0 is a data error the kernel refuses for the whole call: make that
    // pulse's geometry non-finite so that the kernel skips and counts it like the others.
    bool bad_dr = false;
    for (int i = 0; i < n && !bad_dr; ++i) {
        const double dr = geometry[std::size_t(i) * geometry_length + geometry_dr];
        bad_dr = std::isfinite(dr) && dr <= 0;
    }
    if (bad_dr) {
        d_geometry_scratch.assign(geometry, geometry + std::size_t(n) * geometry_length);
        for (int i = 0; i < n; ++i) {
            double* g = &d_geometry_scratch[std::size_t(i) * geometry_length];
            if (std::isfinite(g[geometry_dr]) && g[geometry_dr] <= 0)
                g[geometry_dr] = std::numeric_limits<double>::quiet_NaN();
        }
        geometry = d_geometry_scratch.data();
    }
    auto* image = d_backend == kernels::backend::cuda ? d_image_dev.as<gr_complex>()
                                                      : d_image_host.data();
    const bool factorized = d_algorithm == kernels::bp_algorithm::factorized;
    if (factorized) {
        if (!collect(pulses, geometry, n))
            return;
        n = static_cast<int>(d_pulses_per_image);
        geometry = d_aperture_geometry.data();
        if (d_backend == kernels::backend::cuda) {
            pulses = d_aperture_dev.as<gr_complex>();
            d_aperture_staged->make_stream_wait(kernel_stream());
        } else {
            pulses = d_aperture_host.data();
        }
    }
    pulse_stage* area = d_stages.empty() ? nullptr : &d_stages[d_next_stage];
    try {
        if (area) {
            d_next_stage = (d_next_stage + 1) % unsigned(d_stages.size());
            pulses = stage(*area, pulses, n);
        }
        d_kernel->run(pulses, geometry, std::size_t(n), image);
    } catch (const std::exception& e) {
        // Never throw from work(): the pulses are lost to this image, counted and logged
        // (the first failure, then each time the count doubles).
        d_failed += std::uint64_t(n);
        if (d_failed >= d_next_fail_log) {
            d_logger->error(
                "{} pulses not backprojected ({} so far): {}", n, d_failed, e.what());
            while (d_next_fail_log <= d_failed)
                d_next_fail_log *= 2;
        }
    }
    if (area) // also after an error: whatever was queued has read the area by then
        area->consumed.record(kernel_stream());
    if (factorized && d_aperture_free)
        d_aperture_free->record(kernel_stream());
}

bool backprojection_impl::collect(const gr_complex* pulses, const double* geometry, int n)
{
    const std::size_t first = d_count;
    std::copy(geometry,
              geometry + std::size_t(n) * geometry_length,
              d_aperture_geometry.begin() + first * geometry_length);
    const std::size_t bytes = std::size_t(n) * d_nbins * sizeof(gr_complex);
    if (d_backend == kernels::backend::cuda) {
        if (first == 0) // the previous image's FFBP may still read the aperture
            d_aperture_free->make_stream_wait(stream());
        kernels::copy_async(d_aperture_dev.as<gr_complex>() + first * d_nbins,
                            pulses,
                            bytes,
                            kernels::copy_kind::device_to_device,
                            stream(),
                            "gpuradar::backprojection");
        d_aperture_staged->record(stream());
    } else {
        std::memcpy(d_aperture_host.data() + first * d_nbins, pulses, bytes);
    }
    return first + std::size_t(n) == d_pulses_per_image;
}

void backprojection_impl::note_skipped()
{
    const std::uint64_t s = d_kernel->skipped_pulses();
    d_skipped = s;
    // Logged at 1, 2, 4, 8, ... skipped pulses: visible without flooding the log.
    if (s >= d_next_log) {
        d_logger->warn(
            "{} pulses skipped so far (non-finite geometry, dr <= 0 or values "
            "the precision cannot carry); they contribute nothing to the image",
            s);
        while (d_next_log <= s)
            d_next_log *= 2;
    }
}

int backprojection_impl::next_batch(int available, int produced, int noutput_items) const
{
    int n = std::min(available, static_cast<int>(d_pulses_per_image - d_count));
    if (d_stage_pulses > 0)
        n = std::min(n, d_stage_pulses);
    const bool completes = d_count + static_cast<unsigned int>(n) == d_pulses_per_image;
    // An image that cannot be emitted now gets all its pulses but the last: the kernels
    // keep running while the host waits for the output's copy.
    if (completes && (produced + output_multiple() > noutput_items ||
                      d_emitted.size() == max_images_per_call))
        return n - 1;
    return n;
}

int backprojection_impl::general_work(int noutput_items,
                                      gr_vector_int& ninput_items,
                                      gr_vector_const_void_star& input_items,
                                      gr_vector_void_star& output_items)
{
    begin_work(); // before any kernel touches the buffers
    if (d_work_start) {
        // The kernels follow what begin_work() ordered on the block's stream (readers'
        // releases of the output, writers of the input).
        d_work_start->record(stream());
        d_work_start->make_stream_wait(kernel_stream());
    }
    const auto* pulses = static_cast<const gr_complex*>(input_items[0]);
    const auto* geometry = static_cast<const double*>(input_items[1]);
    auto* out = static_cast<gr_complex*>(output_items[0]);
    const int ny = output_multiple();
    const int navail = std::min(ninput_items[0], ninput_items[1]);

    int consumed = 0, produced = 0;
    // Pulses are integrated as long as they come; an image is completed only where its
    // ny output items fit.
    while (consumed < navail) {
        const int n = next_batch(navail - consumed, produced, noutput_items);
        if (n == 0)
            break;
        integrate(pulses + std::size_t(consumed) * d_nbins,
                  geometry + std::size_t(consumed) * geometry_length,
                  n);
        consumed += n;
        d_count += static_cast<unsigned int>(n);
        if (d_count == d_pulses_per_image) {
            emit(out + std::size_t(produced) * (d_npix / std::size_t(ny)),
                 nitems_written(0) + std::uint64_t(produced));
            produced += ny;
            d_count = 0;
        }
    }
    tag_images();
    // Waits for the staging copies (the input is released on return), not the kernels.
    finish_work(produced);
    note_skipped();
    consume_each(consumed);
    return produced;
}

} // namespace gpuradar
} // namespace gr
