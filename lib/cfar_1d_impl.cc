/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "cfar_1d_impl.h"
#include "backend_select.h"
#include "cfar_detections.h"
#include "cpi_tag.h"
#include <gnuradio/io_signature.h>
#include <numeric>

namespace gr {
namespace gpuradar {

namespace {
constexpr const char* block_name = "cfar_1d";

// Out 0: the mask (uint8 per cell); out 1, optional: the threshold (float per cell).
gr::io_signature::sptr mask_threshold_signature(kernels::backend b, std::size_t cells)
{
    const int mask_size = static_cast<int>(cells * sizeof(std::uint8_t));
    const int thr_size = static_cast<int>(cells * sizeof(float));
    if (b == kernels::backend::cuda)
        return gr::io_signature::make2(
            1, 2, mask_size, thr_size, device_buffer::type, device_buffer::type);
    return gr::io_signature::make2(1, 2, mask_size, thr_size);
}
} // namespace

cfar_1d::sptr cfar_1d::make(unsigned int nrange,
                            unsigned int channels,
                            int guard,
                            int train,
                            double pfa,
                            const std::string& variant,
                            int os_k,
                            const std::string& edge,
                            bool local_max_only,
                            unsigned int items_per_cpi,
                            unsigned int max_detections,
                            const std::string& backend)
{
    check_positive(block_name, "nrange", nrange);
    check_positive(block_name, "channels", channels);
    check_positive(block_name, "items_per_cpi", items_per_cpi);
    check_positive(block_name, "max_detections", max_detections);
    kernels::cfar_1d_params p;
    p.nrange = nrange;
    p.channels = channels;
    p.guard = guard;
    p.train = train;
    p.pfa = pfa;
    p.variant = kernels::parse_cfar_variant(variant);
    p.os_k = os_k;
    p.edge = kernels::parse_cfar_edge(edge, "edge");
    p.local_max = local_max_only;
    p.max_items = items_per_cpi; // one run and one detection list per group
    p.max_detections = max_detections;
    if (p.variant == kernels::cfar_variant::os && os_k == 0 && train >= 1)
        p.os_k = kernels::cfar_default_os_k(2 * train); // 0: the usual rank
    const auto b = select_backend(backend, block_name);
    return gnuradio::make_block_sptr<cfar_1d_impl>(p, b);
}

cfar_1d_impl::cfar_1d_impl(const kernels::cfar_1d_params& params, kernels::backend backend)
    : gr::block("cfar_1d",
                stream_signature(backend, params.channels * params.nrange * sizeof(float)),
                mask_threshold_signature(backend, params.channels * params.nrange)),
      gpu_stream_owner(backend, block_name),
      d_params(params),
      d_backend(backend),
      d_kernel(kernels::cfar_1d::make(backend, params, stream()))
{
    set_output_multiple(static_cast<int>(params.max_items));
    set_tag_propagation_policy(TPP_DONT);
    message_port_register_out(detections_port());
}

void cfar_1d_impl::forecast(int noutput_items, gr_vector_int& ninput_items_required)
{
    ninput_items_required[0] = noutput_items;
}

bool cfar_1d_impl::shape_matches(const pmt::pmt_t& dict)
{
    const std::uint64_t nr = cpi_field(dict, "nrange", d_params.nrange);
    const std::uint64_t ch = cpi_field(dict, "channels", d_params.channels);
    if (nr == d_params.nrange && ch == d_params.channels)
        return true;
    d_logger->error("cpi tag shape nrange={}, channels={} differs from the block's "
                    "nrange={}, channels={}: items discarded",
                    nr,
                    ch,
                    d_params.nrange,
                    d_params.channels);
    return false;
}

void cfar_1d_impl::publish(const pmt::pmt_t& dict,
                           std::uint64_t index,
                           std::uint64_t item_base)
{
    const kernels::cfar_report report = d_kernel->collect();
    const std::uint64_t nonfinite =
        std::accumulate(report.nonfinite.begin(), report.nonfinite.end(), std::uint64_t(0));
    d_logger->debug("cpi {}: {} detections, {} NaN/Inf cells", index, report.found, nonfinite);
    if (nonfinite) {
        d_nonfinite += nonfinite;
        d_logger->warn("cpi {} (items from {}): {} NaN/Inf cells (never detections)",
                       index,
                       item_base,
                       nonfinite);
    }
    if (report.overflow()) {
        ++d_overflowed;
        d_logger->warn("cpi {} (items from {}): {} detections, only max_detections={} "
                       "reported",
                       index,
                       item_base,
                       report.found,
                       d_params.max_detections);
    }
    const cpi_axes axes = read_cpi_axes(dict, index, false);
    std::vector<pmt::pmt_t> dets;
    dets.reserve(report.detections.size());
    for (const auto& d : report.detections)
        dets.push_back(detection_dict(d,
                                      axes,
                                      d.map % d_params.channels,
                                      static_cast<long>(item_base + d.map / d_params.channels)));
    pmt::pmt_t meta = detections_meta(
        dict, index, d_params.channels, report, nonfinite, d_kernel->alpha(), d_params.variant);
    meta = pmt::dict_add(meta, pmt::intern("first_item"), pmt::from_uint64(item_base));
    meta = pmt::dict_add(meta, pmt::intern("items"), pmt::from_uint64(d_params.max_items));
    message_port_pub(detections_port(), detections_pdu(meta, dets));
}

int cfar_1d_impl::general_work(int noutput_items,
                               gr_vector_int& ninput_items,
                               gr_vector_const_void_star& input_items,
                               gr_vector_void_star& output_items)
{
    const auto* in = static_cast<const float*>(input_items[0]);
    auto* mask = static_cast<std::uint8_t*>(output_items[0]);
    auto* thr = output_items.size() > 1 ? static_cast<float*>(output_items[1]) : nullptr;
    const std::size_t cells = d_params.channels * d_params.nrange; // per item
    const int group = static_cast<int>(d_params.max_items);
    const std::uint64_t read0 = nitems_read(0);
    const std::uint64_t written0 = nitems_written(0);

    int consumed = 0, produced = 0;
    while (consumed + group <= ninput_items[0] && produced + group <= noutput_items) {
        const std::uint64_t start = read0 + consumed;
        std::vector<gr::tag_t> tags;
        get_tags_in_range(tags, 0, start, start + group);
        const cpi_group_tags g = split_group_tags(tags, start);
        if (g.cut) {
            consumed += static_cast<int>(g.cut);
            ++d_dropped;
            d_logger->warn("discarded {} items of a group cut short by a cpi tag ({} "
                           "groups dropped so far)",
                           g.cut,
                           d_dropped.load());
            continue;
        }
        if (g.cpi && !shape_matches(g.cpi)) {
            consumed += group;
            ++d_dropped;
            d_last_tag = pmt::pmt_t(); // its CPI is unusable: do not label items by it
            continue;
        }
        pmt::pmt_t emit; // the cpi tag to put on the group's first output item, if any
        if (g.cpi) {
            d_index = cpi_field(g.cpi, "index", d_last_tag ? d_index + 1 : d_index);
            d_last_tag = g.cpi;
            d_item_base = 0;
            emit = g.cpi;
        } else if (!d_last_tag) {
            // No tag seen: each group is a CPI of its own, counted from the start.
            emit = pmt::make_dict();
            emit = pmt::dict_add(emit, pmt::intern("index"), pmt::from_uint64(d_index));
            emit = pmt::dict_add(emit, pmt::intern("nrange"), pmt::from_uint64(d_params.nrange));
        }
        const std::size_t in_off = std::size_t(consumed) * cells;
        const std::size_t out_off = std::size_t(produced) * cells;
        d_kernel->run(in + in_off, mask + out_off, thr ? thr + out_off : nullptr, group);
        publish(d_last_tag ? d_last_tag : emit, d_index, d_item_base);

        const std::uint64_t out_start = written0 + produced;
        for (unsigned port = 0; port < output_items.size(); ++port) {
            if (emit)
                add_item_tag(port, out_start, cpi_tag_key(), emit);
            for (const auto& t : g.other)
                add_item_tag(port, out_start + (t.offset - start), t.key, t.value, t.srcid);
        }
        if (d_last_tag) {
            d_item_base += group;
        } else {
            ++d_index;
        }
        consumed += group;
        produced += group;
    }
    finish_work();
    consume_each(consumed);
    return produced;
}

} // namespace gpuradar
} // namespace gr
