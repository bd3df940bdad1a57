#include "common/param_check.h"
#include <gpuradar/kernels/sar/sar_sim.h>
#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>

namespace gpuradar::kernels::sar_sim {

namespace {
using detail::pi;

double distance(vec3 a, vec3 b)
{
    const double dx = a.x - b.x, dy = a.y - b.y, dz = a.z - b.z;
    return std::sqrt(dx * dx + dy * dy + dz * dz);
}

double sinc(double x)
{
    if (std::abs(x) < 1e-12)
        return 1.0;
    return std::sin(pi * x) / (pi * x);
}
} // namespace

std::vector<vec3> straight_path(vec3 start, vec3 end, std::size_t npulses)
{
    std::vector<vec3> p(npulses);
    for (std::size_t i = 0; i < npulses; ++i) {
        const double t = npulses > 1 ? double(i) / double(npulses - 1) : 0.0;
        p[i] = { start.x + t * (end.x - start.x),
                 start.y + t * (end.y - start.y),
                 start.z + t * (end.z - start.z) };
    }
    return p;
}

std::vector<vec3> circular_path(
    vec3 centre, double radius, double start_rad, double span_rad, std::size_t npulses)
{
    std::vector<vec3> p(npulses);
    const bool full = std::abs(std::abs(span_rad) - 2 * pi) < 1e-12;
    const double step =
        npulses > 1 ? span_rad / double(full ? npulses : npulses - 1) : 0.0;
    for (std::size_t i = 0; i < npulses; ++i) {
        const double a = start_rad + step * double(i);
        p[i] = { centre.x + radius * std::cos(a),
                 centre.y + radius * std::sin(a),
                 centre.z };
    }
    return p;
}

phase_history simulate(const std::vector<vec3>& path,
                       const std::vector<point_target>& targets,
                       const radar& r)
{
    if (r.nbins < 2)
        throw std::invalid_argument("gpuradar::sar_sim: nbins must be >= 2 (got " +
                                    std::to_string(r.nbins) + ")");
    if (!(r.dr > 0) || !(r.bandwidth > 0))
        throw std::invalid_argument("gpuradar::sar_sim: dr and bandwidth must be > 0");
    constexpr double c = backprojection::speed_of_light;
    phase_history h;
    h.npulses = path.size();
    h.nbins = r.nbins;
    h.targets = targets;
    h.pulses.assign(h.npulses * h.nbins, cfloat(0, 0));
    h.geometry.resize(h.npulses * backprojection::geometry_length);
    const double kt = 2.0 * r.f0 / c; // phase turns per metre
    const double res = c / (2.0 * r.bandwidth);
    std::vector<std::complex<double>> acc(h.nbins);
    for (std::size_t i = 0; i < h.npulses; ++i) {
        const vec3 a = path[i];
        const double r0 = r.gate_centre
                              ? distance(a, *r.gate_centre) - double(h.nbins / 2) * r.dr
                              : r.r0;
        double* g = &h.geometry[i * backprojection::geometry_length];
        g[0] = a.x;
        g[1] = a.y;
        g[2] = a.z;
        g[3] = r0;
        g[4] = r.dr;
        g[5] = r.f0;
        std::fill(acc.begin(), acc.end(), 0.0);
        for (const auto& t : targets) {
            const double R = distance(a, t.position);
            const double turns = kt * R;
            const double frac = turns - std::round(turns);
            const std::complex<double> v = t.amplitude * std::polar(1.0, -2 * pi * frac);
            const double kc = (R - r0) / r.dr;
            long long k0 = 0, k1 = static_cast<long long>(h.nbins) - 1;
            if (r.sinc_half_width > 0) {
                k0 = std::max(k0,
                              static_cast<long long>(std::floor(kc)) - r.sinc_half_width);
                k1 = std::min(k1,
                              static_cast<long long>(std::ceil(kc)) + r.sinc_half_width);
            }
            for (long long k = k0; k <= k1; ++k)
                acc[k] += v * sinc((r0 + double(k) * r.dr - R) / res);
        }
        cfloat* out = &h.pulses[i * h.nbins];
        for (std::size_t k = 0; k < h.nbins; ++k)
            out[k] = cfloat(acc[k]);
    }
    if (r.noise_sigma > 0) {
        std::mt19937 rng(r.seed);
        std::normal_distribution<float> n(0.0f, static_cast<float>(r.noise_sigma));
        for (auto& s : h.pulses)
            s += cfloat(n(rng), n(rng));
    }
    return h;
}

pixel nearest_pixel(const image_grid& g, vec3 p)
{
    return { static_cast<long long>(std::llround((p.x - g.x0) / g.dx)),
             static_cast<long long>(std::llround((p.y - g.y0) / g.dy)) };
}

} // namespace gpuradar::kernels::sar_sim
