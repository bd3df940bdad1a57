/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "cfar_2d_impl.h"
#include "backend_select.h"
#include "cfar_detections.h"
#include "cpi_tag.h"
#include <gnuradio/io_signature.h>
#include <limits>
#include <numeric>

namespace gr {
namespace gpuradar {

namespace {
constexpr const char* block_name = "cfar_2d";

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

cfar_2d::sptr cfar_2d::make(unsigned int nrange,
                            unsigned int ndoppler,
                            unsigned int channels,
                            int guard_range,
                            int train_range,
                            int guard_doppler,
                            int train_doppler,
                            double pfa,
                            const std::string& variant,
                            int os_k,
                            const std::string& range_edge,
                            const std::string& doppler_edge,
                            bool local_max_only,
                            unsigned int max_detections,
                            const std::string& backend)
{
    check_positive(block_name, "nrange", nrange);
    check_positive(block_name, "ndoppler", ndoppler);
    check_positive(block_name, "channels", channels);
    check_positive(block_name, "max_detections", max_detections);
    kernels::cfar_2d_params p;
    p.nrange = nrange;
    p.ndoppler = ndoppler;
    p.channels = channels;
    p.guard_range = guard_range;
    p.train_range = train_range;
    p.guard_doppler = guard_doppler;
    p.train_doppler = train_doppler;
    p.pfa = pfa;
    p.variant = kernels::parse_cfar_variant(variant);
    p.os_k = os_k;
    p.range_edge = kernels::parse_cfar_edge(range_edge, "range_edge");
    p.doppler_edge = kernels::parse_cfar_edge(doppler_edge, "doppler_edge");
    p.local_max = local_max_only;
    p.max_cpi = 1; // one CPI per run: one detection list (and PDU) per CPI
    p.max_detections = max_detections;
    if (p.variant == kernels::cfar_variant::os && os_k == 0 && guard_range >= 0 &&
        train_range >= 0 && guard_doppler >= 0 && train_doppler >= 0) {
        // os_k = 0 asks for the usual rank of the full window's N training cells.
        const long wr = long(guard_range) + train_range;
        const long wd = long(guard_doppler) + train_doppler;
        const long n = (2 * wr + 1) * (2 * wd + 1) -
                       (2L * guard_range + 1) * (2L * guard_doppler + 1);
        if (n >= 1 && n <= std::numeric_limits<int>::max())
            p.os_k = kernels::cfar_default_os_k(static_cast<int>(n));
    }
    const auto b = select_backend(backend, block_name);
    // The kernel checks every parameter (std::invalid_argument naming it) before it
    // allocates anything.
    return gnuradio::make_block_sptr<cfar_2d_impl>(p, b);
}

cfar_2d_impl::cfar_2d_impl(const kernels::cfar_2d_params& params, kernels::backend backend)
    : gr::block("cfar_2d",
                stream_signature(backend, params.channels * params.ndoppler * sizeof(float)),
                mask_threshold_signature(backend, params.channels * params.ndoppler)),
      gpu_stream_owner(backend, block_name),
      d_params(params),
      d_backend(backend),
      d_kernel(kernels::cfar_2d::make(backend, params, stream()))
{
    // Whole CPIs only; GNU Radio sizes the buffers for at least two of them.
    set_output_multiple(static_cast<int>(params.nrange));
    // The cpi tag is re-emitted by hand and other tags are moved with their CPI (a
    // dropped partial CPI would shift GNU Radio's 1:1 propagation).
    set_tag_propagation_policy(TPP_DONT);
    message_port_register_out(detections_port());
}

void cfar_2d_impl::forecast(int noutput_items, gr_vector_int& ninput_items_required)
{
    ninput_items_required[0] = noutput_items;
}

bool cfar_2d_impl::shape_matches(const pmt::pmt_t& dict)
{
    const std::uint64_t nr = cpi_field(dict, "nrange", d_params.nrange);
    // After the Doppler filter the item holds ndoppler bins; before, npulses.
    const std::uint64_t nd = cpi_field(
        dict, "ndoppler", cpi_field(dict, "npulses", d_params.ndoppler));
    const std::uint64_t ch = cpi_field(dict, "channels", d_params.channels);
    if (nr == d_params.nrange && nd == d_params.ndoppler && ch == d_params.channels)
        return true;
    d_logger->error("cpi tag shape nrange={}, ndoppler={}, channels={} differs from the "
                    "block's nrange={}, ndoppler={}, channels={}: CPI discarded",
                    nr,
                    nd,
                    ch,
                    d_params.nrange,
                    d_params.ndoppler,
                    d_params.channels);
    return false;
}

void cfar_2d_impl::publish(const pmt::pmt_t& dict, std::uint64_t index)
{
    const kernels::cfar_report report = d_kernel->collect();
    const std::uint64_t nonfinite =
        std::accumulate(report.nonfinite.begin(), report.nonfinite.end(), std::uint64_t(0));
    d_logger->debug("cpi {}: {} detections, {} NaN/Inf cells", index, report.found, nonfinite);
    if (nonfinite) {
        d_nonfinite += nonfinite;
        d_logger->warn("cpi {}: {} NaN/Inf cells (never detections)", index, nonfinite);
    }
    if (report.overflow()) {
        ++d_overflowed;
        d_logger->warn("cpi {}: {} detections, only max_detections={} reported",
                       index,
                       report.found,
                       d_params.max_detections);
    }
    const cpi_axes axes = read_cpi_axes(dict, index, true);
    std::vector<pmt::pmt_t> dets;
    dets.reserve(report.detections.size());
    for (const auto& d : report.detections)
        dets.push_back(detection_dict(d, axes, d.map % d_params.channels, -1));
    message_port_pub(detections_port(),
                     detections_pdu(detections_meta(dict,
                                                    index,
                                                    d_params.channels,
                                                    report,
                                                    nonfinite,
                                                    d_kernel->alpha(),
                                                    d_params.variant),
                                    dets));
}

int cfar_2d_impl::general_work(int noutput_items,
                               gr_vector_int& ninput_items,
                               gr_vector_const_void_star& input_items,
                               gr_vector_void_star& output_items)
{
    const auto* in = static_cast<const float*>(input_items[0]);
    auto* mask = static_cast<std::uint8_t*>(output_items[0]);
    // The threshold only when its port is connected.
    auto* thr = output_items.size() > 1 ? static_cast<float*>(output_items[1]) : nullptr;
    const std::size_t cells = d_params.channels * d_params.ndoppler; // per item
    const int nrange = static_cast<int>(d_params.nrange);
    const std::uint64_t read0 = nitems_read(0);
    const std::uint64_t written0 = nitems_written(0);

    int consumed = 0, produced = 0;
    while (consumed + nrange <= ninput_items[0] && produced + nrange <= noutput_items) {
        const std::uint64_t start = read0 + consumed;
        std::vector<gr::tag_t> tags;
        get_tags_in_range(tags, 0, start, start + nrange);
        const cpi_group_tags g = split_group_tags(tags, start);
        if (g.cut) {
            // A new CPI starts inside this one: items were lost upstream. Drop the
            // partial CPI and realign on the tag.
            consumed += static_cast<int>(g.cut);
            ++d_dropped;
            d_logger->warn("discarded {} items of a CPI cut short by a cpi tag ({} CPIs "
                           "dropped so far)",
                           g.cut,
                           d_dropped.load());
            continue;
        }
        if (g.cpi && !shape_matches(g.cpi)) {
            consumed += nrange;
            ++d_dropped;
            continue;
        }
        pmt::pmt_t dict = g.cpi;
        if (dict) {
            d_next_index = cpi_field(dict, "index", d_next_index);
        } else {
            dict = pmt::make_dict();
            dict = pmt::dict_add(dict, pmt::intern("index"), pmt::from_uint64(d_next_index));
            dict = pmt::dict_add(dict, pmt::intern("nrange"), pmt::from_uint64(d_params.nrange));
            dict = pmt::dict_add(
                dict, pmt::intern("ndoppler"), pmt::from_uint64(d_params.ndoppler));
        }
        const std::size_t in_off = std::size_t(consumed) * cells;
        const std::size_t out_off = std::size_t(produced) * cells;
        d_kernel->run(in + in_off, mask + out_off, thr ? thr + out_off : nullptr, 1);
        publish(dict, d_next_index); // waits for this CPI on the CUDA backend

        const std::uint64_t out_start = written0 + produced;
        for (unsigned port = 0; port < output_items.size(); ++port) {
            add_item_tag(port, out_start, cpi_tag_key(), dict);
            for (const auto& t : g.other)
                add_item_tag(port, out_start + (t.offset - start), t.key, t.value, t.srcid);
        }
        ++d_next_index;
        consumed += nrange;
        produced += nrange;
    }
    finish_work();
    consume_each(consumed);
    return produced;
}

} // namespace gpuradar
} // namespace gr
