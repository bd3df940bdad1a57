/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "backend_select.h"
#include "clutter_cancel_impl.h"
#include <gnuradio/io_signature.h>
#include <fmt/format.h>
#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace gr {
namespace gpuradar {

namespace {

constexpr std::size_t max_nsurv = kernels::clutter_cancel::max_nsurv;

const pmt::pmt_t cancellation_port = pmt::mp("cancellation");
const pmt::pmt_t cancellation_tag = pmt::mp("cancellation_db");

kernels::cancel_method parse_method(const std::string& name)
{
    if (name == "eca_b")
        return kernels::cancel_method::eca_b;
    if (name == "nlms")
        return kernels::cancel_method::nlms;
    throw std::invalid_argument(
        "gpuradar::clutter_cancel: method must be \"eca_b\" or \"nlms\" (got \"" + name +
        "\")");
}

//! "reference (input 0)", "surveillance 1 (input 1)", ...: the rate check's names.
std::vector<std::string> input_names(unsigned int nsurv)
{
    std::vector<std::string> names{ "reference (input 0)" };
    for (unsigned int k = 1; k <= nsurv; ++k)
        names.push_back(fmt::format("surveillance {} (input {})", k, k));
    return names;
}

//! The reference and nsurv channels, on the device on the CUDA backend.
gr::io_signature::sptr channels(kernels::backend b, unsigned int nsurv)
{
    const int n = int(nsurv) + 1;
    if (b == kernels::backend::cuda)
        return gr::io_signature::make(n, n, sizeof(gr_complex), device_buffer::type);
    return gr::io_signature::make(n, n, sizeof(gr_complex));
}

} // namespace

clutter_cancel::sptr clutter_cancel::make(unsigned int nsamples,
                                          unsigned int ntaps,
                                          unsigned int nbatches,
                                          const std::string& method,
                                          unsigned int nsurv,
                                          bool doppler_taps,
                                          double diagonal_loading,
                                          double nlms_step,
                                          unsigned int nlms_block,
                                          const std::string& backend,
                                          int device)
{
    // Validate every parameter before anything is allocated.
    if (nsurv < 1 || nsurv > max_nsurv)
        throw std::invalid_argument("gpuradar::clutter_cancel: nsurv must be in [1, " +
                                    std::to_string(max_nsurv) +
                                    "] surveillance channels (got " +
                                    std::to_string(nsurv) + ")");
    kernels::clutter_cancel_params p;
    p.nsamples = nsamples;
    p.ntaps = ntaps;
    p.nbatches = nbatches;
    p.method = parse_method(method);
    p.doppler_taps = doppler_taps;
    p.diagonal_loading = diagonal_loading;
    p.nlms_step = nlms_step;
    p.nlms_block = nlms_block;
    p.nsurv = nsurv;
    kernels::clutter_cancel::validate(p);
    const auto b = select_backend(backend, "clutter_cancel");
    return make_block_on_device<clutter_cancel_impl>(
        b, device, "clutter_cancel", p, nsurv, b, device);
}

clutter_cancel_impl::clutter_cancel_impl(const kernels::clutter_cancel_params& p,
                                         unsigned int nsurv,
                                         kernels::backend backend,
                                         int device)
    : gr::sync_block(
          "clutter_cancel", channels(backend, nsurv), channels(backend, nsurv)),
      gpu_stream_owner(
          backend, "clutter_cancel", kernels::stream_priority::normal, device),
      d_params(p),
      d_nsurv(nsurv),
      d_backend(backend),
      d_kernel(kernels::clutter_cancel::make(backend, p, stream())),
      d_results(nsurv),
      d_surveillance(nsurv),
      d_out(nsurv),
      d_rates(input_names(nsurv))
{
    set_output_multiple(int(p.nsamples)); // whole CPIs
    set_tag_propagation_policy(TPP_ONE_TO_ONE);
    message_port_register_out(cancellation_port);
}

std::vector<double> clutter_cancel_impl::cancellation_db() const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    return d_last_db;
}

std::uint64_t clutter_cancel_impl::cpis() const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    return d_cpis;
}

std::uint64_t clutter_cancel_impl::rate_mismatch_cpis() const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    return d_rate_mismatch_cpis;
}

bool clutter_cancel_impl::rates_agree(std::uint64_t item)
{
    const std::uint64_t end = item + d_params.nsamples;
    std::vector<gr::tag_t> tags;
    for (unsigned int k = 0; k <= d_nsurv; ++k) {
        get_tags_in_range(tags, k, item, end, rx_rate_check::key());
        if (d_rates.see(k, tags))
            d_logger->warn("input {}: rx_rate tag that is not a positive number ignored",
                           k);
    }
    const std::string why = d_rates.disagreement();
    if (why.empty())
        return true;
    std::uint64_t dropped;
    {
        std::lock_guard<std::mutex> lock(d_mutex);
        dropped = ++d_rate_mismatch_cpis;
    }
    if (d_rate_log.count())
        d_logger->error("sample rates disagree: {}: the CPI at sample {} is not "
                        "cancelled, its surveillance outputs are zero, until the rates "
                        "agree ({} CPI(s) so far{})",
                        why,
                        item,
                        dropped,
                        d_rate_log.quiet_note());
    return false;
}

