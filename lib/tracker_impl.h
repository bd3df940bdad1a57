/* The tracker block: detections PDUs -> kernels::tracker -> tracks PDUs (internal). */
#ifndef INCLUDED_GPURADAR_TRACKER_IMPL_H
#define INCLUDED_GPURADAR_TRACKER_IMPL_H

#include "log_limiter.h"
#include <gnuradio/gpuradar/tracker.h>
#include <gpuradar/kernels/tracking/tracker.h>
#include <pmt/pmt.h>
#include <atomic>
#include <mutex>
#include <string>
#include <vector>

namespace gr {
namespace gpuradar {

//! One scan read from a detections PDU.
struct tracker_scan {
    double time_s = 0;
    bool has_cpi = false;
    std::uint64_t cpi = 0;
    //! The detections are bistatic (range the echo path minus the baseline, velocity its
    //! rate of closing): the metadata's `bistatic`, passed on to the tracks PDU so that
    //! displays label the axes so.
    bool bistatic = false;
    std::vector<::gpuradar::kernels::track_measurement> detections;
};

/*!
 * Reads a detections PDU: empty string and `scan` filled, or what is wrong with it.
 * scan_period_s > 0 gives the time as cpi x scan_period_s when there is no rx_time.
 */
std::string
read_tracker_scan(const pmt::pmt_t& msg, double scan_period_s, tracker_scan& scan);

//! The tracks PDU of one scan.
pmt::pmt_t tracks_pdu(const tracker_scan& scan,
                      const ::gpuradar::kernels::tracker_scan_report& report,
                      const std::vector<::gpuradar::kernels::track>& tracks,
                      std::uint64_t bad_messages);

class tracker_impl : public tracker
{
public:
    //! `tracker` is made (its parameters checked) before the block.
    tracker_impl(::gpuradar::kernels::tracker tracker, double scan_period_s);

    std::uint64_t bad_messages() const override { return d_bad; }
    std::uint64_t scans() const override { return d_scans; }
    std::uint64_t live_tracks() const override { return d_live; }

private:
    void handle(const pmt::pmt_t& msg);
    void reject(const std::string& why);

    ::gpuradar::kernels::tracker d_tracker;
    const double d_scan_period;
    std::atomic<std::uint64_t> d_bad{ 0 }, d_scans{ 0 }, d_live{ 0 };
    //! A stream of garbage logs a line per hundred bad messages, not one each.
    log_limiter d_bad_log;
};

} // namespace gpuradar
} // namespace gr

#endif
