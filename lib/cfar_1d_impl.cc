/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "cfar_block.h"

namespace gr {
namespace gpuradar {

namespace {
constexpr const char* block_name = "cfar_1d";
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
    check_positive(block_name, "items_per_cpi", items_per_cpi);
    auto p = cfar_common_params<kernels::cfar_1d_params>(
        block_name, nrange, channels, max_detections, pfa, variant, os_k, local_max_only);
    p.guard = guard;
    p.train = train;
    p.edge = kernels::parse_cfar_edge(edge, "edge");
    p.max_items = items_per_cpi; // one run and one detection list per group
    if (p.variant == kernels::cfar_variant::os && os_k == 0 && train >= 1)
        p.os_k = kernels::cfar_default_os_k(2 * train); // 0: the usual rank
    const auto b = select_backend(backend, block_name);
    const cfar_layout layout{ nrange,
                              0, // range lines: cfar_1d
                              channels,
                              items_per_cpi,
                              max_detections,
                              p.variant };
    return gnuradio::make_block_sptr<cfar_1d_impl>(block_name, layout, p, b);
}

} // namespace gpuradar
} // namespace gr
