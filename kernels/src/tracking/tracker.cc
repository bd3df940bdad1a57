#include "common/param_check.h"
#include <gpuradar/kernels/tracking/tracker.h>
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace gpuradar::kernels {

namespace {
constexpr const char* stage = "tracker";

void check_params(const tracker_params& p)
{
    using detail::throw_invalid;
    if (!(p.gate > 0) || !std::isfinite(p.gate))
        throw_invalid(
            stage, "gate", "> 0 and finite (squared Mahalanobis distance)", p.gate);
    if (p.confirm_m < 1)
        throw_invalid(stage, "confirm_m", ">= 1", p.confirm_m);
    if (p.confirm_n < p.confirm_m || p.confirm_n > 32)
        throw_invalid(stage,
                      "confirm_n",
                      "in [confirm_m, 32] = [" + std::to_string(p.confirm_m) + ", 32]",
                      p.confirm_n);
    if (p.delete_misses < 1)
        throw_invalid(stage, "delete_misses", ">= 1", p.delete_misses);
    if (!(p.range_sigma_m > 0) || !std::isfinite(p.range_sigma_m))
        throw_invalid(stage, "range_sigma_m", "> 0 and finite (m)", p.range_sigma_m);
    if (!(p.velocity_sigma_mps > 0) || !std::isfinite(p.velocity_sigma_mps))
        throw_invalid(
            stage, "velocity_sigma_mps", "> 0 and finite (m/s)", p.velocity_sigma_mps);
    if (!(p.acceleration_sigma >= 0) || !std::isfinite(p.acceleration_sigma))
        throw_invalid(
            stage, "acceleration_sigma", ">= 0 and finite (m/s^2)", p.acceleration_sigma);
    if (p.max_tracks < 1)
        throw_invalid(stage, "max_tracks", ">= 1", p.max_tracks);
    if (!(p.azimuth_rate_sigma_dps > 0) || !std::isfinite(p.azimuth_rate_sigma_dps))
        throw_invalid(stage,
                      "azimuth_rate_sigma_dps",
                      "> 0 and finite (deg/s)",
                      p.azimuth_rate_sigma_dps);
}

constexpr double deg_per_rad = 180.0 / 3.14159265358979323846;

//! Constant-velocity prediction of (x, P) over dt with white-acceleration density q.
void cv_predict(std::array<double, 2>& x, std::array<double, 4>& p, double dt, double q)
{
    const double q00 = q * dt * dt * dt / 3, q01 = q * dt * dt / 2, q11 = q * dt;
    x[0] += dt * x[1];
    // F P F' + Q, F = [1 dt; 0 1]
    const double p00 = p[0] + 2 * dt * p[1] + dt * dt * p[3];
    const double p01 = p[1] + dt * p[3];
    p = { p00 + q00, p01 + q01, p01 + q01, p[3] + q11 };
}

//! One of a track's angle filters (azimuth or elevation): (angle deg, rate deg/s).
struct angle_filter {
    bool& active;
    std::array<double, 2>& x;
    std::array<double, 4>& p;
};
//! One of a detection's angles and its standard deviation (NaN: none).
struct angle_measurement {
    double deg, std_deg;
    bool present() const { return !std::isnan(deg); }
};

angle_filter azimuth_of(track& t) { return { t.has_azimuth, t.a, t.pa }; }
angle_filter elevation_of(track& t) { return { t.has_elevation, t.e, t.pe }; }
angle_measurement azimuth_of(const track_measurement& z)
{
    return { z.azimuth_deg, z.azimuth_std_deg };
}
angle_measurement elevation_of(const track_measurement& z)
{
    return { z.elevation_deg, z.elevation_std_deg };
}

//! Squared angle distance of a detection from a track's filter (both present).
double angle_distance2(const angle_filter& f, const angle_measurement& z)
{
    const double y = z.deg - f.x[0];
    return y * y / (f.p[0] + z.std_deg * z.std_deg);
}

//! Scalar Kalman update of an angle filter (H = [1 0]), Joseph form.
void angle_update(const angle_filter& f, const angle_measurement& z)
{
    const double r = z.std_deg * z.std_deg;
    const double s = f.p[0] + r;
    const double k0 = f.p[0] / s, k1 = f.p[2] / s;
    const double y = z.deg - f.x[0];
    f.x[0] += k0 * y;
    f.x[1] += k1 * y;
    // P = (I - K H) P (I - K H)' + K r K'
    const double a00 = 1 - k0, a10 = -k1;
    const double p00 = f.p[0], p01 = f.p[1], p11 = f.p[3];
    const double n00 = a00 * a00 * p00 + k0 * k0 * r;
    const double n01 = a00 * (a10 * p00 + p01) + k0 * k1 * r;
    const double n11 = a10 * a10 * p00 + 2 * a10 * p01 + p11 + k1 * k1 * r;
    f.p = { n00, n01, n01, n11 };
}

//! The detection's angle into the track's filter: update, or start it (rate 0 with
//! standard deviation rate_sigma).
void angle_measure(const angle_filter& f, const angle_measurement& z, double rate_sigma)
{
    if (!z.present())
        return;
    if (f.active) {
        angle_update(f, z);
        return;
    }
    f.active = true;
    f.x = { z.deg, 0.0 };
    f.p = { z.std_deg * z.std_deg, 0, 0, rate_sigma * rate_sigma };
}

//! Both angles of a detection into a track.
void angles_measure(track& t, const track_measurement& z, double rate_sigma)
{
    angle_measure(azimuth_of(t), azimuth_of(z), rate_sigma);
    angle_measure(elevation_of(t), elevation_of(z), rate_sigma);
}

bool bad_angle(const angle_measurement& z)
{
    return z.present() &&
           (!(std::abs(z.deg) <= 90.0) || !(z.std_deg > 0) || !std::isfinite(z.std_deg));
}

/*!
 * The angles' part of a pair's cost: for each angle both have, its squared distance,
 * which must pass `gate`; false when one fails.
 */
bool angles_gate(track& t, const track_measurement& z, double gate, double& d2)
{
    const std::pair<angle_filter, angle_measurement> angles[] = {
        { azimuth_of(t), azimuth_of(z) }, { elevation_of(t), elevation_of(z) }
    };
    for (const auto& [f, m] : angles) {
        if (!f.active || !m.present())
            continue;
        const double d2a = angle_distance2(f, m);
        if (d2a > gate)
            return false;
        d2 += d2a;
    }
    return true;
}

//! Innovation y = z - x and its covariance S = P + R of a track (H = I).
struct innovation {
    double y0, y1;
    double s00, s01, s11;
    double det() const { return s00 * s11 - s01 * s01; }
    //! y' S^-1 y.
    double distance2() const
    {
        return (s11 * y0 * y0 - 2 * s01 * y0 * y1 + s00 * y1 * y1) / det();
    }
};

innovation innovation_of(const track& t, const track_measurement& z, double r0, double r1)
{
    return {
        z.range_m - t.x[0], -z.velocity_mps - t.x[1], t.p[0] + r0, t.p[1], t.p[3] + r1
    };
}

//! Kalman update with H = I, Joseph form (P stays symmetric positive definite).
void kalman_update(track& t, const innovation& v, double r0, double r1)
{
    const double d = v.det();
    // K = P S^-1
    const double i00 = v.s11 / d, i01 = -v.s01 / d, i11 = v.s00 / d;
    const double k00 = t.p[0] * i00 + t.p[1] * i01;
    const double k01 = t.p[0] * i01 + t.p[1] * i11;
    const double k10 = t.p[2] * i00 + t.p[3] * i01;
    const double k11 = t.p[2] * i01 + t.p[3] * i11;
    t.x[0] += k00 * v.y0 + k01 * v.y1;
    t.x[1] += k10 * v.y0 + k11 * v.y1;
    // P = (I-K) P (I-K)' + K R K'
    const double a00 = 1 - k00, a01 = -k01, a10 = -k10, a11 = 1 - k11;
    const double& p00 = t.p[0];
    const double& p01 = t.p[1];
    const double& p11 = t.p[3];
    const double b00 = a00 * p00 + a01 * p01, b01 = a00 * p01 + a01 * p11;
    const double b10 = a10 * p00 + a11 * p01, b11 = a10 * p01 + a11 * p11;
    const double n00 = b00 * a00 + b01 * a01 + k00 * k00 * r0 + k01 * k01 * r1;
    const double n01 = b00 * a10 + b01 * a11 + k00 * k10 * r0 + k01 * k11 * r1;
    const double n11 = b10 * a10 + b11 * a11 + k10 * k10 * r0 + k11 * k11 * r1;
    t.p = { n00, n01, n01, n11 };
}

//! Groups of tracks and detections linked by gates (union-find over T + D nodes).
struct linked_groups {
    std::vector<std::size_t> parent;
    explicit linked_groups(std::size_t n) : parent(n)
    {
        std::iota(parent.begin(), parent.end(), std::size_t{ 0 });
    }
    std::size_t find(std::size_t i)
    {
        while (parent[i] != i)
            i = parent[i] = parent[parent[i]];
        return i;
    }
    void join(std::size_t a, std::size_t b) { parent[find(a)] = find(b); }
};

struct gated_pair {
    std::size_t track, det;
    double d2;
};

//! Hits among the last `n` scans of a history word.
int hits_in(std::uint32_t history, int n)
{
    const std::uint32_t mask = n >= 32 ? 0xffffffffu : ((1u << n) - 1u);
    return __builtin_popcount(history & mask);
}
} // namespace

const char* to_string(track_status s)
{
    switch (s) {
    case track_status::tentative:
        return "tentative";
    case track_status::confirmed:
        return "confirmed";
    case track_status::coasting:
        return "coasting";
    }
    return "?";
}

double chi2_1dof_matching_2dof(double gate2)
{
    const double prob = -std::expm1(-0.5 * gate2);
    double lo = 0, hi = gate2 + 1;
    for (int i = 0; i < 200; ++i) {
        const double mid = 0.5 * (lo + hi);
        (std::erf(std::sqrt(0.5 * mid)) < prob ? lo : hi) = mid;
    }
    return 0.5 * (lo + hi);
}

tracker::tracker(const params& p)
    : d_params((check_params(p), p)),
      d_time(std::numeric_limits<double>::quiet_NaN()),
      d_angle_gate(chi2_1dof_matching_2dof(p.gate))
{
}

void tracker::predict(double dt)
{
    const double q = d_params.acceleration_sigma * d_params.acceleration_sigma;
    for (auto& t : d_tracks) {
        // The same acceleration across the line of sight, as an angular one (deg/s^2);
        // the range floored at 1 m against a track through the origin.
        const double cross =
            d_params.acceleration_sigma / std::max(std::abs(t.x[0]), 1.0) * deg_per_rad;
        if (t.has_azimuth)
            cv_predict(t.a, t.pa, dt, cross * cross);
        if (t.has_elevation)
            cv_predict(t.e, t.pe, dt, cross * cross);
        cv_predict(t.x, t.p, dt, q);
    }
}

tracker_scan_report tracker::update(double time_s,
                                    const std::vector<track_measurement>& z)
{
    if (!std::isfinite(time_s))
        detail::throw_invalid(stage, "time_s", "finite (s)", time_s);
    if (!std::isnan(d_time) && !(time_s > d_time))
        detail::throw_invalid(stage,
                              "time_s",
                              "after the previous scan's " + std::to_string(d_time) +
                                  " s",
                              time_s);
    for (std::size_t j = 0; j < z.size(); ++j)
        if (!std::isfinite(z[j].range_m) || !std::isfinite(z[j].velocity_mps))
            detail::throw_invalid(stage,
                                  "detections",
                                  "finite in range_m and velocity_mps (detection " +
                                      std::to_string(j) + ")",
                                  std::to_string(z[j].range_m) + ", " +
                                      std::to_string(z[j].velocity_mps));
    for (std::size_t j = 0; j < z.size(); ++j)
        for (const auto& [m, name] : { std::pair{ azimuth_of(z[j]), "an azimuth" },
                                       std::pair{ elevation_of(z[j]), "an elevation" } })
            if (bad_angle(m))
                detail::throw_invalid(stage,
                                      "detections",
                                      std::string(name) +
                                          " in [-90, 90] deg with a standard "
                                          "deviation > 0 (detection " +
                                          std::to_string(j) + ")",
                                      std::to_string(m.deg) + ", " +
                                          std::to_string(m.std_deg));
    if (!std::isnan(d_time))
        predict(time_s - d_time);
    d_time = time_s;

    const double r0 = d_params.range_sigma_m * d_params.range_sigma_m;
    const double r1 = d_params.velocity_sigma_mps * d_params.velocity_sigma_mps;
    const std::size_t nt = d_tracks.size(), nd = z.size();

    // Gates.
    std::vector<gated_pair> pairs;
    linked_groups groups(nt + nd);
    for (std::size_t i = 0; i < nt; ++i) {
        // A cheap range bound first: |y0| <= sqrt(gate * S00) is necessary for the gate.
        const double s00 = d_tracks[i].p[0] + r0;
        const double reach = std::sqrt(d_params.gate * s00);
        for (std::size_t j = 0; j < nd; ++j) {
            if (std::abs(z[j].range_m - d_tracks[i].x[0]) > reach)
                continue;
            double d2 = innovation_of(d_tracks[i], z[j], r0, r1).distance2();
            if (d2 > d_params.gate)
                continue;
            // Each angle both have: its own gate, and its distance in the cost.
            if (!angles_gate(d_tracks[i], z[j], d_angle_gate, d2))
                continue;
            pairs.push_back({ i, j, d2 });
            groups.join(i, nt + j);
        }
    }

    // Assignment, group by group.
    std::vector<long> det_of_track(nt, -1);
    std::sort(pairs.begin(), pairs.end(), [&](const gated_pair& a, const gated_pair& b) {
        return groups.find(a.track) < groups.find(b.track);
    });
    for (std::size_t g0 = 0; g0 < pairs.size();) {
        const std::size_t root = groups.find(pairs[g0].track);
        std::size_t g1 = g0;
        while (g1 < pairs.size() && groups.find(pairs[g1].track) == root)
            ++g1;
        std::vector<std::size_t> ts, ds;
        for (std::size_t k = g0; k < g1; ++k) {
            ts.push_back(pairs[k].track);
            ds.push_back(pairs[k].det);
        }
        std::sort(ts.begin(), ts.end());
        ts.erase(std::unique(ts.begin(), ts.end()), ts.end());
        std::sort(ds.begin(), ds.end());
        ds.erase(std::unique(ds.begin(), ds.end()), ds.end());
        const double forbidden = 1e6 * (d_params.gate + 1.0);
        std::vector<double> cost(ts.size() * ds.size(), 2 * forbidden);
        for (std::size_t k = g0; k < g1; ++k) {
            const std::size_t a =
                std::lower_bound(ts.begin(), ts.end(), pairs[k].track) - ts.begin();
            const std::size_t b =
                std::lower_bound(ds.begin(), ds.end(), pairs[k].det) - ds.begin();
            cost[a * ds.size() + b] = pairs[k].d2;
        }
        const auto col = min_cost_assignment(cost, ts.size(), ds.size(), forbidden);
        for (std::size_t a = 0; a < ts.size(); ++a)
            if (col[a] >= 0)
                det_of_track[ts[a]] = long(ds[std::size_t(col[a])]);
        g0 = g1;
    }

    for (std::size_t i = 0; i < nt; ++i)
        if (det_of_track[i] >= 0) {
            const auto& zi = z[std::size_t(det_of_track[i])];
            kalman_update(d_tracks[i], innovation_of(d_tracks[i], zi, r0, r1), r0, r1);
            angles_measure(d_tracks[i], zi, d_params.azimuth_rate_sigma_dps);
        }
    return manage(det_of_track, z);
}

tracker_scan_report tracker::manage(const std::vector<long>& det_of_track,
                                    const std::vector<track_measurement>& z)
{
    const tracker_params& p = d_params;
    tracker_scan_report rep;
    std::vector<bool> used(z.size(), false);
    std::vector<track> kept;
    kept.reserve(d_tracks.size() + z.size());
    for (std::size_t i = 0; i < d_tracks.size(); ++i) {
        track t = d_tracks[i];
        const bool hit = det_of_track[i] >= 0;
        t.time_s = d_time;
        ++t.scans;
        t.history = (t.history << 1) | (hit ? 1u : 0u);
        if (hit) {
            used[std::size_t(det_of_track[i])] = true;
            ++rep.assigned;
            ++t.hits;
            t.misses = 0;
        } else {
            ++t.misses;
        }
        bool keep = int(t.misses) < p.delete_misses;
        if (t.status == track_status::tentative) {
            const int have = hits_in(t.history, std::min<int>(t.scans, p.confirm_n));
            const int left = p.confirm_n - int(t.scans); // scans left in the first N
            if (have >= p.confirm_m) {
                t.status = track_status::confirmed;
                ++rep.confirmed;
            } else if (have + std::max(left, 0) < p.confirm_m) {
                keep = false; // M hits are out of reach
            }
        } else {
            t.status = hit ? track_status::confirmed : track_status::coasting;
        }
        if (keep) {
            kept.push_back(t);
        } else {
            ++rep.deleted;
            rep.deleted_ids.push_back(t.id);
        }
    }
    const double r0 = p.range_sigma_m * p.range_sigma_m;
    const double r1 = p.velocity_sigma_mps * p.velocity_sigma_mps;
    for (std::size_t j = 0; j < z.size(); ++j) {
        if (used[j])
            continue;
        if (kept.size() >= p.max_tracks) {
            ++rep.dropped;
            continue;
        }
        track t;
        t.id = d_next_id++;
        t.x = { z[j].range_m, -z[j].velocity_mps };
        t.p = { r0, 0, 0, r1 };
        angles_measure(t, z[j], p.azimuth_rate_sigma_dps);
        t.time_s = d_time;
        t.hits = 1;
        t.scans = 1;
        t.history = 1;
        if (p.confirm_m == 1) {
            t.status = track_status::confirmed;
            ++rep.confirmed;
        }
        kept.push_back(t);
        ++rep.born;
    }
    d_tracks = std::move(kept);
    return rep;
}

std::vector<long> min_cost_assignment(const std::vector<double>& cost,
                                      std::size_t rows,
                                      std::size_t cols,
                                      double forbidden)
{
    if (rows == 0 || cols == 0)
        return std::vector<long>(rows, -1);
    if (rows > cols) {
        std::vector<double> t(cost.size());
        for (std::size_t i = 0; i < rows; ++i)
            for (std::size_t j = 0; j < cols; ++j)
                t[j * rows + i] = cost[i * cols + j];
        const auto row_of_col = min_cost_assignment(t, cols, rows, forbidden);
        std::vector<long> out(rows, -1);
        for (std::size_t j = 0; j < cols; ++j)
            if (row_of_col[j] >= 0)
                out[std::size_t(row_of_col[j])] = long(j);
        return out;
    }
    // Shortest augmenting paths with row and column potentials u, v (1-based; column 0
    // is the virtual start). way[j]: the previous column on the path to column j.
    const double inf = std::numeric_limits<double>::infinity();
    const std::size_t n = rows, m = cols;
    std::vector<double> u(n + 1, 0), v(m + 1, 0);
    std::vector<std::size_t> row_of(m + 1, 0), way(m + 1, 0);
    std::vector<double> minv(m + 1);
    std::vector<bool> done(m + 1);
    for (std::size_t i = 1; i <= n; ++i) {
        row_of[0] = i;
        std::size_t j0 = 0;
        std::fill(minv.begin(), minv.end(), inf);
        std::fill(done.begin(), done.end(), false);
        do {
            done[j0] = true;
            const std::size_t i0 = row_of[j0];
            double delta = inf;
            std::size_t j1 = 0;
            for (std::size_t j = 1; j <= m; ++j) {
                if (done[j])
                    continue;
                const double cur = cost[(i0 - 1) * m + (j - 1)] - u[i0] - v[j];
                if (cur < minv[j]) {
                    minv[j] = cur;
                    way[j] = j0;
                }
                if (minv[j] < delta) {
                    delta = minv[j];
                    j1 = j;
                }
            }
            for (std::size_t j = 0; j <= m; ++j) {
                if (done[j]) {
                    u[row_of[j]] += delta;
                    v[j] -= delta;
                } else {
                    minv[j] -= delta;
                }
            }
            j0 = j1;
        } while (row_of[j0] != 0);
        do {
            const std::size_t j1 = way[j0];
            row_of[j0] = row_of[j1];
            j0 = j1;
        } while (j0 != 0);
    }
    std::vector<long> out(n, -1);
    for (std::size_t j = 1; j <= m; ++j)
        if (row_of[j] != 0 && cost[(row_of[j] - 1) * m + (j - 1)] < forbidden)
            out[row_of[j] - 1] = long(j - 1);
    return out;
}

double ospa_distance(const std::vector<std::array<double, 2>>& a,
                     const std::vector<std::array<double, 2>>& b,
                     double c,
                     double p)
{
    if (a.empty() && b.empty())
        return 0.0;
    if (a.empty() || b.empty())
        return c;
    const auto& small = a.size() <= b.size() ? a : b;
    const auto& large = a.size() <= b.size() ? b : a;
    const std::size_t m = small.size(), n = large.size();
    std::vector<double> cost(m * n);
    for (std::size_t i = 0; i < m; ++i)
        for (std::size_t j = 0; j < n; ++j) {
            const double d =
                std::hypot(small[i][0] - large[j][0], small[i][1] - large[j][1]);
            cost[i * n + j] = std::pow(std::min(d, c), p);
        }
    const auto col = min_cost_assignment(cost, m, n, std::numeric_limits<double>::max());
    double sum = 0;
    for (std::size_t i = 0; i < m; ++i)
        sum += cost[i * n + std::size_t(col[i])];
    sum += std::pow(c, p) * double(n - m);
    return std::pow(sum / double(n), 1.0 / p);
}

} // namespace gpuradar::kernels
