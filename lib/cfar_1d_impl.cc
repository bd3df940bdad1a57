/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "backend_select.h"
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
                cfar_output_signature(backend, params.channels * params.nrange)),
      cfar_block(cfar_layout{ params.nrange,
                             0, // range lines: cfar_1d
                             params.channels,
                             params.max_items,
                             params.max_detections,
                             params.variant },
                 params,
                 backend,
                 block_name)
{
}

} // namespace gpuradar
} // namespace gr
