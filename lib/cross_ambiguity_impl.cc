/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "backend_select.h"
#include "cpi_tag.h"
#include "cross_ambiguity_impl.h"
#include <gnuradio/io_signature.h>
#include <cmath>
#include <stdexcept>

namespace gr {
namespace gpuradar {

namespace {

kernels::caf_method parse_method(const std::string& name)
{
    if (name == "auto")
        return kernels::caf_method::automatic;
    if (name == "direct")
        return kernels::caf_method::direct;
    if (name == "batched")
        return kernels::caf_method::batched;
    throw std::invalid_argument("gpuradar::cross_ambiguity: method must be \"auto\", "
                                "\"direct\" or \"batched\" (got \"" +
                                name + "\")");
}

void check_rate(const char* param, double value)
{
    if (!(value > 0.0) || !std::isfinite(value))
        throw std::invalid_argument(std::string("gpuradar::cross_ambiguity: ") + param +
                                    " must be > 0 and finite Hz (got " +
                                    std::to_string(value) + ")");
}

//! Both channels, on the device on the CUDA backend (device buffers).
gr::io_signature::sptr channel_signature(kernels::backend b)
{
    if (b == kernels::backend::cuda)
        return gr::io_signature::make(2, 2, sizeof(gr_complex), device_buffer::type);
    return gr::io_signature::make(2, 2, sizeof(gr_complex));
}

} // namespace

cross_ambiguity::sptr cross_ambiguity::make(double fs,
                                            double fc,
                                            unsigned int nsamples,
                                            unsigned int nrange,
                                            unsigned int doppler_half,
                                            const std::string& method,
                                            unsigned int batch_length,
                                            const std::string& window,
                                            bool db,
                                            const std::string& backend,
                                            int device)
{
    // Validate every parameter before anything is allocated.
    check_rate("fs", fs);
    check_rate("fc", fc);
    kernels::cross_ambiguity_params p;
    p.nsamples = nsamples;
    p.nrange = nrange;
    p.doppler_half = doppler_half;
    p.batch_length = batch_length;
    p.method = parse_method(method);
    p.window = kernels::window_spec::make(window, 4, 35.0, 6.0, "cross_ambiguity");
    p.db = db;
    kernels::cross_ambiguity::validate(p);
    check_item_size("cross_ambiguity",
                    { { "2 doppler_half + 1", 2 * std::size_t(doppler_half) + 1 } },
                    sizeof(float));
    const auto b = select_backend(backend, "cross_ambiguity");
    return make_block_on_device<cross_ambiguity_impl>(
        b, device, "cross_ambiguity", fs, fc, p, b, device);
}

cross_ambiguity_impl::cross_ambiguity_impl(double fs,
                                           double fc,
                                           const kernels::cross_ambiguity_params& p,
                                           kernels::backend backend,
                                           int device)
    : gr::block("cross_ambiguity",
                channel_signature(backend),
                stream_signature(backend, (2 * p.doppler_half + 1) * sizeof(float))),
      gpu_stream_owner(
          backend, "cross_ambiguity", kernels::stream_priority::normal, device),
      d_fs(fs),
      d_fc(fc),
      d_params(p),
      d_backend(backend),
      d_kernel(kernels::cross_ambiguity::make(backend, p, stream()))
{
    set_output_multiple(int(p.nrange)); // whole maps
    set_relative_rate(std::uint64_t(p.nrange), std::uint64_t(p.nsamples));
    set_tag_propagation_policy(TPP_DONT);
}

std::string cross_ambiguity_impl::method() const
{
    return d_kernel->method() == kernels::caf_method::direct ? "direct" : "batched";
}

std::uint64_t cross_ambiguity_impl::rate_mismatch_cpis() const
{
    return d_rate_mismatch_cpis.load();
}

bool cross_ambiguity_impl::rates_agree(std::uint64_t item)
{
    const std::uint64_t end = item + d_params.nsamples;
    std::vector<gr::tag_t> tags;
    for (unsigned int k = 0; k < 2; ++k) {
        get_tags_in_range(tags, k, item, end, rx_rate_check::key());
        if (d_rates.see(k, tags))
            d_logger->warn("input {}: rx_rate tag that is not a positive number ignored",
                           k);
    }
    if (!d_fs_warned && d_rates.rate(0) > 0.0 &&
        !rx_rate_check::agree(d_rates.rate(0), d_fs)) {
        d_fs_warned = true;
        d_logger->warn("the reference's rx_rate is {:.9g} Sa/s but fs is {:.9g}: the "
                       "map's range and Doppler axes are computed from fs",
                       d_rates.rate(0),
                       d_fs);
    }
    const std::string why = d_rates.disagreement();
    if (why.empty())
        return true;
    const std::uint64_t dropped = ++d_rate_mismatch_cpis;
    if (d_rate_log.count())
        d_logger->error("sample rates disagree: {}: no map for the CPI at sample {} "
                        "until the rates agree ({} CPI(s) so far{})",
                        why,
                        item,
                        dropped,
                        d_rate_log.quiet_note());
    return false;
}

void cross_ambiguity_impl::forecast(int noutput_items,
                                    gr_vector_int& ninput_items_required)
{
    const int cpis = noutput_items / int(d_params.nrange);
    for (auto& n : ninput_items_required)
        n = cpis * int(d_params.nsamples);
}

pmt::pmt_t cross_ambiguity_impl::cpi_dict() const
{
    const std::uint64_t nd = 2 * d_params.doppler_half + 1;
    pmt::pmt_t d = with_doppler_axis(
        make_cpi_dict(d_cpis, d_params.nsamples, d_params.nrange), nd, true);
    d = pmt::dict_add(d, pmt::intern("fs"), pmt::from_double(d_fs));
    d = pmt::dict_add(d, pmt::intern("fc"), pmt::from_double(d_fc));
    // a Doppler bin is fs / N Hz: the axes' prf / ndoppler
    d = pmt::dict_add(d,
                      pmt::intern("prf"),
                      pmt::from_double(d_fs * double(nd) / double(d_params.nsamples)));
    return pmt::dict_add(d, pmt::intern("bistatic"), pmt::PMT_T);
}

int cross_ambiguity_impl::general_work(int noutput_items,
                                       gr_vector_int& ninput_items,
                                       gr_vector_const_void_star& input_items,
                                       gr_vector_void_star& output_items)
{
    begin_work(); // before any kernel touches the buffers
    const auto* ref = static_cast<const gr_complex*>(input_items[0]);
    const auto* surv = static_cast<const gr_complex*>(input_items[1]);
    auto* out = static_cast<float*>(output_items[0]);
    const std::size_t n = d_params.nsamples, m = d_params.nrange;
    const std::size_t nd = 2 * d_params.doppler_half + 1;
    const int cpis = std::min(
        { noutput_items / int(m), ninput_items[0] / int(n), ninput_items[1] / int(n) });
    int maps = 0; // a CPI whose inputs' rates disagree gives none
    for (int c = 0; c < cpis; ++c) {
        if (!rates_agree(nitems_read(0) + std::uint64_t(c) * n))
            continue;
        d_kernel->run(ref + std::size_t(c) * n,
                      surv + std::size_t(c) * n,
                      out + std::size_t(maps) * m * nd);
        add_item_tag(
            0, nitems_written(0) + std::uint64_t(maps) * m, cpi_tag_key(), cpi_dict());
        ++d_cpis;
        ++maps;
    }
    finish_work(maps * int(m));
    consume_each(cpis * int(n));
    return maps * int(m);
}

} // namespace gpuradar
} // namespace gr
