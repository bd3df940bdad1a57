/*
 * The stripmap geometry of the SAR focusing benchmarks (bench_csa.cc,
 * bench_sar_focus.cc), and a raw scene in it for the benchmarks that replay echoes.
 */
#ifndef INCLUDED_GPURADAR_BENCH_STRIPMAP_H
#define INCLUDED_GPURADAR_BENCH_STRIPMAP_H

#include <gpuradar/kernels/sar/stripmap.h>
#include <cmath>
#include <random>
#include <vector>

namespace gpuradar::bench::sar {

//! An X-band airborne stripmap geometry whose far-range aperture (~170 pulses) fits
//! every block size measured.
inline kernels::stripmap_params bench_params(std::size_t nrange)
{
    kernels::stripmap_params p;
    p.fc_hz = 9.6e9;
    p.bandwidth_hz = 100e6;
    p.pulse_width_s = 2e-6;
    p.fs_hz = 120e6;
    p.prf_hz = 200;
    p.velocity_mps = 150;
    p.altitude_m = 3000;
    p.near_range_m = 8000;
    p.nrange = nrange;
    p.antenna_length_m = 2.0;
    return p;
}

/*!
 * `npulses` raw echoes (pulse-major, p.nrange samples each) of `ntargets` point targets
 * of unit amplitude and random phase, spread along the track and across the range
 * window (a pulse width clear of its edges), plus noise of 0.1 per component: what a
 * focusing benchmark replays, never zeros.
 */
inline std::vector<kernels::cfloat>
raw_scene(const kernels::stripmap_params& p, std::size_t npulses, std::size_t ntargets)
{
    std::mt19937 rng(11);
    const double window_m = double(p.nrange) * p.range_spacing_m();
    const double margin_m = p.pulse_width_s * p.fs_hz * p.range_spacing_m();
    std::uniform_real_distribution<double> range(p.near_range_m + margin_m,
                                                 p.near_range_m + window_m - margin_m);
    std::uniform_real_distribution<double> along(
        0.0, double(npulses) * p.velocity_mps / p.prf_hz);
    std::uniform_real_distribution<double> phase(-3.14159265358979, 3.14159265358979);
    std::vector<kernels::stripmap_sim::point_target> targets(ntargets);
    for (auto& t : targets) {
        const double r = range(rng);
        t.x_m = std::sqrt(r * r - p.altitude_m * p.altitude_m);
        t.y_m = along(rng);
        t.amplitude = std::polar(1.0, phase(rng));
    }
    return kernels::stripmap_sim::simulate(p, targets, 0, npulses, 0.0, 0.1);
}

} // namespace gpuradar::bench::sar

#endif
