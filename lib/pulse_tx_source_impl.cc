/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "pulse_tx_source_impl.h"
#include "uhd_time.h"
#include "waveform_message.h"
#include <gnuradio/io_signature.h>
#include <chrono>
#include <cmath>
#include <stdexcept>

namespace gr {
namespace gpuradar {

namespace {
constexpr const char* block_name = "pulse_tx_source";

[[noreturn]] void invalid(const std::string& what)
{
    throw std::invalid_argument(std::string("gpuradar::") + block_name + ": " + what);
}

double unix_time_now()
{
    return std::chrono::duration<double>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

//! Validates start_time for its time reference; true when bursts carry tx_time.
bool check_start_time(double start_time, const std::string& time_reference)
{
    if (time_reference != "device" && time_reference != "host")
        invalid("time_reference must be device or host (got '" + time_reference + "')");
    if (!(start_time >= 0.0) || !std::isfinite(start_time))
        invalid("start_time must be >= 0 and finite (s; 0: no tx_time) (got " +
                std::to_string(start_time) + ")");
    if (start_time > 0.0 && time_reference == "host") {
        const double now = unix_time_now();
        if (start_time <= now)
            invalid("start_time must lie in the future with time_reference host: it is a "
                    "UNIX time and the host clock reads " +
                    std::to_string(now) + " s (got " + std::to_string(start_time) +
                    " s, a tx_time in the past)");
    }
    return start_time > 0.0;
}

} // namespace

pulse_tx_source::sptr
pulse_tx_source::make(const std::string& waveform,
                      const std::vector<gr_complex>& custom_waveform,
                      double bandwidth,
                      double pulse_width,
                      double samp_rate,
                      bool up_chirp,
                      double prf,
                      double amplitude,
                      const std::string& burst_mode,
                      unsigned int npulses,
                      std::uint64_t nbursts,
                      double start_time,
                      const std::string& time_reference)
{
    if (!(samp_rate > 0.0) || !std::isfinite(samp_rate))
        invalid("samp_rate must be > 0 and finite (Hz) (got " +
                std::to_string(samp_rate) + ")");
    if (!(prf > 0.0) || !std::isfinite(prf))
        invalid("prf must be > 0 and finite (Hz) (got " + std::to_string(prf) + ")");
    if (!(amplitude > 0.0 && amplitude <= 1.0))
        invalid("amplitude must be in (0, 1] (UHD's full scale is 1) (got " +
                std::to_string(amplitude) + ")");
    kernels::pulse_tx_config c;
    c.pulse = waveform_parameter(block_name,
                                 waveform,
                                 custom_waveform,
                                 bandwidth,
                                 pulse_width,
                                 samp_rate,
                                 up_chirp);
    if (c.pulse.empty())
        invalid("custom_waveform must have at least one sample");
    c.pri_samples = samp_rate / prf;
    if (static_cast<double>(c.pulse.size()) > c.pri_samples)
        invalid("pulse_width: the pulse (" + std::to_string(c.pulse.size()) +
                " samples, " + std::to_string(c.pulse.size() / samp_rate) +
                " s) is longer than the PRI (samp_rate / prf = " +
                std::to_string(c.pri_samples) + " samples); lower pulse_width or prf");
    for (auto& s : c.pulse)
        s *= static_cast<float>(amplitude);
    c.mode = kernels::parse_burst_mode(burst_mode, block_name);
    c.npulses = npulses;
    c.nbursts = nbursts;
    kernels::pulse_tx train(std::move(c), block_name); // validates npulses
    const bool timed = check_start_time(start_time, time_reference);
    if (!timed && train.config().mode == kernels::burst_mode::pulse)
        invalid(
            "burst_mode pulse needs start_time > 0: only tx_time spaces the pulse "
            "bursts at the PRI (untimed, they would leave back to back); use burst_mode "
            "cpi for an untimed stream");
    return gnuradio::make_block_sptr<pulse_tx_source_impl>(
        std::move(train), samp_rate, timed, start_time);
}

pulse_tx_source_impl::pulse_tx_source_impl(kernels::pulse_tx train,
                                           double samp_rate,
                                           bool timed,
                                           double start_time)
    : gr::sync_block("pulse_tx_source",
                     gr::io_signature::make(0, 0, 0),
                     gr::io_signature::make(1, 1, sizeof(gr_complex))),
      d_train(std::move(train)),
      d_samp_rate(samp_rate),
      d_timed(timed),
      d_start(time_spec_from_seconds(start_time))
{
}

void pulse_tx_source_impl::tag_bursts(std::uint64_t w0, std::uint64_t n)
{
    static const pmt::pmt_t sob = pmt::intern("tx_sob");
    static const pmt::pmt_t eob = pmt::intern("tx_eob");
    static const pmt::pmt_t tx_time = pmt::intern("tx_time");
    const std::uint64_t limit = d_train.config().nbursts;
    for (std::uint64_t b = d_train.burst_containing(w0); limit == 0 || b < limit; ++b) {
        const kernels::burst br = d_train.burst_at(b);
        if (br.offset >= w0 + n)
            break;
        if (br.offset >= w0) {
            add_item_tag(0, br.offset, sob, pmt::PMT_T);
            if (d_timed)
                add_item_tag(
                    0,
                    br.offset,
                    tx_time,
                    uhd_time_pmt(kernels::add_samples(
                        d_start, static_cast<std::int64_t>(br.timeline), d_samp_rate)));
            d_bursts = b + 1;
        }
        const std::uint64_t last = br.offset + br.length - 1;
        if (last >= w0 && last < w0 + n)
            add_item_tag(0, last, eob, pmt::PMT_T);
    }
}

int pulse_tx_source_impl::work(int noutput_items,
                               gr_vector_const_void_star&,
                               gr_vector_void_star& output_items)
{
    auto* out = static_cast<gr_complex*>(output_items[0]);
    const std::uint64_t w0 = nitems_written(0);
    const std::size_t n = d_train.generate(out, static_cast<std::size_t>(noutput_items));
    if (n == 0)
        return WORK_DONE;
    tag_bursts(w0, n);
    return static_cast<int>(n);
}

} // namespace gpuradar
} // namespace gr
