/* A small airborne stripmap acquisition for the block tests: short apertures (tens of
 * pulses) and a 256-sample range window, so that streams of a few blocks run in
 * milliseconds. */
#ifndef INCLUDED_GPURADAR_TEST_STRIPMAP_SCENE_H
#define INCLUDED_GPURADAR_TEST_STRIPMAP_SCENE_H

#include "../stripmap_blocks.h"
#include <gnuradio/gpuradar/stripmap_source.h>
#include <gpuradar/kernels/sar/stripmap.h>
#include <cmath>
#include <string>
#include <vector>

namespace gpuradar::test {

using gr::gpuradar::make_sar_focus;

//! X band, 50 MHz chirp of 1 us sampled at 60 MHz (2.5 m bins), 2 m antenna, 150 m/s at
//! 200 Hz PRF (0.75 m per pulse), 1 km altitude, slant ranges 2000 m to 2637.5 m:
//! about 40 to 50 pulses of synthetic aperture.
inline kernels::stripmap_params small_stripmap()
{
    kernels::stripmap_params p;
    p.fc_hz = 9.6e9;
    p.bandwidth_hz = 50e6;
    p.pulse_width_s = 1e-6;
    p.up_chirp = true;
    p.fs_hz = 60e6;
    p.prf_hz = 200.0;
    p.velocity_mps = 150.0;
    p.altitude_m = 1000.0;
    p.near_range_m = 2000.0;
    p.nrange = 256;
    p.squint_rad = 0.0;
    p.antenna_length_m = 2.0;
    return p;
}

inline gr::gpuradar::stripmap_source::sptr
make_source(const kernels::stripmap_params& p,
            const std::vector<kernels::stripmap_sim::point_target>& targets,
            double noise_sigma,
            std::uint64_t max_pulses,
            double first_pulse_y = 0.0,
            const kernels::stripmap_sim::reflectivity_grid& scene = {})
{
    gr::gpuradar::stripmap_source::params s;
    s.acquisition = gr::gpuradar::acquisition_of(p);
    for (const auto& t : targets) {
        s.target_x.push_back(t.x_m);
        s.target_y.push_back(t.y_m);
        s.target_z.push_back(t.z_m);
        s.target_amplitude.push_back(t.amplitude.real());
    }
    s.noise_sigma = noise_sigma;
    s.first_pulse_y = first_pulse_y;
    s.max_pulses = max_pulses;
    s.seed = 7;
    s.scene_reflectivity = scene.reflectivity;
    s.scene_nx = unsigned(scene.nx);
    s.scene_x0 = scene.x0_m;
    s.scene_y0 = scene.y0_m;
    s.scene_spacing = scene.spacing_m;
    return gr::gpuradar::stripmap_source::make(s);
}

//! A target on the ground whose closest approach is at slant range r0 and along-track y.
inline kernels::stripmap_sim::point_target
target_at(const kernels::stripmap_params& p, double r0, double y, double amplitude = 1.0)
{
    kernels::stripmap_sim::point_target t;
    t.x_m = std::sqrt(r0 * r0 - p.altitude_m * p.altitude_m);
    t.y_m = y;
    t.amplitude = { amplitude, 0.0 };
    return t;
}

} // namespace gpuradar::test

#endif
