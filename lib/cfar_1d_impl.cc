/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "cfar_block.h"

namespace gr {
namespace gpuradar {

namespace {
constexpr const char* block_name = "cfar_1d";

//! os_k = 0 asks for the usual rank of the 2 train training cells.
void resolve_os_k(kernels::cfar_1d_params& p, int requested)
{
    p.os_k = requested;
    if (p.variant == kernels::cfar_variant::os && requested == 0 && p.train >= 1)
        p.os_k = kernels::cfar_default_os_k(2 * p.train);
}

using config = cfar_config<kernels::cfar_1d_params>;

class cfar_1d_impl : public cfar_block<cfar_1d, kernels::cfar_1d, kernels::cfar_1d_params>
{
public:
    cfar_1d_impl(const cfar_layout& layout,
                 const config& c,
                 kernels::backend backend,
                 int device)
        : gr::block(block_name,
                    stream_signature(backend, layout.cells_per_item() * sizeof(float)),
                    cfar_output_signature(backend, layout.cells_per_item())),
          cfar_block(block_name, layout, c, resolve_os_k, backend, device)
    {
    }

    void set_guard(int guard) override
    {
        reconfigure([&](config& c) { c.params.guard = guard; });
    }
    void set_train(int train) override
    {
        reconfigure([&](config& c) { c.params.train = train; });
    }
};
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
                            const std::string& backend,
                            int device)
{
    check_positive(block_name, "items_per_cpi", items_per_cpi);
    config c;
    c.params = cfar_common_params<kernels::cfar_1d_params>(
        block_name, nrange, channels, max_detections, pfa, variant, os_k, local_max_only);
    c.os_k_requested = os_k;
    c.params.guard = guard;
    c.params.train = train;
    c.params.edge = kernels::parse_cfar_edge(edge, "edge");
    c.params.max_items = items_per_cpi; // one run and one detection list per group
    resolve_os_k(c.params, os_k);
    // Before the io_signatures are made: the sizes in this block's parameters, the
    // kernel's checks, the items.
    kernels::check_buffer_size(block_name,
                               { { "items_per_cpi", items_per_cpi },
                                 { "channels", channels },
                                 { "nrange", nrange } },
                               sizeof(float),
                               "the power and threshold maps of one CPI");
    kernels::cfar_1d::validate(c.params);
    check_item_size(
        block_name, { { "channels", channels }, { "nrange", nrange } }, sizeof(float));
    const auto b = select_backend(backend, block_name);
    cfar_layout layout; // ndoppler stays 0: the items are range lines
    layout.nrange = nrange;
    layout.channels = channels;
    layout.group = items_per_cpi; // one run and one PDU per CPI
    layout.max_detections = max_detections;
    layout.variant = c.params.variant;
    return make_block_on_device<cfar_1d_impl>(
        b, device, block_name, layout, c, b, device);
}

} // namespace gpuradar
} // namespace gr
