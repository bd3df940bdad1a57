/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef INCLUDED_GPURADAR_STRIPMAP_SOURCE_IMPL_H
#define INCLUDED_GPURADAR_STRIPMAP_SOURCE_IMPL_H

#include <gnuradio/gpuradar/stripmap_source.h>
#include <gpuradar/kernels/sar/stripmap.h>
#include <atomic>
#include <memory>
#include <vector>

namespace gr {
namespace gpuradar {

namespace kernels = ::gpuradar::kernels;

class stripmap_source_impl : public stripmap_source
{
public:
    stripmap_source_impl(const kernels::stripmap_params& p,
                         std::vector<kernels::stripmap_sim::point_target> targets,
                         kernels::stripmap_sim::reflectivity_grid scene,
                         double noise_sigma,
                         double first_pulse_y,
                         std::uint64_t max_pulses,
                         std::uint32_t seed,
                         const kernels::stripmap_sim::motion_errors& motion);

    double far_aperture_pulses() const override;
    std::uint64_t pulses() const override { return d_pulses; }

    int work(int noutput_items,
             gr_vector_const_void_star& input_items,
             gr_vector_void_star& output_items) override;

private:
    const kernels::stripmap_params d_params;
    const std::vector<kernels::stripmap_sim::point_target> d_targets;
    const kernels::stripmap_sim::reflectivity_grid d_scene;
    const double d_noise_sigma, d_first_pulse_y;
    const std::uint64_t d_max_pulses;
    const std::uint32_t d_seed;
    //! Navigation errors (nullptr: none); its walks' state advances with the stream.
    const std::unique_ptr<kernels::stripmap_sim::track_errors> d_motion;
    std::atomic<std::uint64_t> d_pulses{ 0 };
};

} // namespace gpuradar
} // namespace gr

#endif