void clutter_cancel_impl::zero_surveillance(gr_vector_void_star& output_items,
                                            std::size_t at)
{
    const std::size_t n = d_params.nsamples;
    for (unsigned int k = 1; k <= d_nsurv; ++k) {
        auto* out = static_cast<gr_complex*>(output_items[k]) + at;
        if (d_backend == kernels::backend::cuda) {
            d_zeros.resize(n); // the copies are ordered on the stream: one buffer serves
            kernels::copy_async(out,
                                d_zeros.data(),
                                n * sizeof(gr_complex),
                                kernels::copy_kind::host_to_device,
                                stream(),
                                "clutter_cancel");
        } else {
            std::fill(out, out + n, gr_complex(0.0f, 0.0f));
        }
    }
}

std::string clutter_cancel_impl::method() const
{
    return d_params.method == kernels::cancel_method::nlms ? "nlms" : "eca_b";
}

void clutter_cancel_impl::report(const std::vector<kernels::clutter_cancel_result>& res,
                                 std::uint64_t item)
{
    std::vector<double> db(d_nsurv), before(d_nsurv), after(d_nsurv);
    std::uint64_t loaded = 0, nonfinite = 0;
    for (unsigned int k = 0; k < d_nsurv; ++k) {
        db[k] = res[k].cancellation_db;
        before[k] = res[k].power_before;
        after[k] = res[k].power_after;
        loaded += res[k].loaded_batches;
        nonfinite += res[k].nonfinite_samples;
        add_item_tag(k + 1, item, cancellation_tag, pmt::from_double(db[k]));
    }
    std::uint64_t index;
    {
        std::lock_guard<std::mutex> lock(d_mutex);
        index = d_cpis++;
        d_last_db = db;
    }
    pmt::pmt_t d = pmt::make_dict();
    d = pmt::dict_add(d, pmt::mp("cpi"), pmt::from_uint64(index));
    d = pmt::dict_add(d, pmt::mp("cancellation_db"), pmt::init_f64vector(d_nsurv, db));
    d = pmt::dict_add(d, pmt::mp("power_before"), pmt::init_f64vector(d_nsurv, before));
    d = pmt::dict_add(d, pmt::mp("power_after"), pmt::init_f64vector(d_nsurv, after));
    d = pmt::dict_add(d, pmt::mp("loaded_batches"), pmt::from_uint64(loaded));
    d = pmt::dict_add(d, pmt::mp("nonfinite_samples"), pmt::from_uint64(nonfinite));
    message_port_pub(cancellation_port, d);
    d_debug_logger->debug(
        "CPI {}: cancellation {} dB", index, fmt::format("{:.1f}", fmt::join(db, " / ")));
    if (loaded) {
        d_loaded_total += loaded;
        if (d_loaded_log.count())
            d_logger->warn(
                "CPI {}: {} batch(es) singular (a silent or tonal reference?): "
                "solved with diagonal loading ({} so far{})",
                index,
                loaded,
                d_loaded_total,
                d_loaded_log.quiet_note());
    }
    if (nonfinite) {
        d_nonfinite_total += nonfinite;
        if (d_nonfinite_log.count())
            d_logger->warn("CPI {}: {} NaN/inf input samples used as 0 ({} so far{})",
                           index,
                           nonfinite,
                           d_nonfinite_total,
                           d_nonfinite_log.quiet_note());
    }
}

int clutter_cancel_impl::work(int noutput_items,
                              gr_vector_const_void_star& input_items,
                              gr_vector_void_star& output_items)
{
    begin_work(); // before any kernel touches the buffers
    const std::size_t n = d_params.nsamples;
    const int cpis = noutput_items / int(n);
    const auto* ref = static_cast<const gr_complex*>(input_items[0]);
    for (int c = 0; c < cpis; ++c) {
        const std::size_t at = std::size_t(c) * n;
        if (!rates_agree(nitems_read(0) + at)) {
            zero_surveillance(output_items, at);
            // the next cancelled CPI does not follow this one's samples (ECA-B's
            // reference history, NLMS's weights start again)
            d_kernel->reset();
            continue;
        }
        for (unsigned int k = 0; k < d_nsurv; ++k) {
            d_surveillance[k] = static_cast<const gr_complex*>(input_items[k + 1]) + at;
            d_out[k] = static_cast<gr_complex*>(output_items[k + 1]) + at;
        }
        // every channel in one run: ECA-B forms and factors the reference's systems once
        d_kernel->run_channels(
            ref + at, d_surveillance.data(), d_out.data(), d_results.data());
        report(d_results, nitems_written(0) + at);
    }
    // the reference passes unchanged, on the device when the ports are there
    const std::size_t bytes = std::size_t(cpis) * n * sizeof(gr_complex);
    if (d_backend == kernels::backend::cuda)
        kernels::copy_async(output_items[0],
                            ref,
                            bytes,
                            kernels::copy_kind::device_to_device,
                            stream(),
                            "clutter_cancel");
    else
        std::memcpy(output_items[0], ref, bytes);
    finish_work(cpis * int(n));
    return cpis * int(n);
}

} // namespace gpuradar
} // namespace gr
