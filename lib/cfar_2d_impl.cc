/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "cfar_block.h"
#include <limits>
#include <memory>
#include <stdexcept>

namespace gr {
namespace gpuradar {

namespace {
constexpr const char* block_name = "cfar_2d";

//! os_k = 0 asks for the usual rank of the full window's N training cells.
void resolve_os_k(kernels::cfar_2d_params& p, int requested)
{
    p.os_k = requested;
    if (p.variant != kernels::cfar_variant::os || requested != 0 || p.guard_range < 0 ||
        p.train_range < 0 || p.guard_doppler < 0 || p.train_doppler < 0)
        return;
    const long wr = long(p.guard_range) + p.train_range;
    const long wd = long(p.guard_doppler) + p.train_doppler;
    const long n = (2 * wr + 1) * (2 * wd + 1) -
                   (2L * p.guard_range + 1) * (2L * p.guard_doppler + 1);
    if (n >= 1 && n <= std::numeric_limits<int>::max())
        p.os_k = kernels::cfar_default_os_k(static_cast<int>(n));
}

using config = cfar_config<kernels::cfar_2d_params>;

class cfar_2d_impl : public cfar_block<cfar_2d, kernels::cfar_2d, kernels::cfar_2d_params>
{
public:
    cfar_2d_impl(const cfar_layout& layout,
                 const config& c,
                 kernels::backend backend,
                 bool angles,
                 int device)
        : gr::block(block_name,
                    stream_signature(backend, layout.cells_per_item() * sizeof(float)),
                    cfar_output_signature(backend, layout.cells_per_item())),
          cfar_block(block_name, layout, c, resolve_os_k, backend, device),
          d_angles(angles ? std::make_unique<beam_angles>(layout.channels) : nullptr)
    {
    }

    void set_guard_range(int guard_range) override
    {
        reconfigure([&](config& c) { c.params.guard_range = guard_range; });
    }
    void set_train_range(int train_range) override
    {
        reconfigure([&](config& c) { c.params.train_range = train_range; });
    }
    void set_guard_doppler(int guard_doppler) override
    {
        reconfigure([&](config& c) { c.params.guard_doppler = guard_doppler; });
    }
    void set_train_doppler(int train_doppler) override
    {
        reconfigure([&](config& c) { c.params.train_doppler = train_doppler; });
    }

protected:
    const kernels::grid_monopulse* beam_monopulse(const pmt::pmt_t& cpi_dict) override
    {
        return d_angles ? d_angles->for_cpi(cpi_dict, d_logger) : nullptr;
    }

private:
    //! angles: the monopulse of the beams in the cpi tags; null without angles.
    const std::unique_ptr<beam_angles> d_angles;
};
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
                            const std::string& backend,
                            bool cluster,
                            bool angles,
                            int device)
{
    check_positive(block_name, "ndoppler", ndoppler);
    if (angles && channels < 2)
        throw std::invalid_argument(
            "gpuradar::cfar_2d: angles needs channels >= 2 (the beams of a beam-major "
            "map; got channels = " +
            std::to_string(channels) + ")");
    config c;
    c.params = cfar_common_params<kernels::cfar_2d_params>(
        block_name, nrange, channels, max_detections, pfa, variant, os_k, local_max_only);
    c.os_k_requested = os_k;
    auto& p = c.params;
    p.ndoppler = ndoppler;
    p.guard_range = guard_range;
    p.train_range = train_range;
    p.guard_doppler = guard_doppler;
    p.train_doppler = train_doppler;
    p.range_edge = kernels::parse_cfar_edge(range_edge, "range_edge");
    p.doppler_edge = kernels::parse_cfar_edge(doppler_edge, "doppler_edge");
    p.max_cpi = 1; // one CPI per run: one detection list (and PDU) per CPI
    p.cluster = cluster;
    resolve_os_k(p, os_k);
    // Before the io_signatures are made: the sizes in this block's parameters, the
    // kernel's checks (std::invalid_argument naming the parameter), the items.
    kernels::check_buffer_size(
        block_name,
        { { "nrange", nrange }, { "ndoppler", ndoppler }, { "channels", channels } },
        sizeof(float),
        "the power and threshold maps of one CPI");
    kernels::cfar_2d::validate(p);
    check_item_size(block_name,
                    { { "channels", channels }, { "ndoppler", ndoppler } },
                    sizeof(float));
    const auto b = select_backend(backend, block_name);
    cfar_layout layout;
    layout.nrange = nrange;
    layout.ndoppler = ndoppler;
    layout.channels = channels;
    layout.group = nrange; // one CPI per group
    layout.max_detections = max_detections;
    layout.variant = p.variant;
    layout.cluster = cluster;
    layout.doppler_wrap = p.doppler_edge == kernels::cfar_edge::wrap;
    return make_block_on_device<cfar_2d_impl>(
        b, device, block_name, layout, c, b, angles, device);
}

} // namespace gpuradar
} // namespace gr
