/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef INCLUDED_GPURADAR_RADAR_SCENE_SOURCE_IMPL_H
#define INCLUDED_GPURADAR_RADAR_SCENE_SOURCE_IMPL_H

#include <gnuradio/gpuradar/radar_scene_source.h>
#include <gpuradar/kernels/pulse_timing.h>
#include <gpuradar/kernels/radar_scene.h>
#include <chrono>

namespace gr {
namespace gpuradar {

namespace kernels = ::gpuradar::kernels;

class radar_scene_source_impl : public radar_scene_source
{
public:
    radar_scene_source_impl(const kernels::scene_config& cfg,
                            bool paced,
                            unsigned int truth_every,
                            double start_time);

    std::vector<gr_complex> waveform() const override { return d_scene.config().waveform; }
    double pri_samples() const override { return d_scene.pri_samples(); }
    std::vector<double> snr_db() const override;

    bool start() override;
    int work(int noutput_items,
             gr_vector_const_void_star& input_items,
             gr_vector_void_star& output_items) override;

private:
    void publish_truth(std::uint64_t from, std::uint64_t to);

    kernels::radar_scene d_scene;
    const bool d_paced;
    const unsigned int d_truth_every;
    const kernels::time_spec d_start_time;
    const pmt::pmt_t d_truth_port;
    std::chrono::steady_clock::time_point d_t0; // paced: wall time of sample d_w0
    std::uint64_t d_w0 = 0;
    bool d_started = false;
};

} // namespace gpuradar
} // namespace gr

#endif
