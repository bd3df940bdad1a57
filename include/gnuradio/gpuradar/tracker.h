/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef INCLUDED_GPURADAR_TRACKER_H
#define INCLUDED_GPURADAR_TRACKER_H

#include <gnuradio/block.h>
#include <gnuradio/gpuradar/api.h>
#include <cstdint>

namespace gr {
namespace gpuradar {

/*!
 * \brief Multi-target tracker: detections messages in, tracks messages out.
 * \ingroup gpuradar
 *
 * Message port `detections` (in): the PDUs of cfar_2d (best with cluster = true, one
 * detection per target), one scan per PDU. Each detection must carry `range_m` and
 * `velocity_mps` (the CFAR adds them when the cpi tag has fs, prf, fc and ndoppler).
 * The scan's time is the metadata's `rx_time` (UHD tuple) when present, else `cpi` x
 * scan_period_s (scan_period_s > 0).
 *
 * Message port `tracks` (out): one PDU per scan, (metadata dict, vector of track dicts).
 * Metadata: time_s, cpi (when the scan had one), bistatic (true, when the detections'
 * metadata said so: a passive radar's bistatic range and velocity, tracked alike),
 * ntracks, assigned, born, confirmed,
 * deleted, deleted_ids (u64 vector), bad_messages (so far). Each track: id (u64), status
 * ("tentative", "confirmed", "coasting"), time_s, range_m, velocity_mps (radial
 * velocity, closing positive as on the maps: the track's only velocity field), state
 * (f64 vector: the filter's range m and range rate m/s, = -velocity_mps),
 * covariance (f64 vector, 2 x 2 row-major), hits, misses (consecutive), scans, and
 * once it has had a detection with an azimuth: azimuth_deg, azimuth_rate_dps,
 * azimuth_std_deg (with an elevation: elevation_deg, elevation_rate_dps,
 * elevation_std_deg).
 *
 * Azimuth: detections may carry `azimuth_deg` with `azimuth_std_deg` (cfar_2d with
 * angles = true); a track then filters its azimuth too and gates on it (kernels/
 * tracker.h). The same for `elevation_deg` with `elevation_std_deg` (beams on a planar
 * array), in a filter of its own. A detection with one of an angle's two fields but not
 * the other is a bad message.
 *
 * Tracking (kernels::tracker): constant-velocity Kalman filter in range and range rate,
 * chi-square gate on the Mahalanobis distance, global-nearest-neighbour assignment
 * (Hungarian algorithm), M-of-N confirmation, coasting through misses, deletion after
 * delete_misses consecutive misses.
 *
 * Bad messages (not a detections PDU, a detection without range_m / velocity_mps, no
 * usable time, a time not after the last scan's, non-finite values) are logged,
 * counted (bad_messages()) and skipped; tracking goes on with the next message.
 */
class GPURADAR_API tracker : virtual public gr::block
{
public:
    typedef std::shared_ptr<tracker> sptr;

    /*!
     * \param gate               gate on the squared Mahalanobis distance (> 0; 9.21 keeps
     *                           99 % of a track's own detections)
     * \param confirm_m          M of M-of-N confirmation (>= 1)
     * \param confirm_n          N of M-of-N (M <= N <= 32)
     * \param delete_misses      consecutive misses that delete a track (>= 1)
     * \param range_sigma_m      range measurement noise (m, > 0)
     * \param velocity_sigma_mps velocity measurement noise (m/s, > 0)
     * \param acceleration_sigma white-acceleration process noise (m/s^2, >= 0)
     * \param scan_period_s      time between CPIs (s, >= 0) used when the detections
     *                           carry no rx_time; 0: rx_time required
     * \param max_tracks         most live tracks (>= 1); detections beyond start none
     * \param azimuth_rate_sigma_dps standard deviation of a new track's azimuth rate
     *                           (deg/s, > 0), used with detections that carry azimuths
     * Throws std::invalid_argument naming the parameter.
     */
    static sptr make(double gate = 9.21,
                     int confirm_m = 3,
                     int confirm_n = 5,
                     int delete_misses = 3,
                     double range_sigma_m = 5.0,
                     double velocity_sigma_mps = 0.5,
                     double acceleration_sigma = 5.0,
                     double scan_period_s = 0.0,
                     unsigned int max_tracks = 10000,
                     double azimuth_rate_sigma_dps = 1.0);

    //! Messages skipped (malformed or out of time order).
    virtual std::uint64_t bad_messages() const = 0;
    //! Scans processed.
    virtual std::uint64_t scans() const = 0;
    //! Live tracks after the last scan.
    virtual std::uint64_t live_tracks() const = 0;
};

} // namespace gpuradar
} // namespace gr

#endif
