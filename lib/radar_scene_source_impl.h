/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef INCLUDED_GPURADAR_RADAR_SCENE_SOURCE_IMPL_H
#define INCLUDED_GPURADAR_RADAR_SCENE_SOURCE_IMPL_H

#include "pending_change.h"
#include <gnuradio/gpuradar/radar_scene_source.h>
#include <gpuradar/kernels/scene/radar_scene.h>
#include <gpuradar/kernels/waveform/pulse_timing.h>
#include <atomic>
#include <chrono>
#include <mutex>
#include <string>

namespace gr {
namespace gpuradar {

namespace kernels = ::gpuradar::kernels;

//! What the scene source's setters change.
struct scene_live_config {
    kernels::scene_config scene;
    std::string amplitude_unit;
    double radar_constant_db = 0;
};

class radar_scene_source_impl : public radar_scene_source
{
public:
    radar_scene_source_impl(const scene_live_config& cfg,
                            bool paced,
                            unsigned int truth_every,
                            double start_time);

    std::vector<gr_complex> waveform() const override;
    void set_targets(const std::vector<double>& ranges,
                     const std::vector<double>& velocities,
                     const std::vector<double>& amplitudes,
                     const std::vector<double>& azimuths_deg,
                     const std::vector<double>& elevations_deg) override;
    void set_noise_power(double noise_power) override;
    double pri_samples() const override { return d_scene.pri_samples(); }
    std::vector<double> snr_db() const override;
    std::uint64_t adc_clipped() const override
    {
        return d_clipped.load(std::memory_order_relaxed);
    }

    bool start() override;
    int work(int noutput_items,
             gr_vector_const_void_star& input_items,
             gr_vector_void_star& output_items) override;

private:
    void publish_truth(std::uint64_t from, std::uint64_t to);
    //! Writes n samples of every channel, switching to a pending scene at the first
    //! pulse start.
    void generate(const gr_vector_void_star& out, std::size_t n);


    kernels::radar_scene d_scene;
    mutable std::mutex d_scene_mutex; //!< the swap against the getters' threads
    pending_change<scene_live_config, kernels::radar_scene> d_changes;
    const bool d_paced;
    const unsigned int d_truth_every;
    const kernels::time_spec d_start_time;
    const pmt::pmt_t d_truth_port;
    std::chrono::steady_clock::time_point d_t0; // paced: wall time of sample d_w0
    std::uint64_t d_w0 = 0;
    bool d_started = false;
    //! d_scene's clip count, published by work() for the getter's thread.
    std::atomic<std::uint64_t> d_clipped{ 0 };
};

} // namespace gpuradar
} // namespace gr

#endif
