/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "backend_select.h"
#include "cpi_tag.h"
#include "sar_focus_impl.h"
#include "stripmap_acquisition_args.h"
#include "stripmap_tag.h"
#include <gnuradio/io_signature.h>
#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace gr {
namespace gpuradar {

namespace {

constexpr const char* block_name = "sar_focus";

//! Algorithms with a name reserved in the GRC enum but no implementation yet.
constexpr const char* reserved_algorithms[] = { "rda", "omega_k" };

void check_algorithm(const std::string& algorithm)
{
    if (algorithm == "csa")
        return;
    const std::string prefix = std::string("gpuradar::") + block_name + ": algorithm ";
    for (const char* name : reserved_algorithms)
        if (algorithm == name)
            throw std::invalid_argument(prefix + "'" + algorithm +
                                        "' is not implemented yet (allowed: csa)");
    throw std::invalid_argument(prefix + "must be one of csa (got '" + algorithm + "')");
}

//! A window parameter by name, the error naming the block's parameter.
kernels::window_spec parse_window(const std::string& name, const char* param)
{
    try {
        return kernels::window_spec::make(name);
    } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(std::string("gpuradar::") + block_name + ": " +
                                    param + ": " + e.what());
    }
}

} // namespace

sar_focus::sptr sar_focus::make(double fc,
                                double bandwidth,
                                double pulse_width,
                                bool up_chirp,
                                double fs,
                                double prf,
                                double velocity,
                                double altitude,
                                double near_range,
                                unsigned int nrange,
                                double squint,
                                double antenna_length,
                                const std::string& algorithm,
                                unsigned int naz,
                                const std::string& range_window,
                                const std::string& azimuth_window,
                                const std::string& backend,
                                int device)
{
    params p;
    p.acquisition = acquisition_from_args(fc,
                                          bandwidth,
                                          pulse_width,
                                          up_chirp,
                                          fs,
                                          prf,
                                          velocity,
                                          altitude,
                                          near_range,
                                          nrange,
                                          squint,
                                          antenna_length);
    p.algorithm = algorithm;
    p.naz = naz;
    p.range_window = range_window;
    p.azimuth_window = azimuth_window;
    p.backend = backend;
    p.device = device;
    return make(p);
}

sar_focus::sptr sar_focus::make(const params& a)
{
    check_algorithm(a.algorithm);
    const auto p = make_stripmap_params(block_name, a.acquisition);
    const auto plan = azimuth_blocks::make(p, a.naz, block_name);
    kernels::csa::options o;
    o.range_window = parse_window(a.range_window, "range_window");
    o.azimuth_window = parse_window(a.azimuth_window, "azimuth_window");
    const auto b = select_backend(a.backend, block_name);
    return make_block_on_device<sar_focus_impl>(
        b, a.device, block_name, p, plan, o, b, a.device);
}

sar_focus_impl::sar_focus_impl(const kernels::stripmap_params& p,
                               const azimuth_blocks& plan,
                               const kernels::csa::options& o,
                               kernels::backend backend,
                               int device)
    : gr::block("sar_focus",
                stream_signature(backend, p.nrange * sizeof(gr_complex)),
                stream_signature(backend, p.nrange * sizeof(gr_complex))),
      gpu_stream_owner(backend, block_name, kernels::stream_priority::normal, device),
      d_params(p),
      d_plan(plan),
      d_backend(backend),
      d_csa(kernels::csa::make(backend, p, plan.naz, o, stream()))
{
    const std::size_t block_samples = plan.naz * p.nrange;
    if (backend == kernels::backend::cuda)
        d_image_dev = kernels::device_memory(block_samples * sizeof(gr_complex));
    else
        d_image_host.resize(block_samples);
    // Rows go out a stride at a time. A block reads naz pulses and consumes a stride:
    // the relative rate stride/naz makes GNU Radio size the input buffer for at least
    // two whole blocks (it sizes it from the reader's decimation x output multiple).
    set_output_multiple(int(plan.stride()));
    set_relative_rate(std::uint64_t(plan.stride()), std::uint64_t(plan.naz));
    set_tag_propagation_policy(TPP_DONT);
}

void sar_focus_impl::forecast(int noutput_items, gr_vector_int& ninput_items_required)
{
    // whole blocks only: each further block needs `stride` more pulses
    const int blocks = std::max(1, noutput_items / int(d_plan.stride()));
    ninput_items_required[0] = (blocks - 1) * int(d_plan.stride()) + int(d_plan.naz);
}

