/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "cfar_detections.h"
#include "cpi_tag.h"
#include "tracker_impl.h"
#include <gnuradio/io_signature.h>
#include <cmath>
#include <stdexcept>

namespace gr {
namespace gpuradar {

namespace kernels = ::gpuradar::kernels;

namespace {
constexpr const char* block_name = "tracker";

pmt::pmt_t key(const char* k) { return pmt::intern(k); }
pmt::pmt_t tracks_port()
{
    static const pmt::pmt_t port = pmt::intern("tracks");
    return port;
}

//! A number field of a detection dict, or false when absent / not a number.
bool number_field(const pmt::pmt_t& dict, const char* k, double& out)
{
    if (!pmt::is_dict(dict) || !cpi_has(dict, k))
        return false;
    const pmt::pmt_t v = pmt::dict_ref(dict, key(k), pmt::PMT_NIL);
    if (!pmt::is_number(v) || pmt::is_complex(v))
        return false;
    out = cpi_double(dict, k, NAN);
    return true;
}

pmt::pmt_t f64_vector(const double* v, std::size_t n)
{
    return pmt::init_f64vector(n, v);
}

//! d with <axis>_deg, <axis>_rate_dps and <axis>_std_deg of an angle filter.
pmt::pmt_t with_angle(pmt::pmt_t d,
                      const std::string& axis,
                      const std::array<double, 2>& x,
                      const std::array<double, 4>& p)
{
    d = pmt::dict_add(d, key((axis + "_deg").c_str()), pmt::from_double(x[0]));
    d = pmt::dict_add(d, key((axis + "_rate_dps").c_str()), pmt::from_double(x[1]));
    return pmt::dict_add(
        d, key((axis + "_std_deg").c_str()), pmt::from_double(std::sqrt(p[0])));
}

pmt::pmt_t track_dict(const kernels::track& t)
{
    pmt::pmt_t d = pmt::make_dict();
    d = pmt::dict_add(d, key("id"), pmt::from_uint64(t.id));
    d = pmt::dict_add(d, key("status"), pmt::intern(kernels::to_string(t.status)));
    d = pmt::dict_add(d, key("time_s"), pmt::from_double(t.time_s));
    d = pmt::dict_add(d, key("range_m"), pmt::from_double(t.x[0]));
    d = pmt::dict_add(d, key("velocity_mps"), pmt::from_double(t.velocity_mps()));
    d = pmt::dict_add(d, key("state"), f64_vector(t.x.data(), t.x.size()));
    d = pmt::dict_add(d, key("covariance"), f64_vector(t.p.data(), t.p.size()));
    d = pmt::dict_add(d, key("hits"), pmt::from_uint64(t.hits));
    d = pmt::dict_add(d, key("misses"), pmt::from_uint64(t.misses));
    d = pmt::dict_add(d, key("scans"), pmt::from_uint64(t.scans));
    if (t.has_azimuth)
        d = with_angle(d, "azimuth", t.a, t.pa);
    if (t.has_elevation)
        d = with_angle(d, "elevation", t.e, t.pe);
    return d;
}

/*!
 * A detection's optional angle (<axis>_deg with <axis>_std_deg, e.g. cfar_2d with
 * angles) into value / std; why not when malformed.
 */
std::string angle_field(const pmt::pmt_t& d,
                        std::size_t i,
                        const std::string& axis,
                        double& value,
                        double& std_deg)
{
    const bool has = number_field(d, (axis + "_deg").c_str(), value);
    const bool has_std = number_field(d, (axis + "_std_deg").c_str(), std_deg);
    if (has != has_std)
        return "detection " + std::to_string(i) + " has one of " + axis + "_deg and " +
               axis + "_std_deg without the other";
    if (has && std::isnan(value))
        return "detection " + std::to_string(i) + " has a NaN " + axis + "_deg";
    return {};
}
} // namespace

std::string
read_tracker_scan(const pmt::pmt_t& msg, double scan_period_s, tracker_scan& scan)
{
    if (!pmt::is_pair(msg) || !pmt::is_dict(pmt::car(msg)) ||
        !pmt::is_vector(pmt::cdr(msg)))
        return "not a detections PDU (pair of a metadata dict and a vector)";
    const pmt::pmt_t meta = pmt::car(msg);
    const pmt::pmt_t dets = pmt::cdr(msg);
    scan = tracker_scan{};
    scan.has_cpi = cpi_has(meta, "cpi");
    scan.cpi = cpi_field(meta, "cpi", 0);
    const pmt::pmt_t bistatic = pmt::dict_ref(meta, key("bistatic"), pmt::PMT_F);
    scan.bistatic = pmt::is_bool(bistatic) && pmt::to_bool(bistatic);
    if (cpi_rx_time_seconds(meta, &scan.time_s)) {
        // the rx_time of the CPI
    } else if (scan_period_s > 0 && scan.has_cpi) {
        scan.time_s = double(scan.cpi) * scan_period_s;
    } else {
        return "no rx_time in the metadata (and scan_period_s = 0 or no cpi field): the "
               "scan has no time";
    }
    const std::size_t n = pmt::length(dets);
    scan.detections.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        const pmt::pmt_t d = pmt::vector_ref(dets, i);
        kernels::track_measurement z;
        if (!number_field(d, "range_m", z.range_m))
            return "detection " + std::to_string(i) + " has no range_m";
        if (!number_field(d, "velocity_mps", z.velocity_mps))
            return "detection " + std::to_string(i) + " has no velocity_mps";
        std::string problem =
            angle_field(d, i, "azimuth", z.azimuth_deg, z.azimuth_std_deg);
        if (problem.empty())
            problem =
                angle_field(d, i, "elevation", z.elevation_deg, z.elevation_std_deg);
        if (!problem.empty())
            return problem;
        scan.detections.push_back(z);
    }
    return {};
}

pmt::pmt_t tracks_pdu(const tracker_scan& scan,
                      const kernels::tracker_scan_report& report,
                      const std::vector<kernels::track>& tracks,
                      std::uint64_t bad_messages)
{
    pmt::pmt_t m = pmt::make_dict();
    m = pmt::dict_add(m, key("time_s"), pmt::from_double(scan.time_s));
    if (scan.has_cpi)
        m = pmt::dict_add(m, key("cpi"), pmt::from_uint64(scan.cpi));
    if (scan.bistatic)
        m = pmt::dict_add(m, key("bistatic"), pmt::PMT_T);
    m = pmt::dict_add(m, key("ntracks"), pmt::from_uint64(tracks.size()));
    m = pmt::dict_add(m, key("assigned"), pmt::from_uint64(report.assigned));
    m = pmt::dict_add(m, key("born"), pmt::from_uint64(report.born));
    m = pmt::dict_add(m, key("confirmed"), pmt::from_uint64(report.confirmed));
    m = pmt::dict_add(m, key("deleted"), pmt::from_uint64(report.deleted));
    m = pmt::dict_add(
        m,
        key("deleted_ids"),
        pmt::init_u64vector(report.deleted_ids.size(), report.deleted_ids.data()));
    m = pmt::dict_add(m, key("bad_messages"), pmt::from_uint64(bad_messages));
    std::vector<pmt::pmt_t> dicts;
    dicts.reserve(tracks.size());
    for (const auto& t : tracks)
        dicts.push_back(track_dict(t));
    return detections_pdu(m, dicts);
}

tracker::sptr tracker::make(double gate,
                            int confirm_m,
                            int confirm_n,
                            int delete_misses,
                            double range_sigma_m,
                            double velocity_sigma_mps,
                            double acceleration_sigma,
                            double scan_period_s,
                            unsigned int max_tracks,
                            double azimuth_rate_sigma_dps)
{
    if (!(scan_period_s >= 0) || !std::isfinite(scan_period_s))
        throw std::invalid_argument(
            "gpuradar::tracker: scan_period_s must be >= 0 and finite (s) (got " +
            std::to_string(scan_period_s) + ")");
    kernels::tracker_params p;
    p.gate = gate;
    p.confirm_m = confirm_m;
    p.confirm_n = confirm_n;
    p.delete_misses = delete_misses;
    p.range_sigma_m = range_sigma_m;
    p.velocity_sigma_mps = velocity_sigma_mps;
    p.acceleration_sigma = acceleration_sigma;
    p.max_tracks = max_tracks;
    p.azimuth_rate_sigma_dps = azimuth_rate_sigma_dps;
    kernels::tracker checked(p); // std::invalid_argument naming the parameter
    return gnuradio::make_block_sptr<tracker_impl>(std::move(checked), scan_period_s);
}

tracker_impl::tracker_impl(kernels::tracker tracker, double scan_period_s)
    : gr::block(
          block_name, gr::io_signature::make(0, 0, 0), gr::io_signature::make(0, 0, 0)),
      d_tracker(std::move(tracker)),
      d_scan_period(scan_period_s)
{
    message_port_register_in(detections_port());
    message_port_register_out(tracks_port());
    set_msg_handler(detections_port(), [this](const pmt::pmt_t& msg) { handle(msg); });
}

void tracker_impl::reject(const std::string& why)
{
    ++d_bad;
    if (!d_bad_log.count())
        return;
    d_logger->error("message skipped: {} ({} bad messages so far{})",
                    why,
                    d_bad.load(),
                    d_bad_log.quiet_note());
}

void tracker_impl::handle(const pmt::pmt_t& msg)
{
    tracker_scan scan;
    const std::string bad = read_tracker_scan(msg, d_scan_period, scan);
    if (!bad.empty()) {
        reject(bad);
        return;
    }
    kernels::tracker_scan_report report;
    try {
        report = d_tracker.update(scan.time_s, scan.detections);
    } catch (const std::invalid_argument& e) {
        reject(e.what()); // out of time order, non-finite values: the tracks are kept
        return;
    }
    ++d_scans;
    d_live = d_tracker.tracks().size();
    if (report.dropped)
        d_logger->warn("{} detections started no track: max_tracks reached",
                       report.dropped);
    message_port_pub(tracks_port(),
                     tracks_pdu(scan, report, d_tracker.tracks(), d_bad.load()));
}

} // namespace gpuradar
} // namespace gr
