/* Beam-group monopulse: maximum likelihood over theta on the strongest beam and its
 * neighbours. */
#include "common/param_check.h"
#include <gpuradar/kernels/array/monopulse.h>
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
//! grid_monopulse: the most alternations of the row and column cuts, and the change of
//! both angles (degrees) below which they have converged (far below any std_deg).
constexpr int max_passes = 20;
constexpr double converged_deg = 1e-4;

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
                     const std::vector<double>& beam_angles_deg,
                     scan_axis axis)
    : d_elements(elements),
      d_wavenumber(2.0 * detail::pi / wavelength_m),
      d_axis(axis),
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

void monopulse::group_pattern(
    std::size_t b, double theta, double other, cvec& g, cvec* d) const
{
    const bool azimuth = d_axis == scan_axis::azimuth;
    // u(azimuth, elevation) along the cut, and du/dtheta.
    const double az = azimuth ? theta : other, el = azimuth ? other : theta;
    const auto u = direction_vector(az, el);
    const std::array<double, 3> du =
        azimuth ? std::array<double, 3>{ std::cos(az) * std::cos(el),
                                         -std::sin(az) * std::cos(el),
                                         0.0 }
                : std::array<double, 3>{ -std::sin(az) * std::sin(el),
                                         -std::cos(az) * std::sin(el),
                                         std::cos(el) };
    const std::size_t nc = d_elements.size();
    g.assign(d_group, 0.0);
    if (d)
        d->assign(d_group, 0.0);
    for (std::size_t n = 0; n < nc; ++n) {
        const auto& p = d_elements[n];
        const cd a =
            std::polar(1.0, d_wavenumber * (p[0] * u[0] + p[1] * u[1] + p[2] * u[2]));
        const cd da =
            cd(0.0, d_wavenumber * (p[0] * du[0] + p[1] * du[1] + p[2] * du[2])) * a;
        for (std::size_t i = 0; i < d_group; ++i) {
            const cd w = d_weights[(b + i) * nc + n];
            g[i] += w * a;
            if (d)
                (*d)[i] += w * da;
        }
    }
}

