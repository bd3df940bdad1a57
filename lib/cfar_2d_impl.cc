/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
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
    check_positive(block_name, "ndoppler", ndoppler);
    auto p = cfar_common_params<kernels::cfar_2d_params>(
        block_name, nrange, channels, max_detections, pfa, variant, os_k, local_max_only);
    p.ndoppler = ndoppler;
    p.guard_range = guard_range;
    p.train_range = train_range;
    p.guard_doppler = guard_doppler;
    p.train_doppler = train_doppler;
    p.range_edge = kernels::parse_cfar_edge(range_edge, "range_edge");
    p.doppler_edge = kernels::parse_cfar_edge(doppler_edge, "doppler_edge");
    p.max_cpi = 1; // one CPI per run: one detection list (and PDU) per CPI
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
    const cfar_layout layout{ nrange,
                              ndoppler,
                              channels,
                              nrange, // one CPI per group
                              max_detections,
                              p.variant };
    return gnuradio::make_block_sptr<cfar_2d_impl>(block_name, layout, p, b);
}

} // namespace gpuradar
} // namespace gr
