/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "stripmap_acquisition_args.h"
#include "stripmap_source_impl.h"
#include "stripmap_tag.h"
#include <gnuradio/io_signature.h>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

namespace gr {
namespace gpuradar {

namespace {

constexpr const char* block_name = "stripmap_source";
//! Pulses simulated per work() call: keeps a call short (the simulator's cost grows
//! with pulses x targets x nrange) so that the stream flows in small steps.
constexpr int max_pulses_per_call = 64;

[[noreturn]] void bad(const std::string& what)
{
    throw std::invalid_argument(std::string("gpuradar::") + block_name + ": " + what);
}

void check_finite_list(const char* name, const std::vector<double>& v)
{
    for (std::size_t i = 0; i < v.size(); ++i)
        if (!std::isfinite(v[i]))
            bad(std::string(name) + "[" + std::to_string(i) + "] must be finite (got " +
                std::to_string(v[i]) + ")");
}

//! An optional per-target list: empty, or one value per target.
void check_optional_list(const char* name, const std::vector<double>& v, std::size_t n)
{
    if (!v.empty() && v.size() != n)
        bad(std::string(name) + " must be empty or have one entry per target (" +
            std::to_string(n) + ") (got " + std::to_string(v.size()) + ")");
    check_finite_list(name, v);
}

std::vector<kernels::stripmap_sim::point_target>
make_targets(const std::vector<double>& x,
             const std::vector<double>& y,
             const std::vector<double>& z,
             const std::vector<double>& amplitude)
{
    if (x.size() != y.size())
        bad("target_y must have one entry per target_x (" + std::to_string(x.size()) +
            ") (got " + std::to_string(y.size()) + ")");
    check_finite_list("target_x", x);
    check_finite_list("target_y", y);
    check_optional_list("target_z", z, x.size());
    check_optional_list("target_amplitude", amplitude, x.size());
    std::vector<kernels::stripmap_sim::point_target> t(x.size());
    for (std::size_t i = 0; i < t.size(); ++i) {
        t[i].x_m = x[i];
        t[i].y_m = y[i];
        t[i].z_m = z.empty() ? 0.0 : z[i];
        t[i].amplitude = { amplitude.empty() ? 1.0 : amplitude[i], 0.0 };
    }
    return t;
}

} // namespace

stripmap_source::sptr
stripmap_source::make(double fc,
                      double bandwidth,
                      double pulse_width,
                      bool up_chirp,
                      double fs,
                      double prf,
                      double velocity,
                      double altitude,
                      double near_range,
                      unsigned int nrange,
                      double squint,
                      double antenna_length,
                      const std::vector<double>& target_x,
                      const std::vector<double>& target_y,
                      const std::vector<double>& target_z,
                      const std::vector<double>& target_amplitude,
                      double noise_sigma,
                      double first_pulse_y,
                      std::uint64_t max_pulses,
                      std::uint32_t seed,
                      const std::vector<gr_complex>& scene_reflectivity,
                      unsigned int scene_nx,
                      double scene_x0,
                      double scene_y0,
                      double scene_spacing,
                      double motion_velocity_error,
                      double cross_track_amplitude,
                      double cross_track_period,
                      double cross_track_phase,
                      double cross_track_walk,
                      double cross_track_noise,
                      double vertical_amplitude,
                      double vertical_period,
                      double vertical_phase,
                      double vertical_walk,
                      double vertical_noise,
                      std::uint32_t motion_seed)
{
    params p;
    p.acquisition = acquisition_from_args(fc,
                                          bandwidth,
                                          pulse_width,
                                          up_chirp,
                                          fs,
                                          prf,
                                          velocity,
                                          altitude,
                                          near_range,
                                          nrange,
                                          squint,
                                          antenna_length);
    p.target_x = target_x;
    p.target_y = target_y;
    p.target_z = target_z;
    p.target_amplitude = target_amplitude;
    p.noise_sigma = noise_sigma;
    p.first_pulse_y = first_pulse_y;
    p.max_pulses = max_pulses;
    p.seed = seed;
    p.scene_reflectivity = scene_reflectivity;
    p.scene_nx = scene_nx;
    p.scene_x0 = scene_x0;
    p.scene_y0 = scene_y0;
    p.scene_spacing = scene_spacing;
    p.motion_velocity_error = motion_velocity_error;
    p.cross_track_amplitude = cross_track_amplitude;
    p.cross_track_period = cross_track_period;
    p.cross_track_phase = cross_track_phase;
    p.cross_track_walk = cross_track_walk;
    p.cross_track_noise = cross_track_noise;
    p.vertical_amplitude = vertical_amplitude;
    p.vertical_period = vertical_period;
    p.vertical_phase = vertical_phase;
    p.vertical_walk = vertical_walk;
    p.vertical_noise = vertical_noise;
    p.motion_seed = motion_seed;
    return make(p);
}

stripmap_source::sptr stripmap_source::make(const params& a)
{
    const auto p = make_stripmap_params(block_name, a.acquisition);
    auto targets = make_targets(a.target_x, a.target_y, a.target_z, a.target_amplitude);
    if (!(a.noise_sigma >= 0.0) || !std::isfinite(a.noise_sigma))
        bad("noise_sigma must be >= 0 and finite (got " + std::to_string(a.noise_sigma) +
            ")");
    if (!std::isfinite(a.first_pulse_y))
        bad("first_pulse_y must be finite (m) (got " + std::to_string(a.first_pulse_y) +
            ")");
    kernels::stripmap_sim::reflectivity_grid scene{
        a.scene_reflectivity, a.scene_nx, a.scene_x0, a.scene_y0, a.scene_spacing
    };
    scene.validate(block_name);
    kernels::stripmap_sim::motion_errors motion;
    motion.velocity_error_mps = a.motion_velocity_error;
    motion.cross_track.sinusoids = {
        { a.cross_track_amplitude, a.cross_track_period, a.cross_track_phase }
    };
    motion.cross_track.random_walk = a.cross_track_walk;
    motion.cross_track.white_m = a.cross_track_noise;
    motion.vertical.sinusoids = {
        { a.vertical_amplitude, a.vertical_period, a.vertical_phase }
    };
    motion.vertical.random_walk = a.vertical_walk;
    motion.vertical.white_m = a.vertical_noise;
    motion.seed = a.motion_seed;
    motion.validate(block_name);
    return gnuradio::make_block_sptr<stripmap_source_impl>(p,
                                                           std::move(targets),
                                                           std::move(scene),
                                                           a.noise_sigma,
                                                           a.first_pulse_y,
                                                           a.max_pulses,
                                                           a.seed,
                                                           motion);
}

stripmap_source_impl::stripmap_source_impl(
    const kernels::stripmap_params& p,
    std::vector<kernels::stripmap_sim::point_target> targets,
    kernels::stripmap_sim::reflectivity_grid scene,
    double noise_sigma,
    double first_pulse_y,
    std::uint64_t max_pulses,
    std::uint32_t seed,
    const kernels::stripmap_sim::motion_errors& motion)
    : gr::sync_block("stripmap_source",
                     gr::io_signature::make(0, 0, 0),
                     gr::io_signature::make(1, 1, p.nrange * sizeof(gr_complex))),
      d_params(p),
      d_targets(std::move(targets)),
      d_scene(std::move(scene)),
      d_noise_sigma(noise_sigma),
      d_first_pulse_y(first_pulse_y),
      d_max_pulses(max_pulses),
      d_seed(seed),
      d_motion(motion.any()
                   ? std::make_unique<kernels::stripmap_sim::track_errors>(p, motion)
                   : nullptr)
{
}

double stripmap_source_impl::far_aperture_pulses() const
{
    return d_params.aperture_pulses(
        d_params.near_range_m + double(d_params.nrange - 1) * d_params.range_spacing_m());
}

int stripmap_source_impl::work(int noutput_items,
                               gr_vector_const_void_star&,
                               gr_vector_void_star& output_items)
{
    const std::uint64_t first = nitems_written(0);
    std::uint64_t n = std::uint64_t(std::min(noutput_items, max_pulses_per_call));
    if (d_max_pulses) {
        if (first >= d_max_pulses)
            return WORK_DONE;
        n = std::min(n, d_max_pulses - first);
    }
    if (first == 0)
        add_item_tag(
            0, 0, stripmap_tag_key(), stripmap_dict(d_params, d_first_pulse_y, 0));
    const auto pulses = kernels::stripmap_sim::simulate(d_params,
                                                        d_targets,
                                                        d_scene,
                                                        std::size_t(first),
                                                        std::size_t(n),
                                                        d_first_pulse_y,
                                                        d_noise_sigma,
                                                        d_seed,
                                                        d_motion.get());
    std::memcpy(output_items[0], pulses.data(), pulses.size() * sizeof(gr_complex));
    if (d_motion) {
        static const pmt::pmt_t key = pmt::intern("true_position");
        for (std::uint64_t j = 0; j < n; ++j) {
            const std::uint64_t i = first + j;
            const double y =
                d_first_pulse_y + double(i) * d_params.velocity_mps / d_params.prf_hz;
            const auto pos = d_motion->true_position(std::size_t(i), y);
            add_item_tag(0, i, key, pmt::init_f64vector(3, pos.data()));
        }
    }
    d_pulses = first + n;
    return int(n);
}

} // namespace gpuradar
} // namespace gr