std::uint64_t sar_focus_impl::next_strip_start(std::uint64_t from, std::uint64_t to)
{
    std::vector<gr::tag_t> tags;
    get_tags_in_range(tags, 0, from, to, stripmap_tag_key());
    std::sort(tags.begin(), tags.end(), gr::tag_t::offset_compare);
    for (const auto& t : tags) {
        if (t.offset >= d_tags_checked_to) {
            d_tags_checked_to = t.offset + 1;
            if (!stripmap_dict_matches(t.value, d_params)) {
                ++d_mismatched;
                d_logger->warn("stripmap tag at pulse {} differs from the block's "
                               "acquisition parameters ({} so far); focusing with the "
                               "block's own",
                               t.offset,
                               std::uint64_t(d_mismatched));
            }
        }
        return t.offset;
    }
    d_tags_checked_to = std::max(d_tags_checked_to, to);
    return to;
}

void sar_focus_impl::adopt_strip_tag(std::uint64_t offset)
{
    next_strip_start(offset, offset + 1); // checks its parameters
    std::vector<gr::tag_t> tags;
    get_tags_in_range(tags, 0, offset, offset + 1, stripmap_tag_key());
    const pmt::pmt_t d = tags.empty() ? pmt::PMT_NIL : tags.front().value;
    d_strip_y0 = cpi_double(d, "y0", 0.0);
    d_strip_pulse = cpi_field(d, "pulse", offset);
}

void sar_focus_impl::tag_first_row(std::uint64_t out_offset)
{
    const double dy = d_params.velocity_mps / d_params.prf_hz;
    add_item_tag(0,
                 out_offset,
                 stripmap_tag_key(),
                 stripmap_dict(d_params,
                               d_strip_y0 + double(d_plan.lead) * dy,
                               d_strip_pulse + d_plan.lead));
}

void sar_focus_impl::focus(const gr_complex* raw, gr_complex* out)
{
    const std::size_t row = d_params.nrange;
    const std::size_t bytes = d_plan.stride() * row * sizeof(gr_complex);
    const bool cuda = d_backend == kernels::backend::cuda;
    gr_complex* image = cuda ? d_image_dev.as<gr_complex>() : d_image_host.data();
    try {
        d_csa->run(raw, image);
        if (cuda)
            kernels::copy_async(out,
                                image + d_plan.lead * row,
                                bytes,
                                kernels::copy_kind::device_to_device,
                                stream(),
                                "gpuradar::sar_focus");
        else
            std::memcpy(out, image + d_plan.lead * row, bytes);
        ++d_blocks;
        return;
    } catch (const std::exception& e) {
        // Never throw from work(): the block's rows go out as zeros (the stream stays
        // aligned), counted and logged (the first failure, then at each doubling).
        ++d_failed;
        if (d_failed >= d_next_fail_log) {
            d_logger->error("azimuth block not focused ({} so far): {}",
                            std::uint64_t(d_failed),
                            e.what());
            while (d_next_fail_log <= d_failed)
                d_next_fail_log *= 2;
        }
    }
    if (cuda) {
        try {
            kernels::fill_bytes_async(out, 0, bytes, stream(), "gpuradar::sar_focus");
        } catch (const std::exception&) {
            // the device is failing; the count and the log above say so
        }
    } else {
        std::memset(out, 0, bytes);
    }
}

int sar_focus_impl::general_work(int noutput_items,
                                 gr_vector_int& ninput_items,
                                 gr_vector_const_void_star& input_items,
                                 gr_vector_void_star& output_items)
{
    begin_work();
    const auto* in = static_cast<const gr_complex*>(input_items[0]);
    auto* out = static_cast<gr_complex*>(output_items[0]);
    const std::uint64_t read = nitems_read(0);
    const std::size_t row = d_params.nrange;
    const int stride = int(d_plan.stride()), naz = int(d_plan.naz);
    int consumed = 0, produced = 0;
    while (ninput_items[0] - consumed >= naz && noutput_items - produced >= stride) {
        // The block [pos, pos + naz) emits rows [pos + lead, pos + lead + stride).
        const std::uint64_t pos = read + std::uint64_t(consumed);
        if (pos == d_strip_start)
            adopt_strip_tag(pos);
        const std::uint64_t t = next_strip_start(pos + 1, pos + std::uint64_t(naz));
        if (t < pos + std::uint64_t(naz)) { // a new strip inside this block
            ++d_restarts;
            consumed = int(t - read);
            d_strip_start = t;
            d_tag_pending = true;
            continue;
        }
        focus(in + std::size_t(consumed) * row, out + std::size_t(produced) * row);
        if (d_tag_pending) {
            tag_first_row(nitems_written(0) + std::uint64_t(produced));
            d_tag_pending = false;
        }
        consumed += stride;
        produced += stride;
    }
    finish_work(produced);
    consume_each(consumed);
    return produced;
}

} // namespace gpuradar
} // namespace gr
