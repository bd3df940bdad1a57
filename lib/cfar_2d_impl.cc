/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "backend_select.h"
#include "cfar_block.h"
#include <limits>

namespace gr {
namespace gpuradar {

namespace {
constexpr const char* block_name = "cfar_2d";
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
                cfar_output_signature(backend, params.channels * params.ndoppler)),
      cfar_block(cfar_layout{ params.nrange,
                             params.ndoppler,
                             params.channels,
                             params.nrange, // one CPI per group
                             params.max_detections,
                             params.variant },
                 params,
                 backend,
                 block_name)
{
}

} // namespace gpuradar
} // namespace gr
