/*
 * tracker: the assignment against brute force, OSPA, the Kalman filter against an fp64
 * reference, track management (M-of-N, coasting, deletion), bad input, and simulated
 * scenarios: crossing targets, a manoeuvre, Pd 0.8 with false alarms. Each scenario
 * checks that no target loses its track, that identities do not swap, that the range
 * error after 5 updates is below the measurement's, and reports OSPA.
 */
#include "invalid_argument_check.h"
#include <gpuradar/kernels/tracking/tracker.h>
#include <gtest/gtest.h>
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <numeric>
#include <random>

namespace gpuradar::test {
namespace {

using kernels::min_cost_assignment;
using kernels::ospa_distance;
using kernels::track;
using kernels::track_measurement;
using kernels::track_status;
using kernels::tracker;
using kernels::tracker_params;

TEST(TrackerAssignment, test_001_matches_brute_force)
{
    std::mt19937 rng(5);
    std::uniform_real_distribution<double> u(0, 10);
    for (std::size_t rows = 1; rows <= 5; ++rows)
        for (std::size_t cols = 1; cols <= 5; ++cols)
            for (int trial = 0; trial < 20; ++trial) {
                std::vector<double> cost(rows * cols);
                for (auto& c : cost)
                    c = u(rng) < 2 ? 1e9 : u(rng); // some pairs forbidden
                const auto got = min_cost_assignment(cost, rows, cols, 1e8);
                // Brute force: every injective map of the smaller side, forbidden pairs
                // left out (unassigned), the largest number of allowed pairs first, then
                // the least cost.
                std::vector<std::size_t> perm(std::max(rows, cols));
                std::iota(perm.begin(), perm.end(), std::size_t{ 0 });
                std::pair<long, double> best{ -1, 0 };
                do {
                    long n = 0;
                    double s = 0;
                    for (std::size_t i = 0; i < rows; ++i)
                        if (perm[i] < cols && cost[i * cols + perm[i]] < 1e8) {
                            ++n;
                            s += cost[i * cols + perm[i]];
                        }
                    if (n > best.first || (n == best.first && s < best.second - 1e-12))
                        best = { n, s };
                } while (std::next_permutation(perm.begin(), perm.end()));
                long n = 0;
                double s = 0;
                std::vector<bool> used(cols, false);
                for (std::size_t i = 0; i < rows; ++i)
                    if (got[i] >= 0) {
                        ASSERT_LT(std::size_t(got[i]), cols);
                        ASSERT_FALSE(used[std::size_t(got[i])]);
                        used[std::size_t(got[i])] = true;
                        ASSERT_LT(cost[i * cols + std::size_t(got[i])], 1e8);
                        ++n;
                        s += cost[i * cols + std::size_t(got[i])];
                    }
                EXPECT_EQ(n, best.first) << rows << "x" << cols << " trial " << trial;
                EXPECT_NEAR(s, best.second, 1e-9) << rows << "x" << cols;
            }
}

TEST(TrackerAssignment, test_002_ospa_known_values)
{
    using pts = std::vector<std::array<double, 2>>;
    EXPECT_EQ(ospa_distance({}, {}, 10, 2), 0.0);
    EXPECT_EQ(ospa_distance(pts{ { 1, 1 } }, {}, 10, 2), 10.0);
    EXPECT_NEAR(ospa_distance(pts{ { 0, 0 } }, pts{ { 3, 4 } }, 10, 2), 5.0, 1e-12);
    // One matched at distance 3, one missing (cut-off 10): sqrt((9 + 100) / 2).
    EXPECT_NEAR(ospa_distance(pts{ { 0, 0 }, { 50, 0 } }, pts{ { 53, 0 } }, 10, 2),
                std::sqrt(109.0 / 2),
                1e-12);
    // Distances beyond c count as c.
    EXPECT_NEAR(ospa_distance(pts{ { 0, 0 } }, pts{ { 30, 0 } }, 10, 1), 10.0, 1e-12);
}

tracker_params base_params()
{
    tracker_params p;
    p.gate = 13.8; // chi-square, 2 dof, 99.9 %
    p.confirm_m = 3;
    p.confirm_n = 4;
    p.delete_misses = 6;
    p.range_sigma_m = 4.0;
    p.velocity_sigma_mps = 0.4;
    p.acceleration_sigma = 2.0;
    return p;
}

TEST(TrackerFilter, test_003_kalman_matches_fp64_reference)
{
    // One track, detections every 0.1 s: the state and covariance against a textbook
    // Kalman filter in long double.
    auto p = base_params();
    tracker trk(p);
    using ld = long double;
    ld x0 = 0, x1 = 0, p00 = 0, p01 = 0, p11 = 0;
    const ld r0 = ld(p.range_sigma_m) * p.range_sigma_m;
    const ld r1 = ld(p.velocity_sigma_mps) * p.velocity_sigma_mps;
    const ld q = ld(p.acceleration_sigma) * p.acceleration_sigma;
    std::mt19937 rng(9);
    std::normal_distribution<double> g;
    for (int k = 0; k < 30; ++k) {
        const double t = 0.1 * k;
        const track_measurement z{ 1000 - 30 * t + 4 * g(rng), 30 + 0.4 * g(rng) };
        trk.update(t, { z });
        if (k == 0) {
            x0 = z.range_m;
            x1 = -z.velocity_mps;
            p00 = r0;
            p01 = 0;
            p11 = r1;
        } else {
            const ld dt = 0.1;
            x0 += dt * x1;
            const ld a00 = p00 + 2 * dt * p01 + dt * dt * p11 + q * dt * dt * dt / 3;
            const ld a01 = p01 + dt * p11 + q * dt * dt / 2;
            const ld a11 = p11 + q * dt;
            const ld s00 = a00 + r0, s01 = a01, s11 = a11 + r1;
            const ld det = s00 * s11 - s01 * s01;
            const ld k00 = (a00 * s11 - a01 * s01) / det,
                     k01 = (a01 * s00 - a00 * s01) / det;
            const ld k10 = (a01 * s11 - a11 * s01) / det,
                     k11 = (a11 * s00 - a01 * s01) / det;
            const ld y0 = z.range_m - x0, y1 = -z.velocity_mps - x1;
            x0 += k00 * y0 + k01 * y1;
            x1 += k10 * y0 + k11 * y1;
            // P = (I - K) A (standard form; equal to Joseph's with the optimal gain)
            p00 = (1 - k00) * a00 - k01 * a01;
            p01 = (1 - k00) * a01 - k01 * a11;
            p11 = -k10 * a01 + (1 - k11) * a11;
        }
        ASSERT_EQ(trk.tracks().size(), 1u) << "scan " << k;
        const track& tr = trk.tracks()[0];
        EXPECT_NEAR(tr.x[0], double(x0), 1e-9 * 1000);
        EXPECT_NEAR(tr.x[1], double(x1), 1e-9 * 30);
        EXPECT_NEAR(tr.p[0], double(p00), 1e-9 * double(p00));
        EXPECT_NEAR(tr.p[1], double(p01), 1e-9 * std::abs(double(p01)) + 1e-15);
        EXPECT_EQ(tr.p[1], tr.p[2]);
        EXPECT_NEAR(tr.p[3], double(p11), 1e-9 * double(p11));
        EXPECT_NEAR(tr.velocity_mps(), -tr.x[1], 0);
        EXPECT_EQ(tr.time_s, t);
    }
}

TEST(TrackerManagement, test_004_m_of_n_coasting_and_deletion)
{
    auto p = base_params();
    p.confirm_m = 2;
    p.confirm_n = 3;
    p.delete_misses = 2;
    tracker trk(p);
    const track_measurement z{ 500, 0 };
    trk.update(0.0, { z });
    ASSERT_EQ(trk.tracks().size(), 1u);
    EXPECT_EQ(trk.tracks()[0].status, track_status::tentative);
    const auto id = trk.tracks()[0].id;
    trk.update(1.0, {}); // miss: 1 of 2 scans, M still reachable
    ASSERT_EQ(trk.tracks().size(), 1u);
    auto rep = trk.update(2.0, { z }); // 2 of 3: confirmed
    EXPECT_EQ(rep.confirmed, 1u);
    EXPECT_EQ(trk.tracks()[0].status, track_status::confirmed);
    trk.update(3.0, {});
    EXPECT_EQ(trk.tracks()[0].status, track_status::coasting);
    trk.update(4.0, { z });
    EXPECT_EQ(trk.tracks()[0].status, track_status::confirmed);
    EXPECT_EQ(trk.tracks()[0].id, id);
    trk.update(5.0, {});
    rep = trk.update(6.0, {}); // second consecutive miss: deleted
    EXPECT_TRUE(trk.tracks().empty());
    ASSERT_EQ(rep.deleted_ids.size(), 1u);
    EXPECT_EQ(rep.deleted_ids[0], id);

    // A tentative track that cannot reach M within N is deleted at once.
    p.confirm_m = 3;
    p.confirm_n = 3;
    p.delete_misses = 5;
    tracker t2(p);
    t2.update(0.0, { z });
    rep = t2.update(1.0, {});
    EXPECT_TRUE(t2.tracks().empty());
    EXPECT_EQ(rep.deleted, 1u);
}

TEST(TrackerManagement, test_005_bad_parameters_and_input_name_the_parameter)
{
    const auto with = [](const std::function<void(tracker_params&)>& edit) {
        return [edit] {
            auto p = base_params();
            edit(p);
            tracker t(p);
        };
    };
    const char* pre = "gpuradar::tracker";
    expect_invalid(with([](auto& p) { p.gate = 0; }), "gate", pre);
    expect_invalid(with([](auto& p) { p.gate = -1; }), "gate", pre);
    expect_invalid(with([](auto& p) { p.gate = NAN; }), "gate", pre);
    expect_invalid(with([](auto& p) { p.confirm_m = 0; }), "confirm_m", pre);
    expect_invalid(with([](auto& p) {
                       p.confirm_m = 5;
                       p.confirm_n = 4;
                   }),
                   "confirm_n",
                   pre);
    expect_invalid(with([](auto& p) { p.confirm_n = 33; }), "confirm_n", pre);
    expect_invalid(with([](auto& p) { p.delete_misses = 0; }), "delete_misses", pre);
    expect_invalid(with([](auto& p) { p.range_sigma_m = 0; }), "range_sigma_m", pre);
    expect_invalid(
        with([](auto& p) { p.velocity_sigma_mps = -1; }), "velocity_sigma_mps", pre);
    expect_invalid(
        with([](auto& p) { p.acceleration_sigma = -1; }), "acceleration_sigma", pre);
    expect_invalid(with([](auto& p) { p.max_tracks = 0; }), "max_tracks", pre);

    tracker t(base_params());
    t.update(1.0, { { 100, 1 } });
    const auto before = t.tracks()[0].x;
    expect_invalid([&] { t.update(1.0, { { 100, 1 } }); }, "time_s", pre);
    expect_invalid([&] { t.update(0.5, {}); }, "time_s", pre);
    expect_invalid([&] { t.update(NAN, {}); }, "time_s", pre);
    expect_invalid([&] { t.update(2.0, { { NAN, 1 } }); }, "detections", pre);
    ASSERT_EQ(t.tracks().size(), 1u); // nothing changed
    EXPECT_EQ(t.tracks()[0].x, before);
    EXPECT_EQ(t.last_time(), 1.0);
    t.update(2.0, { { 100, 1 } }); // and it goes on
    EXPECT_EQ(t.tracks()[0].hits, 2u);
}

// ---- Scenarios ----------------------------------------------------------------------

//! A resolution cell of the simulated radar, and measurement noise of a quarter cell.
constexpr double range_cell_m = 15.0, velocity_cell_mps = 1.5;
constexpr double scan_s = 0.05;

struct truth_target {
    std::function<double(double)> range;    //!< m at time t
    std::function<double(double)> velocity; //!< closing m/s at time t
};

struct scenario {
    std::vector<truth_target> targets;
    int scans = 200;
    double pd = 1.0;
    double false_alarms_per_scan = 0; //!< Poisson mean, uniform over the window below
    double range_lo = 0, range_hi = 3000, vel_lo = -50, vel_hi = 50;
    std::uint32_t seed = 1;
};

struct scenario_result {
    std::size_t lost = 0;  //!< targets whose track changed or vanished after confirming
    std::size_t swaps = 0; //!< scans where a target's nearest track was another's
    double rms_range_after5 = 0, rms_velocity_after5 = 0;
    double mean_ospa = 0;
    std::size_t false_confirmed = 0; //!< confirmed tracks never near a target
};

scenario_result run_scenario(const scenario& s, const tracker_params& p)
{
    tracker trk(p);
    std::mt19937 rng(s.seed);
    std::normal_distribution<double> g;
    std::uniform_real_distribution<double> u(0, 1);
    std::poisson_distribution<int> nfa(
        s.false_alarms_per_scan > 0 ? s.false_alarms_per_scan : 1e-9);
    const std::size_t nt = s.targets.size();
    std::vector<std::uint64_t> id_of(nt, 0); // the track that confirmed on the target
    std::vector<int> first_scan(nt, -1);
    scenario_result out;
    std::vector<bool> lost(nt, false);
    double se_r = 0, se_v = 0, ospa = 0;
    std::size_t n_err = 0;
    std::map<std::uint64_t, bool> near_truth;
    for (int k = 0; k < s.scans; ++k) {
        const double t = k * scan_s;
        std::vector<track_measurement> z;
        for (const auto& tg : s.targets)
            if (u(rng) < s.pd)
                z.push_back({ tg.range(t) + p.range_sigma_m * g(rng),
                              tg.velocity(t) + p.velocity_sigma_mps * g(rng) });
        for (int f = nfa(rng); f > 0; --f)
            z.push_back({ s.range_lo + (s.range_hi - s.range_lo) * u(rng),
                          s.vel_lo + (s.vel_hi - s.vel_lo) * u(rng) });
        std::shuffle(z.begin(), z.end(), rng);
        trk.update(t, z);

        std::vector<std::array<double, 2>> truth_pts, track_pts;
        for (std::size_t i = 0; i < nt; ++i)
            truth_pts.push_back({ s.targets[i].range(t), 0.0 });
        for (const auto& tr : trk.tracks()) {
            if (tr.status == track_status::tentative)
                continue;
            track_pts.push_back({ tr.x[0], 0.0 });
            bool near = false;
            for (std::size_t i = 0; i < nt; ++i)
                near |= std::abs(tr.x[0] - s.targets[i].range(t)) < 3 * range_cell_m &&
                        std::abs(tr.velocity_mps() - s.targets[i].velocity(t)) <
                            3 * velocity_cell_mps;
            near_truth[tr.id] = near_truth[tr.id] || near;
        }
        ospa += ospa_distance(truth_pts, track_pts, 2 * range_cell_m, 2);

        for (std::size_t i = 0; i < nt; ++i) {
            const double rt = s.targets[i].range(t), vt = s.targets[i].velocity(t);
            // The nearest confirmed / coasting track in normalised distance.
            const track* best = nullptr;
            double best_d = 1e300;
            for (const auto& tr : trk.tracks()) {
                if (tr.status == track_status::tentative)
                    continue;
                const double dr = (tr.x[0] - rt) / range_cell_m;
                const double dv = (tr.velocity_mps() - vt) / velocity_cell_mps;
                const double d = dr * dr + dv * dv;
                if (d < best_d) {
                    best_d = d;
                    best = &tr;
                }
            }
            if (id_of[i] == 0) {
                if (best && best_d < 1.0) {
                    id_of[i] = best->id;
                    first_scan[i] = k;
                }
                continue;
            }
            const track* mine = nullptr;
            for (const auto& tr : trk.tracks())
                if (tr.id == id_of[i])
                    mine = &tr;
            if (!mine) {
                lost[i] = true;
                continue;
            }
            if (best && best->id != id_of[i])
                ++out.swaps;
            if (mine->hits >= 5) {
                se_r += (mine->x[0] - rt) * (mine->x[0] - rt);
                se_v += (mine->velocity_mps() - vt) * (mine->velocity_mps() - vt);
                ++n_err;
            }
        }
    }
    for (std::size_t i = 0; i < nt; ++i)
        out.lost += (lost[i] || id_of[i] == 0) ? 1 : 0;
    for (const auto& [id, near] : near_truth)
        out.false_confirmed += near ? 0 : 1;
    out.rms_range_after5 = n_err ? std::sqrt(se_r / double(n_err)) : INFINITY;
    out.rms_velocity_after5 = n_err ? std::sqrt(se_v / double(n_err)) : INFINITY;
    out.mean_ospa = ospa / s.scans;
    return out;
}

void report(const char* name, const scenario_result& r, const tracker_params& p)
{
    std::printf("%s: lost %zu, swaps %zu, rms range %.2f m (sigma %.2f), rms velocity "
                "%.3f m/s (sigma %.3f), mean OSPA(c=%.0f m, p=2) %.2f m, false confirmed "
                "%zu\n",
                name,
                r.lost,
                r.swaps,
                r.rms_range_after5,
                p.range_sigma_m,
                r.rms_velocity_after5,
                p.velocity_sigma_mps,
                2 * range_cell_m,
                r.mean_ospa,
                r.false_confirmed);
    ::testing::Test::RecordProperty("mean_ospa_m", std::to_string(r.mean_ospa));
    ::testing::Test::RecordProperty("rms_range_m", std::to_string(r.rms_range_after5));
}

void expect_tracked(const scenario_result& r, const tracker_params& p)
{
    EXPECT_EQ(r.lost, 0u);
    EXPECT_EQ(r.swaps, 0u);
    EXPECT_LT(r.rms_range_after5, p.range_sigma_m);
    EXPECT_LT(r.rms_velocity_after5, p.velocity_sigma_mps);
}

truth_target constant_velocity(double r0, double v)
{
    return { [=](double t) { return r0 - v * t; }, [=](double) { return v; } };
}

TEST(TrackerScenario, test_010_crossing_targets_keep_their_identities)
{
    // Three targets cross in range at t = 5 s, three velocity cells apart pairwise.
    const double tc = 5.0, rc = 1500.0;
    scenario s;
    s.scans = 200; // 10 s
    for (double v : { -3 * velocity_cell_mps, 0.0, 3 * velocity_cell_mps })
        s.targets.push_back(constant_velocity(rc + v * tc, v));
    // Zero velocity is a parked target (range fixed): still a crossing in range.
    const auto p = base_params();
    const auto r = run_scenario(s, p);
    report("crossing", r, p);
    expect_tracked(r, p);
    EXPECT_EQ(r.false_confirmed, 0u);
}

TEST(TrackerScenario, test_011_manoeuvring_target_is_not_lost)
{
    // Closing at 30 m/s, then from t = 3 s to 5 s a 10 m/s^2 turn-away to -10 m/s.
    const auto v = [](double t) {
        return t < 3 ? 30.0 : (t < 5 ? 30.0 - 20.0 * (t - 3) : -10.0);
    };
    const auto r = [](double t) {
        // The integral of v: R = 2000 - int_0^t v.
        if (t < 3)
            return 2000 - 30 * t;
        if (t < 5)
            return 2000 - 90 - (30 * (t - 3) - 10 * (t - 3) * (t - 3));
        return 2000 - 90 - 20 + 10 * (t - 5);
    };
    scenario s;
    s.scans = 200;
    s.targets.push_back({ r, v });
    s.targets.push_back(constant_velocity(1000, 10)); // a bystander
    auto p = base_params();
    p.acceleration_sigma = 8.0; // the filter's model must allow the manoeuvre
    const auto res = run_scenario(s, p);
    report("manoeuvre", res, p);
    EXPECT_EQ(res.lost, 0u);
    EXPECT_EQ(res.swaps, 0u);
    EXPECT_LT(res.rms_range_after5, p.range_sigma_m);
}

TEST(TrackerScenario, test_012_missed_detections_and_false_alarms)
{
    scenario s;
    s.scans = 200;
    s.pd = 0.8;
    s.false_alarms_per_scan = 5;
    s.targets = { constant_velocity(500, 20),
                  constant_velocity(1200, -15),
                  constant_velocity(1800, 5),
                  constant_velocity(2600, 40) };
    s.seed = 12;
    const auto p = base_params();
    const auto r = run_scenario(s, p);
    report("pd0.8+fa", r, p);
    expect_tracked(r, p);
    // False alarms spread over 3 km x 100 m/s rarely line up M of N times in a gate.
    EXPECT_LE(r.false_confirmed, 2u);
}

TEST(TrackerAzimuth, test_013_gate_quantile_and_filter_match_fp64_reference)
{
    // The 99 % quantiles: 9.2103 at two degrees of freedom, 6.6349 at one.
    EXPECT_NEAR(kernels::chi2_1dof_matching_2dof(9.2103), 6.6349, 1e-3);
    EXPECT_NEAR(kernels::chi2_1dof_matching_2dof(5.9915), 3.8415, 1e-3); // 95 %
    // One track with azimuths every 0.1 s: its azimuth filter against a textbook
    // Kalman filter in long double (q from the acceleration across the line of sight).
    auto p = base_params();
    p.azimuth_rate_sigma_dps = 2.0;
    tracker trk(p);
    using ld = long double;
    const ld deg = 180.0L / 3.14159265358979323846L;
    ld a0 = 0, a1 = 0, p00 = 0, p01 = 0, p11 = 0;
    std::mt19937 rng(19);
    std::normal_distribution<double> g;
    for (int k = 0; k < 30; ++k) {
        const double t = 0.1 * k;
        track_measurement z{ 1000 - 30 * t + 4 * g(rng), 30 + 0.4 * g(rng) };
        z.azimuth_std_deg = 0.3 + 0.1 * (k % 3); // each detection its own accuracy
        z.azimuth_deg = 10 + 0.5 * t + z.azimuth_std_deg * g(rng);
        // The track's range at the previous scan sets the angular process noise.
        const ld range = trk.tracks().empty() ? 0 : trk.tracks()[0].x[0];
        trk.update(t, { z });
        const ld r = ld(z.azimuth_std_deg) * z.azimuth_std_deg;
        if (k == 0) {
            a0 = z.azimuth_deg;
            a1 = 0;
            p00 = r;
            p01 = 0;
            p11 = ld(p.azimuth_rate_sigma_dps) * p.azimuth_rate_sigma_dps;
        } else {
            const ld dt = 0.1;
            const ld cross = ld(p.acceleration_sigma) / range * deg;
            const ld q = cross * cross;
            a0 += dt * a1;
            const ld b00 = p00 + 2 * dt * p01 + dt * dt * p11 + q * dt * dt * dt / 3;
            const ld b01 = p01 + dt * p11 + q * dt * dt / 2;
            const ld b11 = p11 + q * dt;
            const ld s = b00 + r, k0 = b00 / s, k1 = b01 / s;
            const ld y = z.azimuth_deg - a0;
            a0 += k0 * y;
            a1 += k1 * y;
            p00 = (1 - k0) * b00;
            p01 = (1 - k0) * b01;
            p11 = b11 - k1 * b01;
        }
        ASSERT_EQ(trk.tracks().size(), 1u) << "scan " << k;
        const track& tr = trk.tracks()[0];
        ASSERT_TRUE(tr.has_azimuth);
        EXPECT_NEAR(tr.a[0], double(a0), 1e-9);
        EXPECT_NEAR(tr.a[1], double(a1), 1e-9);
        EXPECT_NEAR(tr.pa[0], double(p00), 1e-9 * double(p00));
        EXPECT_NEAR(tr.pa[1], double(p01), 1e-9 * std::abs(double(p01)) + 1e-15);
        EXPECT_EQ(tr.pa[1], tr.pa[2]);
        EXPECT_NEAR(tr.pa[3], double(p11), 1e-9 * double(p11));
    }
}

/*!
 * Two targets at one range and velocity, 8 degrees apart: range and velocity alone
 * cannot tell their detections apart (GNN pairs them arbitrarily), the azimuth does.
 * Each track keeps its target for 40 scans, its azimuth near the truth; a detection at
 * the right range and velocity but far off in azimuth does not update either track.
 */
/*!
 * Two targets at one range and velocity, at -4 and +4 degrees in one angle: 40 scans of
 * a detection of each (the angle given by `put(z, angle, std)`, with noise of
 * noise_scale x std), in varying order. From the second scan no track is born, and each
 * track (its angle read by `angle_of`) stays with its target, near it.
 */
template <class Put, class Get>
void expect_two_targets_kept_apart(
    tracker& trk, std::uint32_t seed, double noise_scale, Put put, Get angle_of)
{
    std::mt19937 rng(seed);
    std::normal_distribution<double> g;
    const double angle[2] = { -4.0, 4.0 }, sigma = 0.5;
    std::map<std::uint64_t, int> target_of;
    for (int k = 0; k < 40; ++k) {
        const double t = 0.1 * k;
        std::vector<track_measurement> zs;
        for (int i : { 1, 0 }) { // order varies nothing: one list per scan
            track_measurement z{ 2000 - 20 * t + g(rng), 20 + 0.5 * g(rng) };
            put(z, angle[i] + noise_scale * sigma * g(rng), sigma);
            zs.push_back(z);
        }
        if (k % 2)
            std::swap(zs[0], zs[1]);
        const auto rep = trk.update(t, zs);
        if (k == 0)
            continue;
        EXPECT_EQ(rep.born, 0u) << "scan " << k;
        ASSERT_EQ(trk.tracks().size(), 2u);
        for (const auto& tr : trk.tracks()) {
            const int nearest = angle_of(tr) > 0 ? 1 : 0;
            EXPECT_LT(std::abs(angle_of(tr) - angle[nearest]), 4 * sigma);
            const auto [it, fresh] = target_of.emplace(tr.id, nearest);
            EXPECT_EQ(it->second, nearest) << "track " << tr.id << " swapped";
        }
    }
}

TEST(TrackerAzimuth, test_014_azimuth_keeps_targets_at_one_range_apart)
{
    auto p = base_params();
    tracker trk(p);
    const double sigma = 0.5;
    expect_two_targets_kept_apart(
        trk,
        23,
        1.0,
        [](track_measurement& z, double a, double sd) {
            z.azimuth_deg = a;
            z.azimuth_std_deg = sd;
        },
        [](const track& t) { return t.azimuth_deg(); });
    // Right range and velocity, 30 degrees off: gated out in azimuth, a new track.
    track_measurement far{ 2000 - 20 * 4.0, 20 };
    far.azimuth_deg = 30;
    far.azimuth_std_deg = sigma;
    const auto rep = trk.update(4.0, { far });
    EXPECT_EQ(rep.assigned, 0u);
    EXPECT_EQ(rep.born, 1u);
    // Without an azimuth the same detection is gated by range and velocity alone.
    tracker plain(p);
    for (int k = 0; k < 3; ++k)
        plain.update(0.1 * k, { track_measurement{ 2000 - 2.0 * k, 20 } });
    track_measurement off{ 2000 - 6.0, 20 };
    EXPECT_EQ(plain.update(0.3, { off }).assigned, 1u);
}

TEST(TrackerAzimuth, test_015_bad_azimuths_name_the_parameter)
{
    const char* pre = "gpuradar::tracker";
    auto p = base_params();
    p.azimuth_rate_sigma_dps = 0;
    expect_invalid([&] { tracker t(p); }, "azimuth_rate_sigma_dps", pre);
    p.azimuth_rate_sigma_dps = NAN;
    expect_invalid([&] { tracker t(p); }, "azimuth_rate_sigma_dps", pre);
    tracker trk(base_params());
    for (auto [az, std] : { std::pair{ 95.0, 1.0 },
                            std::pair{ 10.0, 0.0 },
                            std::pair{ 10.0, double(NAN) },
                            std::pair{ double(INFINITY), 1.0 } }) {
        track_measurement z{ 1000, 10 };
        z.azimuth_deg = az;
        z.azimuth_std_deg = std;
        expect_invalid([&] { trk.update(1.0, { z }); }, "detections", pre);
    }
    EXPECT_TRUE(trk.tracks().empty());
}

/*!
 * Elevation: a third filter, the azimuth's (checked above against the fp64 reference)
 * on the elevations, so with equal azimuths and elevations the two states are equal.
 * Two targets at one range and velocity, 8 degrees apart in elevation (detections
 * without azimuths): the elevation alone keeps them apart; a detection far off in
 * elevation is gated out, and a bad elevation is refused.
 */
TEST(TrackerElevation, test_016_elevation_filters_gates_and_keeps_targets_apart)
{
    const auto p = base_params();
    tracker same(p);
    std::mt19937 rng(29);
    std::normal_distribution<double> g;
    for (int k = 0; k < 20; ++k) {
        track_measurement z{ 1500 - 3.0 * k + g(rng), 30 + 0.4 * g(rng) };
        z.azimuth_std_deg = z.elevation_std_deg = 0.4 + 0.1 * (k % 2);
        z.azimuth_deg = z.elevation_deg = -6 + 0.2 * k + 0.4 * g(rng);
        same.update(0.1 * k, { z });
        const track& tr = same.tracks().at(0);
        ASSERT_TRUE(tr.has_elevation);
        EXPECT_EQ(tr.e, tr.a);
        EXPECT_EQ(tr.pe, tr.pa);
        EXPECT_EQ(tr.elevation_deg(), tr.azimuth_deg());
    }

    tracker trk(p);
    const double sigma = 0.5;
    // Noise below the reported std: no detection misses its 99 % gate by chance, so
    // every birth after the first scan would be a real failure.
    expect_two_targets_kept_apart(
        trk,
        31,
        0.5,
        [](track_measurement& z, double e, double sd) {
            z.elevation_deg = e;
            z.elevation_std_deg = sd;
        },
        [](const track& t) { return t.elevation_deg(); });
    track_measurement far{ 2000 - 20 * 4.0, 20 };
    far.elevation_deg = 30;
    far.elevation_std_deg = sigma;
    const auto rep = trk.update(4.0, { far });
    EXPECT_EQ(rep.assigned, 0u);
    EXPECT_EQ(rep.born, 1u);

    for (auto [e, std] : { std::pair{ -95.0, 1.0 }, std::pair{ 10.0, -1.0 } }) {
        track_measurement z{ 1000, 10 };
        z.elevation_deg = e;
        z.elevation_std_deg = std;
        expect_invalid(
            [&] { trk.update(5.0, { z }); }, "an elevation", "gpuradar::tracker");
    }
}

} // namespace
} // namespace gpuradar::test
