/* stripmap_params (validation, derived quantities) and the raw-echo simulator. */
#include "common/param_check.h"
#include <gpuradar/kernels/common/constants.h>
#include <gpuradar/kernels/sar/stripmap.h>
#include <gpuradar/kernels/scene/complex_noise.h>
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

namespace gpuradar::kernels {

namespace {
using detail::pi;
using detail::throw_invalid;

//! The 3 dB beamwidth of a uniform aperture (rad), the one-way half-power width.
double beamwidth_rad(const stripmap_params& p)
{
    return 0.886 * p.wavelength_m() / p.antenna_length_m;
}

void require_positive(const char* stage, const char* param, double v)
{
    if (!(std::isfinite(v) && v > 0))
        throw_invalid(stage, param, "> 0 and finite", v);
}
} // namespace

void stripmap_params::validate(const char* stage) const
{
    require_positive(stage, "fc_hz", fc_hz);
    require_positive(stage, "bandwidth_hz", bandwidth_hz);
    require_positive(stage, "pulse_width_s", pulse_width_s);
    require_positive(stage, "fs_hz", fs_hz);
    require_positive(stage, "prf_hz", prf_hz);
    require_positive(stage, "velocity_mps", velocity_mps);
    require_positive(stage, "antenna_length_m", antenna_length_m);
    if (!(bandwidth_hz <= fs_hz))
        throw_invalid(stage,
                      "bandwidth_hz",
                      "<= fs_hz (" + std::to_string(fs_hz) + " Hz)",
                      bandwidth_hz);
    if (!(std::isfinite(altitude_m) && altitude_m >= 0))
        throw_invalid(stage, "altitude_m", ">= 0 and finite", altitude_m);
    if (!(std::isfinite(near_range_m) && near_range_m > altitude_m))
        throw_invalid(stage,
                      "near_range_m",
                      "finite and > altitude_m (" + std::to_string(altitude_m) + " m)",
                      near_range_m);
    if (nrange < 2 || nrange > static_cast<std::size_t>(std::numeric_limits<int>::max()))
        throw_invalid(stage, "nrange", "in [2, 2^31)", nrange);
    const double window_s = static_cast<double>(nrange) / fs_hz;
    if (!(pulse_width_s < window_s))
        throw_invalid(stage,
                      "pulse_width_s",
                      "shorter than the range window nrange/fs_hz = " +
                          std::to_string(window_s) + " s",
                      pulse_width_s);
    if (!(std::isfinite(squint_rad) && std::abs(squint_rad) <= max_squint_rad))
        throw_invalid(stage,
                      "squint_rad",
                      "in [-" + std::to_string(max_squint_rad) + ", " +
                          std::to_string(max_squint_rad) + "]",
                      squint_rad);
    const double bd = doppler_bandwidth_hz();
    if (!(prf_hz >= bd))
        throw_invalid(
            stage,
            "prf_hz",
            ">= the Doppler bandwidth 0.886*2*velocity_mps/antenna_length_m = " +
                std::to_string(bd) + " Hz (else azimuth aliasing)",
            prf_hz);
}

double stripmap_params::wavelength_m() const { return speed_of_light / fc_hz; }

double stripmap_params::chirp_rate_hz_per_s() const
{
    return (up_chirp ? 1.0 : -1.0) * bandwidth_hz / pulse_width_s;
}

double stripmap_params::range_spacing_m() const { return speed_of_light / (2.0 * fs_hz); }

double stripmap_params::doppler_centroid_hz() const
{
    return 2.0 * velocity_mps * std::sin(squint_rad) / wavelength_m();
}

double stripmap_params::doppler_bandwidth_hz() const
{
    return 0.886 * 2.0 * velocity_mps / antenna_length_m;
}

double stripmap_params::aperture_pulses(double range_m) const
{
    // Along-track span over which the target lies inside the 3 dB beam, squint included:
    // R0 (tan(squint + beam/2) - tan(squint - beam/2)).
    const double half = 0.5 * beamwidth_rad(*this);
    const double span =
        range_m * (std::tan(squint_rad + half) - std::tan(squint_rad - half));
    return span * prf_hz / velocity_mps;
}

double stripmap_params::centre_range_m() const
{
    return near_range_m + 0.5 * static_cast<double>(nrange - 1) * range_spacing_m();
}

namespace stripmap_sim {

namespace {

double sinc(double x)
{
    if (std::abs(x) < 1e-12)
        return 1.0;
    return std::sin(pi * x) / (pi * x);
}

//! The noise generator's seed for one pulse: (seed, pulse index) mixed so that
//! neighbouring pulses and seeds give unrelated streams (complex_noise expands it).
std::uint64_t pulse_seed(std::uint32_t seed, std::size_t pulse)
{
    return (static_cast<std::uint64_t>(seed) << 32) ^
           (static_cast<std::uint64_t>(pulse) * 0x9E3779B97F4A7C15ull);
}

//! Adds one target's echo to one pulse (antenna at along-track y_a); main_lobe_only:
//! nothing outside the first nulls of the antenna pattern.
void add_echo(const stripmap_params& p,
              const point_target& t,
              const std::array<double, 3>& a,
              bool main_lobe_only,
              std::complex<double>* acc)
{
    const double dx = t.x_m - a[0], dy = t.y_m - a[1], dz = t.z_m - a[2];
    const double R = std::sqrt(dx * dx + dy * dy + dz * dz);
    const double lambda = p.wavelength_m();
    const double theta = std::asin(dy / R); // forward of broadside
    const double u = p.antenna_length_m * std::sin(theta - p.squint_rad) / lambda;
    if (main_lobe_only && std::abs(u) >= 1.0)
        return;
    const double g = sinc(u);
    const double gain = g * g; // two-way amplitude
    const double turns = 2.0 * R / lambda;
    const std::complex<double> carrier =
        t.amplitude * gain * std::polar(1.0, -2.0 * pi * (turns - std::round(turns)));
    // Fast time of sample k relative to the echo's centre: k/fs - 2(R - near)/c.
    const double centre = 2.0 * (R - p.near_range_m) / speed_of_light * p.fs_hz;
    const double half = 0.5 * p.pulse_width_s * p.fs_hz;
    const long long k0 = std::max(0LL, static_cast<long long>(std::ceil(centre - half)));
    const long long k1 = std::min(static_cast<long long>(p.nrange) - 1,
                                  static_cast<long long>(std::floor(centre + half)));
    const double K = p.chirp_rate_hz_per_s();
    for (long long k = k0; k <= k1; ++k) {
        const double dt = (static_cast<double>(k) - centre) / p.fs_hz;
        acc[k] += carrier * std::polar(1.0, pi * K * dt * dt);
    }
}

//! Rows [first, last) of a scene grid.
struct row_span {
    std::size_t first, last;
};

/*!
 * The scene rows that can lie in the antenna's main lobe for the antenna at y_a: a cell
 * at closest-approach range rho and along-track offset dy is seen at theta with
 * tan(theta) = dy / rho, inside the main lobe when |sin(theta - squint)| < lambda / L,
 * so dy lies between rho tan(theta_lo) and rho tan(theta_hi) for the scene's extreme
 * rho. All rows when the main lobe reaches the horizon (lambda / L near 1).
 */
row_span main_lobe_rows(const stripmap_params& p, const reflectivity_grid& g, double y_a)
{
    const std::size_t ny = g.ny();
    const double s = p.wavelength_m() / p.antenna_length_m;
    const double edge = s < 1.0 ? std::asin(s) : pi;
    const double lo = p.squint_rad - edge, hi = p.squint_rad + edge;
    constexpr double horizon = 1.5; // rad: tan() grows without bound beyond
    if (!(lo > -horizon && hi < horizon))
        return { 0, ny };
    const double x1 = g.x0_m + static_cast<double>(g.nx - 1) * g.spacing_m;
    const double near_x =
        (g.x0_m <= 0.0 && x1 >= 0.0) ? 0.0 : std::min(std::abs(g.x0_m), std::abs(x1));
    const double far_x = std::max(std::abs(g.x0_m), std::abs(x1));
    const double rho_min = std::hypot(near_x, p.altitude_m);
    const double rho_max = std::hypot(far_x, p.altitude_m);
    const double dy_lo = std::min(rho_min * std::tan(lo), rho_max * std::tan(lo));
    const double dy_hi = std::max(rho_min * std::tan(hi), rho_max * std::tan(hi));
    // One row of margin each side: the per-cell test decides at the edges.
    const double j_lo = std::floor((y_a + dy_lo - g.y0_m) / g.spacing_m) - 1.0;
    const double j_hi = std::ceil((y_a + dy_hi - g.y0_m) / g.spacing_m) + 2.0;
    const double n = static_cast<double>(ny);
    return { static_cast<std::size_t>(std::clamp(j_lo, 0.0, n)),
             static_cast<std::size_t>(std::clamp(j_hi, 0.0, n)) };
}

//! Adds the echoes of the scene cells in the main lobe to one pulse.
void add_scene_echoes(const stripmap_params& p,
                      const reflectivity_grid& g,
                      const std::array<double, 3>& antenna,
                      std::complex<double>* acc)
{
    const row_span rows = main_lobe_rows(p, g, antenna[1]);
    for (std::size_t j = rows.first; j < rows.last; ++j)
        for (std::size_t i = 0; i < g.nx; ++i) {
            const std::complex<float> a = g.reflectivity[j * g.nx + i];
            if (a == std::complex<float>(0.0f, 0.0f))
                continue;
            const point_target cell{ g.x0_m + static_cast<double>(i) * g.spacing_m,
                                     g.y0_m + static_cast<double>(j) * g.spacing_m,
                                     0.0,
                                     std::complex<double>(a) };
            add_echo(p, cell, antenna, true, acc);
        }
}

} // namespace

void reflectivity_grid::validate(const char* stage) const
{
    if (empty())
        return;
    if (nx == 0 || reflectivity.size() % nx != 0)
        throw_invalid(stage,
                      "scene_nx",
                      "> 0 and a divisor of the cell count " +
                          std::to_string(reflectivity.size()),
                      nx);
    if (!(std::isfinite(spacing_m) && spacing_m > 0))
        throw_invalid(stage, "scene_spacing", "> 0 and finite", spacing_m);
    if (!std::isfinite(x0_m))
        throw_invalid(stage, "scene_x0", "finite", x0_m);
    if (!std::isfinite(y0_m))
        throw_invalid(stage, "scene_y0", "finite", y0_m);
    for (std::size_t c = 0; c < reflectivity.size(); ++c)
        if (!(std::isfinite(reflectivity[c].real()) &&
              std::isfinite(reflectivity[c].imag())))
            throw_invalid(stage,
                          ("scene_reflectivity[" + std::to_string(c) + "]").c_str(),
                          "finite",
                          std::abs(reflectivity[c]));
}

std::vector<cfloat> simulate(const stripmap_params& p,
                             const std::vector<point_target>& targets,
                             std::size_t first_pulse,
                             std::size_t npulses,
                             double first_pulse_y,
                             double noise_sigma,
                             std::uint32_t seed)
{
    return simulate(p,
                    targets,
                    reflectivity_grid{},
                    first_pulse,
                    npulses,
                    first_pulse_y,
                    noise_sigma,
                    seed);
}

std::vector<cfloat> simulate(const stripmap_params& p,
                             const std::vector<point_target>& targets,
                             const reflectivity_grid& scene,
                             std::size_t first_pulse,
                             std::size_t npulses,
                             double first_pulse_y,
                             double noise_sigma,
                             std::uint32_t seed,
                             track_errors* motion)
{
    p.validate("stripmap_sim");
    if (!(std::isfinite(noise_sigma) && noise_sigma >= 0))
        throw_invalid("stripmap_sim", "noise_sigma", ">= 0 and finite", noise_sigma);
    if (!std::isfinite(first_pulse_y))
        throw_invalid("stripmap_sim", "first_pulse_y", "finite", first_pulse_y);
    for (const auto& t : targets)
        if (!(std::isfinite(t.x_m) && std::isfinite(t.y_m) && std::isfinite(t.z_m)))
            throw_invalid("stripmap_sim", "targets (position)", "finite", t.x_m);
    scene.validate("stripmap_sim");
    const std::size_t nr = p.nrange;
    std::vector<cfloat> out(npulses * nr);
    std::vector<std::complex<double>> acc(nr);
    std::vector<cfloat> noise(nr);
    for (std::size_t j = 0; j < npulses; ++j) {
        const std::size_t i = first_pulse + j;
        const double y_a =
            first_pulse_y + static_cast<double>(i) * p.velocity_mps / p.prf_hz;
        const std::array<double, 3> a =
            motion ? motion->true_position(i, y_a)
                   : std::array<double, 3>{ 0.0, y_a, p.altitude_m };
        std::fill(acc.begin(), acc.end(), 0.0);
        for (const auto& t : targets)
            add_echo(p, t, a, false, acc.data());
        if (!scene.empty())
            add_scene_echoes(p, scene, a, acc.data());
        complex_noise(pulse_seed(seed, i))
            .fill(noise.data(), nr, 2.0 * noise_sigma * noise_sigma);
        cfloat* row = &out[j * nr];
        for (std::size_t k = 0; k < nr; ++k)
            row[k] = cfloat(acc[k]) + noise[k];
    }
    return out;
}

bool motion_errors::any() const
{
    auto on = [](const axis_errors& a) {
        for (const auto& s : a.sinusoids)
            if (s.amplitude_m != 0.0)
                return true;
        return a.random_walk != 0.0 || a.white_m != 0.0;
    };
    return velocity_error_mps != 0.0 || on(cross_track) || on(vertical);
}

void motion_errors::validate(const char* stage) const
{
    if (!std::isfinite(velocity_error_mps))
        throw_invalid(stage, "motion_velocity_error", "finite (m/s)", velocity_error_mps);
    for (const auto& [name, a] :
         { std::pair<std::string, const axis_errors*>{ "cross_track", &cross_track },
           std::pair<std::string, const axis_errors*>{ "vertical", &vertical } }) {
        for (const auto& s : a->sinusoids) {
            if (!(std::isfinite(s.amplitude_m) && s.amplitude_m >= 0))
                throw_invalid(stage,
                              (name + "_amplitude").c_str(),
                              ">= 0 m and finite",
                              s.amplitude_m);
            if (!(std::isfinite(s.period_s) && s.period_s > 0))
                throw_invalid(
                    stage, (name + "_period").c_str(), "> 0 s and finite", s.period_s);
            if (!std::isfinite(s.phase_rad))
                throw_invalid(
                    stage, (name + "_phase").c_str(), "finite (rad)", s.phase_rad);
        }
        if (!(std::isfinite(a->random_walk) && a->random_walk >= 0))
            throw_invalid(stage,
                          (name + "_walk").c_str(),
                          ">= 0 m/sqrt(s) and finite",
                          a->random_walk);
        if (!(std::isfinite(a->white_m) && a->white_m >= 0))
            throw_invalid(
                stage, (name + "_noise").c_str(), ">= 0 m RMS and finite", a->white_m);
    }
}

track_errors::track_errors(const stripmap_params& p, const motion_errors& m)
    : d_p(p), d_m(m)
{
    m.validate("stripmap_sim");
}

namespace {
//! Pulse i's four N(0, 1) draws: cross walk step, cross white, up walk step, up white.
std::array<double, 4> motion_draws(std::uint32_t seed, std::size_t pulse)
{
    // Seeds apart from the receiver noise's (pulse_seed(seed, i)) by a constant.
    std::array<cfloat, 2> z;
    complex_noise(pulse_seed(seed, pulse) ^ 0xA5A5A5A55A5A5A5Aull).fill(z.data(), 2, 2.0);
    return { z[0].real(), z[0].imag(), z[1].real(), z[1].imag() };
}

double sinusoids(const axis_errors& a, double t)
{
    double v = 0.0;
    for (const auto& s : a.sinusoids)
        v += s.amplitude_m * std::sin(2.0 * pi * t / s.period_s + s.phase_rad);
    return v;
}
} // namespace

std::array<double, 3> track_errors::at(std::size_t pulse)
{
    if (pulse < d_next) {
        d_next = 0;
        d_walk_cross = d_walk_up = 0.0;
    }
    const double step = 1.0 / std::sqrt(d_p.prf_hz);
    const bool walks =
        d_m.cross_track.random_walk != 0.0 || d_m.vertical.random_walk != 0.0;
    // Walk steps from pulse 1 on; pulse 0's draws only feed its white noise.
    for (; walks && d_next < pulse; ++d_next) {
        const auto d = motion_draws(d_m.seed, d_next + 1);
        d_walk_cross += d_m.cross_track.random_walk * step * d[0];
        d_walk_up += d_m.vertical.random_walk * step * d[2];
    }
    d_next = pulse;
    const auto d = motion_draws(d_m.seed, pulse);
    const double t = static_cast<double>(pulse) / d_p.prf_hz;
    return { d_m.velocity_error_mps * t,
             sinusoids(d_m.cross_track, t) + d_walk_cross +
                 d_m.cross_track.white_m * d[1],
             sinusoids(d_m.vertical, t) + d_walk_up + d_m.vertical.white_m * d[3] };
}

std::array<double, 3> track_errors::true_position(std::size_t pulse, double y_nominal)
{
    const auto e = at(pulse);
    // measured (nominal) - true = e; cross track is -x
    return { e[1], y_nominal - e[0], d_p.altitude_m - e[2] };
}

zero_doppler closest_approach(const stripmap_params& p, const point_target& t)
{
    const double dz = t.z_m - p.altitude_m;
    return { std::sqrt(t.x_m * t.x_m + dz * dz), t.y_m };
}

} // namespace stripmap_sim
} // namespace gpuradar::kernels