double
monopulse::likelihood(std::size_t b, double theta, double other, const cvec& y) const
{
    cvec g;
    group_pattern(b, theta, other, g, nullptr);
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

angle_estimate
monopulse::estimate(const cfloat* beams, double noise_power, double other_deg) const
{
    const double other = other_deg * deg;
    if (!(noise_power > 0.0) || !std::isfinite(noise_power))
        detail::throw_invalid(stage, "noise_power", "> 0", noise_power);
    const std::size_t b = group_of(beams);
    const cvec y(beams + b, beams + b + d_group);
    const auto [lo, hi] = search_interval(b);
    const double theta =
        argmax(lo, hi, [&](double t) { return likelihood(b, t, other, y); });
    cvec g, dg;
    group_pattern(b, theta, other, g, &dg);
    const auto& ci = d_cinv[b];
    const double ggg = form(g, ci, g).real();
    const cd amplitude = form(g, ci, y) / ggg;
    const double info = 2.0 * std::norm(amplitude) / noise_power *
                        (form(dg, ci, dg).real() - std::norm(form(g, ci, dg)) / ggg);
    angle_estimate e;
    e.angle_deg = theta / deg;
    e.std_deg = std_from_information(info);
    e.beam = b;
    return e;
}

void monopulse::amplitude_model(
    std::size_t b, double theta, double other, cvec& h, cvec* dh, cvec& cainv) const
{
    cvec g, dg;
    group_pattern(b, theta, other, g, dh ? &dg : nullptr);
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

double
monopulse::amplitude_fit(std::size_t b, double theta, double other, const cvec& m) const
{
    cvec h, cainv;
    amplitude_model(b, theta, other, h, nullptr, cainv);
    const double hh = form(h, cainv, h).real();
    const double hm = form(h, cainv, m).real();
    return -(form(m, cainv, m).real() - hm * hm / hh);
}

angle_estimate monopulse::estimate_from_powers(const float* powers,
                                               std::size_t noise_beam,
                                               double beam_noise_power,
                                               double other_deg) const
{
    const double other = other_deg * deg;
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
    const double theta =
        argmax(lo, hi, [&](double t) { return amplitude_fit(b, t, other, m); });
    cvec h, dh, cainv;
    amplitude_model(b, theta, other, h, &dh, cainv);
    const double hh = form(h, cainv, h).real();
    const double amplitude = form(h, cainv, m).real() / hh;
    const double hdh = form(h, cainv, dh).real();
    const double info = 2.0 * amplitude * amplitude / sigma2 *
                        (form(dh, cainv, dh).real() - hdh * hdh / hh);
    angle_estimate e;
    e.angle_deg = theta / deg;
    e.std_deg = std_from_information(info);
    e.beam = b;
    return e;
}

beam_grid_shape find_beam_grid(const beam_directions& beams)
{
    const auto& az = beams.azimuths_deg;
    const auto& el = beams.elevations_deg;
    const std::size_t nb = az.size();
    if (el.size() != nb)
        detail::throw_invalid(stage,
                              "beam_elevations_deg",
                              "one per beam (" + std::to_string(nb) + ")",
                              el.size());
    beam_grid_shape g;
    while (g.naz < nb && el[g.naz] == el[0])
        ++g.naz;
    const auto not_a_grid = [&](std::size_t b) {
        detail::throw_invalid(stage,
                              "beam_elevations_deg",
                              "beams forming an azimuth x elevation grid, row after row "
                              "(" +
                                  std::to_string(g.naz) + " azimuths per row)",
                              "beam " + std::to_string(b) + " off the grid");
    };
    if (g.naz == 0 || nb % g.naz != 0)
        not_a_grid(nb);
    g.nel = nb / g.naz;
    for (std::size_t b = 0; b < nb; ++b)
        if (az[b] != az[b % g.naz] || el[b] != el[b - b % g.naz])
            not_a_grid(b);
    return g;
}

grid_monopulse::grid_monopulse(const std::vector<position_m>& elements,
                               double wavelength_m,
                               const std::vector<cfloat>& weights,
                               const beam_directions& beams)
    : d_shape(find_beam_grid(beams)), d_beams(beams)
{
    const std::size_t naz = d_shape.naz, nel = d_shape.nel, nc = elements.size();
    if (naz < 2 && nel < 2)
        detail::throw_invalid(stage, "beam_angles_deg", "at least 2 beams", naz * nel);
    if (weights.size() != naz * nel * nc)
        detail::throw_invalid(
            stage, "weights", "nbeams * nchannels values", weights.size());
    const auto rows_of = [&](const std::vector<std::size_t>& beam_list) {
        std::vector<cfloat> w;
        for (std::size_t b : beam_list)
            w.insert(w.end(), weights.begin() + b * nc, weights.begin() + (b + 1) * nc);
        return w;
    };
    for (std::size_t r = 0; naz >= 2 && r < nel; ++r) {
        std::vector<std::size_t> row(naz);
        for (std::size_t c = 0; c < naz; ++c)
            row[c] = r * naz + c;
        const std::vector<double> angles(beams.azimuths_deg.begin(),
                                         beams.azimuths_deg.begin() + naz);
        d_rows.emplace_back(elements, wavelength_m, rows_of(row), angles);
    }
    for (std::size_t r = 1; r < nel; ++r)
        if (!(beams.elevations_deg[r * naz] > beams.elevations_deg[(r - 1) * naz]))
            detail::throw_invalid(stage,
                                  "beam_elevations_deg",
                                  "rows in strictly increasing elevation",
                                  beams.elevations_deg[r * naz]);
    for (std::size_t c = 0; nel >= 2 && c < naz; ++c) {
        std::vector<std::size_t> column(nel);
        std::vector<double> angles(nel);
        for (std::size_t r = 0; r < nel; ++r) {
            column[r] = r * naz + c;
            angles[r] = beams.elevations_deg[r * naz];
        }
        d_columns.emplace_back(
            elements, wavelength_m, rows_of(column), angles, scan_axis::elevation);
    }
}

double grid_monopulse::noise_gain(std::size_t b) const
{
    const std::size_t naz = d_shape.naz;
    return d_rows.empty() ? d_columns[b % naz].noise_gain(b / naz)
                          : d_rows[b / naz].noise_gain(b % naz);
}

direction_estimate grid_monopulse::estimate_from_powers(const float* powers,
                                                        std::size_t noise_beam,
                                                        double beam_noise_power) const
{
    const std::size_t naz = d_shape.naz, nel = d_shape.nel, nb = nbeams();
    if (noise_beam >= nb)
        detail::throw_invalid(stage, "noise_beam", "< nbeams", noise_beam);
    std::size_t s = 0;
    for (std::size_t b = 1; b < nb; ++b)
        if (powers[b] > powers[s])
            s = b;
    const std::size_t r = s / naz, c = s % naz;
    // The noise of a beam of the row / column: the given beam's when it lies there
    // (the 1-D estimate's own numbers), else scaled by the beams' noise gains.
    const double sigma2 = beam_noise_power / noise_gain(noise_beam);
    const auto noise_in = [&](std::size_t b, std::size_t local) {
        return std::pair<std::size_t, double>{ local,
                                               b == noise_beam ? beam_noise_power
                                                               : sigma2 * noise_gain(b) };
    };
    std::vector<float> column(nel);
    for (std::size_t i = 0; i < nel; ++i)
        column[i] = powers[i * naz + c];
    const bool row_has_noise_beam = noise_beam / naz == r;
    const bool column_has_noise_beam = noise_beam % naz == c;
    const auto row_noise =
        row_has_noise_beam ? noise_in(noise_beam, noise_beam % naz) : noise_in(s, c);
    const auto column_noise =
        column_has_noise_beam ? noise_in(noise_beam, noise_beam / naz) : noise_in(s, r);
    direction_estimate e;
    double az = d_beams.azimuths_deg[s], el = d_beams.elevations_deg[s];
    // Alternating cuts: each pass shrinks the other angle's error by the axes' coupling
    // (of the order of sin(az) sin(el)), so a few passes reach the fixed point.
    const int passes = d_rows.empty() || d_columns.empty() ? 1 : max_passes;
    for (int pass = 0; pass < passes; ++pass) {
        const double last_az = az, last_el = el;
        if (!d_rows.empty()) {
            e.azimuth = d_rows[r].estimate_from_powers(
                powers + r * naz, row_noise.first, row_noise.second, el);
            az = e.azimuth.angle_deg;
        }
        if (!d_columns.empty()) {
            e.elevation = d_columns[c].estimate_from_powers(
                column.data(), column_noise.first, column_noise.second, az);
            el = e.elevation.angle_deg;
        }
        if (std::fabs(az - last_az) < converged_deg &&
            std::fabs(el - last_el) < converged_deg)
            break;
    }
    e.has_azimuth = !d_rows.empty();
    e.has_elevation = !d_columns.empty();
    e.azimuth.beam += r * naz;
    e.elevation.beam = e.elevation.beam * naz + c;
    return e;
}

} // namespace gpuradar::kernels
