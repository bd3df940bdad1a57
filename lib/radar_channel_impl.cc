/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "front_end_args.h"
#include "radar_channel_impl.h"
#include <gnuradio/io_signature.h>
#include <algorithm>
#include <cmath>

namespace gr {
namespace gpuradar {

radar_channel::sptr radar_channel::make(double samp_rate,
                                        double fc,
                                        const std::vector<double>& ranges,
                                        const std::vector<double>& velocities,
                                        const std::vector<double>& amplitudes,
                                        const std::string& amplitude_unit,
                                        double radar_constant_db,
                                        double tx_power,
                                        double noise_power,
                                        double leakage_amplitude,
                                        unsigned int system_delay,
                                        std::uint64_t seed,
                                        const std::vector<double>& azimuths_deg,
                                        unsigned int nchannels,
                                        double element_spacing_wl,
                                        const std::vector<double>& element_positions_m,
                                        const std::vector<double>& channel_gain_db,
                                        const std::vector<double>& channel_phase_deg,
                                        const std::vector<double>& elevations_deg,
                                        double dc_offset_i,
                                        double dc_offset_q,
                                        double iq_gain_db,
                                        double iq_phase_deg,
                                        double phase_noise_linewidth_hz,
                                        unsigned int adc_bits,
                                        double adc_full_scale,
                                        double clock_offset_ppm)
{
    kernels::channel_config c;
    c.fs = samp_rate;
    c.fc = fc;
    c.targets = kernels::radar_scene::make_targets(ranges,
                                                   velocities,
                                                   amplitudes,
                                                   amplitude_unit,
                                                   radar_constant_db,
                                                   kernels::radar_channel::stage);
    c.tx_power = tx_power;
    c.noise_power = noise_power;
    c.leakage_amplitude = leakage_amplitude;
    c.system_delay = system_delay;
    c.seed = seed;
    const char* who = kernels::radar_channel::stage;
    kernels::radar_scene::set_directions(c.targets, azimuths_deg, elevations_deg, who);
    c.array = kernels::array_config::make(nchannels,
                                          element_spacing_wl,
                                          element_positions_m,
                                          fc,
                                          channel_gain_db,
                                          channel_phase_deg,
                                          who);
    c.front_end = front_end_from_args(dc_offset_i,
                                      dc_offset_q,
                                      iq_gain_db,
                                      iq_phase_deg,
                                      phase_noise_linewidth_hz,
                                      adc_bits,
                                      adc_full_scale);
    c.clock_offset_ppm = clock_offset_ppm;
    kernels::radar_channel channel(std::move(c)); // validates before the block exists
    return gnuradio::make_block_sptr<radar_channel_impl>(std::move(channel));
}

radar_channel_impl::radar_channel_impl(kernels::radar_channel channel)
    : gr::sync_block("radar_channel",
                     gr::io_signature::make(1, 1, sizeof(gr_complex)),
                     gr::io_signature::make(static_cast<int>(channel.nchannels()),
                                            static_cast<int>(channel.nchannels()),
                                            sizeof(gr_complex))),
      d_channel(std::move(channel))
{
    // tx_time becomes rx_time below; the burst tags belong to the transmitter.
    set_tag_propagation_policy(TPP_DONT);
}

std::vector<double> radar_channel_impl::echo_amplitudes() const
{
    std::vector<double> a;
    for (std::size_t i = 0; i < d_channel.config().targets.size(); ++i)
        a.push_back(d_channel.amplitude(i));
    return a;
}

pmt::pmt_t radar_channel_impl::rx_time_of(std::uint64_t offset,
                                          const pmt::pmt_t& tx_time) const
{
    const double ppm = d_channel.config().clock_offset_ppm;
    const bool tuple2 = pmt::is_tuple(tx_time) && pmt::length(tx_time) == 2;
    if (ppm == 0.0 || !tuple2 || !pmt::is_uint64(pmt::tuple_ref(tx_time, 0)) ||
        !pmt::is_real(pmt::tuple_ref(tx_time, 1)))
        return tx_time; // same clock (or a value this block does not interpret)
    // Receive sample n is taken n / fs_rx after the stream start, input sample n at
    // n / fs: the receive sample carrying the tag is earlier by n (1/fs - 1/fs_rx).
    const double fs = d_channel.config().fs;
    const double early =
        static_cast<double>(offset) * (1.0 / fs - 1.0 / (fs * (1.0 + ppm * 1e-6)));
    std::uint64_t secs = pmt::to_uint64(pmt::tuple_ref(tx_time, 0));
    double frac = pmt::to_double(pmt::tuple_ref(tx_time, 1)) - early;
    const double borrow = std::ceil(-frac);
    if (borrow > 0.0) {
        secs -= std::min<std::uint64_t>(secs, static_cast<std::uint64_t>(borrow));
        frac += borrow;
    }
    return pmt::make_tuple(pmt::from_uint64(secs), pmt::from_double(frac));
}

int radar_channel_impl::work(int noutput_items,
                             gr_vector_const_void_star& input_items,
                             gr_vector_void_star& output_items)
{
    static const pmt::pmt_t tx_time = pmt::intern("tx_time");
    static const pmt::pmt_t rx_time = pmt::intern("rx_time");
    const auto n = static_cast<std::size_t>(noutput_items);
    d_channel.process(static_cast<const gr_complex*>(input_items[0]),
                      reinterpret_cast<gr_complex* const*>(output_items.data()),
                      n);
    d_clipped.store(d_channel.clipped(), std::memory_order_relaxed);
    std::vector<gr::tag_t> tags;
    get_tags_in_window(tags, 0, 0, n, tx_time);
    for (const auto& t : tags) {
        const pmt::pmt_t v = rx_time_of(t.offset, t.value);
        for (unsigned c = 0; c < output_items.size(); ++c)
            add_item_tag(c, t.offset, rx_time, v);
    }
    return noutput_items;
}

} // namespace gpuradar
} // namespace gr
