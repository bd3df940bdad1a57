/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "radar_channel_impl.h"
#include <gnuradio/io_signature.h>

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
                                        std::uint64_t seed)
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
    kernels::radar_channel channel(std::move(c)); // validates before the block exists
    return gnuradio::make_block_sptr<radar_channel_impl>(std::move(channel));
}

radar_channel_impl::radar_channel_impl(kernels::radar_channel channel)
    : gr::sync_block("radar_channel",
                     gr::io_signature::make(1, 1, sizeof(gr_complex)),
                     gr::io_signature::make(1, 1, sizeof(gr_complex))),
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

int radar_channel_impl::work(int noutput_items,
                             gr_vector_const_void_star& input_items,
                             gr_vector_void_star& output_items)
{
    static const pmt::pmt_t tx_time = pmt::intern("tx_time");
    static const pmt::pmt_t rx_time = pmt::intern("rx_time");
    const auto n = static_cast<std::size_t>(noutput_items);
    d_channel.process(static_cast<const gr_complex*>(input_items[0]),
                      static_cast<gr_complex*>(output_items[0]),
                      n);
    std::vector<gr::tag_t> tags;
    get_tags_in_window(tags, 0, 0, n, tx_time);
    for (const auto& t : tags)
        add_item_tag(0, t.offset, rx_time, t.value);
    return noutput_items;
}

} // namespace gpuradar
} // namespace gr
