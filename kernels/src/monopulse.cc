/* Beam-group monopulse: maximum likelihood over theta on the strongest beam and its
 * neighbours. */
#include "param_check.h"
#include <gpuradar/kernels/monopulse.h>
#include <algorithm>
#include <cmath>

namespace gpuradar::kernels {
namespace {

using cd = std::complex<double>;
constexpr const char* stage = "monopulse";
constexpr double deg = detail::pi / 180.0;
//! Grid points over the searched interval before the refinement: several per beamwidth,
//! so the grid's best point lies in the likelihood's main peak.
constexpr int grid_points = 64;
constexpr int golden_steps = 60;
//! Beams used per estimate: the strongest and its two neighbours. Two adjacent beams
//! alone lose up to half the array's angle information for a target on a beam's axis
//! (their Fisher information against the whole array's); three keep it within about
//! 1.1x (uniform taper) to 1.4x (Taylor 35 dB) in RMS error over a half-beamwidth-spaced
//! fan.
constexpr std::size_t max_group = 3;

//! p^H M q for K-vectors and a row-major K x K M.
cd form(const std::vector<cd>& p, const std::vector<cd>& m, const std::vector<cd>& q)
{
    const std::size_t k = p.size();
    cd sum = 0.0;
    for (std::size_t i = 0; i < k; ++i) {
        cd mq = 0.0;
        for (std::size_t j = 0; j < k; ++j)
            mq += m[i * k + j] * q[j];
        sum += std::conj(p[i]) * mq;
    }
    return sum;
}

//! Inverse of a small row-major k x k matrix (Gauss-Jordan with partial pivoting).
std::vector<cd> inverse(std::vector<cd> a, std::size_t k)
{
    std::vector<cd> inv(k * k, 0.0);
    for (std::size_t i = 0; i < k; ++i)
        inv[i * k + i] = 1.0;
    for (std::size_t col = 0; col < k; ++col) {
        std::size_t piv = col;
        for (std::size_t r = col + 1; r < k; ++r)
            if (std::abs(a[r * k + col]) > std::abs(a[piv * k + col]))
                piv = r;
        if (std::abs(a[piv * k + col]) == 0.0)
            detail::throw_invalid(
                stage, "weights", "linearly independent beams", "singular");
        for (std::size_t j = 0; j < k; ++j) {
            std::swap(a[col * k + j], a[piv * k + j]);
            std::swap(inv[col * k + j], inv[piv * k + j]);
        }
        const cd d = a[col * k + col];
        for (std::size_t j = 0; j < k; ++j) {
            a[col * k + j] /= d;
            inv[col * k + j] /= d;
        }
        for (std::size_t r = 0; r < k; ++r) {
            if (r == col)
                continue;
            const cd f = a[r * k + col];
            for (std::size_t j = 0; j < k; ++j) {
                a[r * k + j] -= f * a[col * k + j];
                inv[r * k + j] -= f * inv[col * k + j];
            }
        }
    }
    return inv;
}

/*!
 * The maximum of f over [lo, hi]: the best of grid_points evenly spaced samples, then a
 * golden-section search inside the grid cells beside it.
 */
template <class F>
double argmax(double lo, double hi, const F& f)
{
    const double step = (hi - lo) / (grid_points - 1);
    int best = 0;
    double best_l = -INFINITY;
    for (int i = 0; i < grid_points; ++i) {
        const double l = f(lo + i * step);
        if (l > best_l) {
            best_l = l;
            best = i;
        }
    }
    const double r = 0.5 * (std::sqrt(5.0) - 1.0);
    double a = std::max(lo, lo + (best - 1) * step),
           z = std::min(hi, lo + (best + 1) * step);
    double x1 = z - r * (z - a), x2 = a + r * (z - a);
    double l1 = f(x1), l2 = f(x2);
    for (int k = 0; k < golden_steps; ++k) {
        if (l1 > l2) {
            z = x2;
            x2 = x1;
            l2 = l1;
            x1 = z - r * (z - a);
            l1 = f(x1);
        } else {
            a = x1;
            x1 = x2;
            l1 = l2;
            x2 = a + r * (z - a);
            l2 = f(x2);
        }
    }
    return 0.5 * (a + z);
}

//! The standard deviation (degrees) for Fisher information `info` (per radian^2).
double std_from_information(double info)
{
    return info > 0 ? 1.0 / std::sqrt(info) / deg : INFINITY;
}

} // namespace

monopulse::monopulse(const std::vector<position_m>& elements,
                     double wavelength_m,
                     const std::vector<cfloat>& weights,
                     const std::vector<double>& beam_angles_deg)
    : d_elements(elements),
      d_wavenumber(2.0 * detail::pi / wavelength_m),
      d_weights(weights.begin(), weights.end()),
      d_angles_deg(beam_angles_deg)
{
    const std::size_t nb = beam_angles_deg.size(), nc = elements.size();
    if (nc == 0)
        detail::throw_invalid(stage, "element_positions_m", "at least one element", 0);
    if (!(wavelength_m > 0.0) || !std::isfinite(wavelength_m))
        detail::throw_invalid(stage, "wavelength_m", "> 0", wavelength_m);
    if (nb < 2)
        detail::throw_invalid(stage, "beam_angles_deg", "at least 2 beams", nb);
    for (std::size_t b = 1; b < nb; ++b)
        if (!(beam_angles_deg[b] > beam_angles_deg[b - 1]))
            detail::throw_invalid(
                stage, "beam_angles_deg", "strictly increasing", beam_angles_deg[b]);
    if (weights.size() != nb * nc)
        detail::throw_invalid(
            stage, "weights", "nbeams * nchannels values", weights.size());
    d_group = std::min(nb, max_group);
    for (std::size_t b = 0; b + d_group <= nb; ++b) {
        // C = W_group W_group^H: the group's noise covariance over sigma^2.
        std::vector<cd> c(d_group * d_group, 0.0);
        for (std::size_t i = 0; i < d_group; ++i)
            for (std::size_t j = 0; j < d_group; ++j)
                for (std::size_t n = 0; n < nc; ++n)
                    c[i * d_group + j] += d_weights[(b + i) * nc + n] *
                                          std::conj(d_weights[(b + j) * nc + n]);
        d_cinv.push_back(inverse(c, d_group));
        d_c.push_back(std::move(c));
    }
    for (std::size_t b = 0; b < nb; ++b) {
        double gain = 0.0;
        for (std::size_t n = 0; n < nc; ++n)
            gain += std::norm(d_weights[b * nc + n]);
        d_noise_gain.push_back(gain);
    }
}

void monopulse::group_pattern(std::size_t b, double theta, cvec& g, cvec* d) const
{
    const double s = std::sin(theta), c = std::cos(theta);
    const std::size_t nc = d_elements.size();
    g.assign(d_group, 0.0);
    if (d)
        d->assign(d_group, 0.0);
    for (std::size_t n = 0; n < nc; ++n) {
        const auto& p = d_elements[n];
        const cd a = std::polar(1.0, d_wavenumber * (p[0] * s + p[1] * c));
        const cd da = cd(0.0, d_wavenumber * (p[0] * c - p[1] * s)) * a;
        for (std::size_t i = 0; i < d_group; ++i) {
            const cd w = d_weights[(b + i) * nc + n];
            g[i] += w * a;
            if (d)
                (*d)[i] += w * da;
        }
    }
}

double monopulse::likelihood(std::size_t b, double theta, const cvec& y) const
{
    cvec g;
    group_pattern(b, theta, g, nullptr);
    return std::norm(form(g, d_cinv[b], y)) / form(g, d_cinv[b], g).real();
}

template <class T>
std::size_t monopulse::group_of(const T* beams) const
{
    const std::size_t nb = nbeams();
    std::size_t s = 0;
    for (std::size_t b = 1; b < nb; ++b)
        if (std::norm(beams[b]) > std::norm(beams[s]))
            s = b;
    // The strongest beam in the middle of its group, shifted inwards at the fan's edges.
    return std::min(s > 0 ? s - 1 : 0, nb - d_group);
}

std::pair<double, double> monopulse::search_interval(std::size_t b) const
{
    const std::size_t last = b + d_group - 1;
    const double lo =
        std::max(-90.0, d_angles_deg[b] - 0.5 * (d_angles_deg[b + 1] - d_angles_deg[b]));
    const double hi = std::min(
        90.0, d_angles_deg[last] + 0.5 * (d_angles_deg[last] - d_angles_deg[last - 1]));
    return { lo * deg, hi * deg };
}

angle_estimate monopulse::estimate(const cfloat* beams, double noise_power) const
{
    if (!(noise_power > 0.0) || !std::isfinite(noise_power))
        detail::throw_invalid(stage, "noise_power", "> 0", noise_power);
    const std::size_t b = group_of(beams);
    const cvec y(beams + b, beams + b + d_group);
    const auto [lo, hi] = search_interval(b);
    const double theta = argmax(lo, hi, [&](double t) { return likelihood(b, t, y); });
    cvec g, dg;
    group_pattern(b, theta, g, &dg);
    const auto& ci = d_cinv[b];
    const double ggg = form(g, ci, g).real();
    const cd amplitude = form(g, ci, y) / ggg;
    const double info = 2.0 * std::norm(amplitude) / noise_power *
                        (form(dg, ci, dg).real() - std::norm(form(g, ci, dg)) / ggg);
    angle_estimate e;
    e.azimuth_deg = theta / deg;
    e.std_deg = std_from_information(info);
    e.beam = b;
    return e;
}

void monopulse::amplitude_model(
    std::size_t b, double theta, cvec& h, cvec* dh, cvec& cainv) const
{
    cvec g, dg;
    group_pattern(b, theta, g, dh ? &dg : nullptr);
    h.assign(d_group, 0.0);
    if (dh)
        dh->assign(d_group, 0.0);
    std::vector<cd> phase(d_group);
    for (std::size_t i = 0; i < d_group; ++i) {
        const double mag = std::abs(g[i]);
        h[i] = mag;
        phase[i] = mag > 0 ? g[i] / mag : cd(1.0);
        // d|g|/dtheta = Re(conj(g) g') / |g|
        if (dh)
            (*dh)[i] = mag > 0 ? (std::conj(g[i]) * dg[i]).real() / mag : 0.0;
    }
    // The in-phase noise of beams i and j: Re(n_i conj(phase_i)) and Re(n_j
    // conj(phase_j)) have covariance (sigma^2 / 2) Re(C_ij conj(phase_i) phase_j).
    const auto& c = d_c[b];
    std::vector<cd> ca(d_group * d_group);
    for (std::size_t i = 0; i < d_group; ++i)
        for (std::size_t j = 0; j < d_group; ++j)
            ca[i * d_group + j] =
                (c[i * d_group + j] * std::conj(phase[i]) * phase[j]).real();
    cainv = inverse(ca, d_group);
}

double monopulse::amplitude_fit(std::size_t b, double theta, const cvec& m) const
{
    cvec h, cainv;
    amplitude_model(b, theta, h, nullptr, cainv);
    const double hh = form(h, cainv, h).real();
    const double hm = form(h, cainv, m).real();
    return -(form(m, cainv, m).real() - hm * hm / hh);
}

angle_estimate monopulse::estimate_from_powers(const float* powers,
                                               std::size_t noise_beam,
                                               double beam_noise_power) const
{
    if (!(beam_noise_power > 0.0) || !std::isfinite(beam_noise_power))
        detail::throw_invalid(stage, "beam_noise_power", "> 0", beam_noise_power);
    if (noise_beam >= nbeams())
        detail::throw_invalid(stage, "noise_beam", "< nbeams", noise_beam);
    const double sigma2 = beam_noise_power / d_noise_gain[noise_beam];
    const std::size_t b = group_of(powers);
    cvec m(d_group);
    for (std::size_t i = 0; i < d_group; ++i)
        m[i] = std::sqrt(
            std::max(double(powers[b + i]) - sigma2 * d_noise_gain[b + i], 0.0));
    const auto [lo, hi] = search_interval(b);
    const double theta = argmax(lo, hi, [&](double t) { return amplitude_fit(b, t, m); });
    cvec h, dh, cainv;
    amplitude_model(b, theta, h, &dh, cainv);
    const double hh = form(h, cainv, h).real();
    const double amplitude = form(h, cainv, m).real() / hh;
    const double hdh = form(h, cainv, dh).real();
    const double info = 2.0 * amplitude * amplitude / sigma2 *
                        (form(dh, cainv, dh).real() - hdh * hdh / hh);
    angle_estimate e;
    e.azimuth_deg = theta / deg;
    e.std_deg = std_from_information(info);
    e.beam = b;
    return e;
}

} // namespace gpuradar::kernels
