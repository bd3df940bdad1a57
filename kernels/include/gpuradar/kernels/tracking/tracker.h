/* Multi-target tracking of detections in range and range rate: constant-velocity Kalman
 * filters, gating, global-nearest-neighbour assignment, M-of-N confirmation. */
#ifndef INCLUDED_GPURADAR_KERNELS_TRACKER_H
#define INCLUDED_GPURADAR_KERNELS_TRACKER_H

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace gpuradar::kernels {

//! Configuration of a tracker; every field is checked by tracker's constructor.
struct tracker_params {
    //! Gate on the squared Mahalanobis distance of a detection from a track's predicted
    //! measurement, > 0. Chi-square with 2 degrees of freedom: 9.21 keeps 99 % of a
    //! track's own detections.
    double gate = 9.21;
    int confirm_m = 3; //!< M of M-of-N: hits among the first N scans to confirm, >= 1
    int confirm_n = 5; //!< N of M-of-N, M <= N <= 32
    //! Consecutive misses that delete a track (tentative, confirmed or coasting), >= 1.
    int delete_misses = 3;
    double range_sigma_m = 1.0;      //!< measurement noise of range (m), > 0
    double velocity_sigma_mps = 0.5; //!< measurement noise of velocity (m/s), > 0
    double acceleration_sigma = 1.0; //!< white-acceleration process noise (m/s^2), >= 0
    std::size_t max_tracks = 10000;  //!< live tracks at most (new ones dropped), >= 1
    //! Standard deviation of a new track's azimuth rate (deg/s), > 0: how fast a target
    //! may cross the beams before its second detection with an azimuth. The elevation
    //! filter starts its rate with the same.
    double azimuth_rate_sigma_dps = 1.0;
};

//! One detection as the tracker sees it: range and radial velocity (closing positive,
//! the detections message's convention).
struct track_measurement {
    double range_m = 0;
    double velocity_mps = 0;
    //! Azimuth (degrees, in [-90, 90]) and its standard deviation (> 0), NaN when the
    //! detection has none (cfar_2d without angles).
    double azimuth_deg = NAN;
    double azimuth_std_deg = NAN;
    bool has_azimuth() const { return !std::isnan(azimuth_deg); }
    //! Elevation (degrees, in [-90, 90]) and its standard deviation (> 0), NaN when the
    //! detection has none (beams that span no elevations).
    double elevation_deg = NAN;
    double elevation_std_deg = NAN;
    bool has_elevation() const { return !std::isnan(elevation_deg); }
};

/*!
 * tentative: not yet confirmed (fewer than M hits in its first N scans);
 * confirmed: updated by a detection in the last scan; coasting: confirmed, missed in
 * the last scan (predicted only).
 */
enum class track_status { tentative, confirmed, coasting };
const char* to_string(track_status s);

/*!
 * One track. State x = (range m, range rate m/s): the range rate is minus the closing
 * velocity. P is the state covariance, row-major (P[1] = P[2]).
 */
struct track {
    std::uint64_t id = 0; //!< unique, from 1, in birth order
    std::array<double, 2> x{};
    std::array<double, 4> p{};
    track_status status = track_status::tentative;
    double time_s = 0;         //!< time of x and p (the last scan)
    std::uint32_t hits = 0;    //!< detections assigned so far
    std::uint32_t misses = 0;  //!< consecutive scans without one
    std::uint32_t scans = 0;   //!< scans since birth, the birth scan included
    std::uint32_t history = 0; //!< bit i: a hit i scans ago (newest in bit 0)
    double velocity_mps() const { return -x[1]; }
    //! Azimuth state (degrees, deg/s) and its covariance, from the first detection with
    //! an azimuth on; has_azimuth false before it.
    bool has_azimuth = false;
    std::array<double, 2> a{};
    std::array<double, 4> pa{};
    double azimuth_deg() const { return a[0]; }
    //! Elevation state (degrees, deg/s) and its covariance, as the azimuth's.
    bool has_elevation = false;
    std::array<double, 2> e{};
    std::array<double, 4> pe{};
    double elevation_deg() const { return e[0]; }
};

//! What one scan did (counts).
struct tracker_scan_report {
    std::size_t assigned = 0;  //!< detections that updated a track
    std::size_t born = 0;      //!< new tentative tracks
    std::size_t deleted = 0;   //!< tracks deleted
    std::size_t confirmed = 0; //!< tracks confirmed in this scan
    std::size_t dropped = 0;   //!< unassigned detections not started (max_tracks)
    std::vector<std::uint64_t> deleted_ids;
};

/*!
 * \brief Multi-target tracker over scans of detections (one scan per CPI).
 *
 * Each scan at time t (s, strictly after the previous scan):
 * 1. predict every track to t with a constant-velocity model, F = [1 dt; 0 1],
 *    Q = q [dt^3/3 dt^2/2; dt^2/2 dt], q = acceleration_sigma^2;
 * 2. gate: detection j may update track i when d2 = y' S^-1 y <= gate, y = z_j - H x_i,
 *    S = H P H' + R, H = I (z = (range, -velocity)), R = diag(range_sigma^2,
 *    velocity_sigma^2);
 * 3. assign: global nearest neighbour, one detection per track at most, the assignment
 *    of least total d2 among the gated pairs (Hungarian algorithm, run on each group of
 *    tracks and detections linked by gates, so its cubic cost stays small);
 * 4. update each assigned track (Kalman, Joseph form); every other track misses;
 * 5. status: a tentative track with M hits among its first N scans is confirmed; one
 *    that cannot reach M any more is deleted; a confirmed track that misses coasts, a
 *    coasting one that hits is confirmed again; any track with delete_misses
 *    consecutive misses is deleted;
 * 6. every unassigned detection starts a tentative track at its measurement (P = R).
 *
 * Azimuth (detections with azimuth_deg, e.g. cfar_2d with angles): a track gains a
 * second, independent constant-velocity filter in (azimuth, azimuth rate) from its first
 * such detection (azimuth rate 0 with standard deviation azimuth_rate_sigma_dps, the
 * azimuth with the detection's own standard deviation). Its process noise is the same
 * white acceleration seen across the line of sight, q = (acceleration_sigma / range)^2
 * in (rad/s^2)^2 (converted to degrees; the range of the previous scan, at least 1 m).
 * When both a track and a detection have an azimuth the pair must also pass the azimuth
 * gate, y^2 / S <= the chi-square quantile of one degree of freedom with `gate`'s
 * probability at two (99 % for 9.21: 6.63), and its assignment cost is the sum of both
 * squared distances; the update is a scalar Kalman update with the detection's
 * azimuth_std_deg. Detections without an azimuth update range and velocity only.
 * Elevation (detections with elevation_deg, beams on a planar array) is filtered, gated
 * and costed the same way, by a third independent filter in (elevation, elevation
 * rate).
 *
 * Cost per scan: O(T D) for the gates of T tracks and D detections, plus the
 * assignments of the linked groups (cubic in a group's size; groups are small unless
 * targets crowd within their gates).
 */
class tracker
{
public:
    using params = tracker_params;

    //! Throws std::invalid_argument "gpuradar::tracker: <param> must be ... (got ...)".
    explicit tracker(const params& p);

    /*!
     * One scan. Throws std::invalid_argument naming `time_s` when it is not finite or
     * not after the previous scan's, and `detections` when one is not finite (an
     * azimuth: outside [-90, 90] or without a finite standard deviation > 0); the
     * tracks are left as they were.
     */
    tracker_scan_report update(double time_s,
                               const std::vector<track_measurement>& detections);

    const std::vector<track>& tracks() const { return d_tracks; }
    const params& get_params() const { return d_params; }
    //! Time of the last scan; NaN before the first.
    double last_time() const { return d_time; }

private:
    void predict(double dt);
    tracker_scan_report manage(const std::vector<long>& assigned_det_of_track,
                               const std::vector<track_measurement>& z);

    const params d_params;
    std::vector<track> d_tracks;
    double d_time;
    std::uint64_t d_next_id = 1;
    //! The gate of each angle (chi-square, one degree of freedom) matching `gate`.
    double d_angle_gate = 0;
};

/*!
 * The chi-square quantile of one degree of freedom with the probability that `gate2`
 * has at two: g with erf(sqrt(g / 2)) = 1 - exp(-gate2 / 2).
 */
double chi2_1dof_matching_2dof(double gate2);

/*!
 * Minimum-cost assignment of rows to columns (Hungarian algorithm with potentials,
 * O(n^2 m) for n <= m): cost is n x m row-major; forbidden pairs carry
 * `forbidden`-or-more cost. Returns, per row, its column or -1 (no allowed column left).
 * Rows > columns are handled by solving the transpose.
 */
std::vector<long> min_cost_assignment(const std::vector<double>& cost,
                                      std::size_t rows,
                                      std::size_t cols,
                                      double forbidden);

/*!
 * OSPA distance (Schuhmacher, Vo & Vo 2008) between two point sets of equal dimension:
 * order p, cut-off c. 0 when both are empty, c when exactly one is.
 */
double ospa_distance(const std::vector<std::array<double, 2>>& a,
                     const std::vector<std::array<double, 2>>& b,
                     double c,
                     double p);

} // namespace gpuradar::kernels

#endif
