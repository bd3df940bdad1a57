/* The detections PDU of the CFAR blocks and their CPI framing from tags (internal). */
#ifndef INCLUDED_GPURADAR_CFAR_DETECTIONS_H
#define INCLUDED_GPURADAR_CFAR_DETECTIONS_H

#include <gnuradio/tags.h>
#include <gpuradar/kernels/cfar_common.h>
#include <pmt/pmt.h>
#include <cstdint>
#include <string>
#include <vector>

namespace gr {
namespace gpuradar {

namespace kernels = ::gpuradar::kernels;

//! The message port, "detections".
pmt::pmt_t detections_port();

//! Speed of light in vacuum, m/s (DESIGN.md conventions).
constexpr double speed_of_light = 299792458.0;

//! Double field of a cpi dict (PMT real or integer), or `fallback` when absent.
double cpi_double(const pmt::pmt_t& dict, const char* key, double fallback);
//! True when the cpi dict holds `key`.
bool cpi_has(const pmt::pmt_t& dict, const char* key);

/*!
 * What a CPI's `cpi` tag says about the axes of its map (docs/CONVENTIONS.md): range of
 * a bin when the tag has fs, velocity of a Doppler bin when it has prf, fc and ndoppler.
 */
struct cpi_axes {
    std::uint64_t index = 0;
    bool has_range = false;
    double r0 = 0;     //!< m, range of bin 0
    double bin_m = 0;  //!< m per range bin, c / (2 fs)
    bool has_velocity = false;
    double prf = 0, fc = 0;
    std::uint64_t ndoppler = 0;
    bool fftshift = false;
    pmt::pmt_t rx_time; //!< the tag's rx_time, or null

    double range_m(std::uint32_t bin) const { return r0 + bin * bin_m; }
    //! Velocity (m/s, positive closing) of Doppler bin m.
    double velocity_mps(std::uint32_t m) const;
};

//! Reads the axes from a cpi dict (nil or not a dict: no axes). `doppler_axis` false
//! (cfar_1d) never gives a velocity.
cpi_axes read_cpi_axes(const pmt::pmt_t& dict, std::uint64_t index, bool doppler_axis);

/*!
 * One detection as a PMT dict: range_bin, doppler_bin, channel, cpi (u64), item (u64,
 * when item >= 0), power, threshold, noise, snr_db, and range_m / velocity_mps / rx_time
 * where `axes` allows (see cfar_2d.h).
 */
pmt::pmt_t detection_dict(const kernels::cfar_detection& d,
                          const cpi_axes& axes,
                          std::uint64_t channel,
                          long item);

//! The PDU: (meta, vector of the detection dicts).
pmt::pmt_t detections_pdu(const pmt::pmt_t& meta, const std::vector<pmt::pmt_t>& dets);

/*!
 * The metadata dict of a PDU: the cpi dict's fields (when it is a dict) plus cpi,
 * channels, ndetections, found, overflow, nonfinite, alpha, variant.
 */
pmt::pmt_t detections_meta(const pmt::pmt_t& cpi_dict,
                           std::uint64_t index,
                           std::uint64_t channels,
                           const kernels::cfar_report& report,
                           std::uint64_t nonfinite,
                           double alpha,
                           kernels::cfar_variant variant);

//! The tags of one CPI-sized group of input items [start, start + n).
struct cpi_group_tags {
    pmt::pmt_t cpi;               //!< value of a cpi tag on item `start`, or null
    std::uint64_t cut = 0;        //!< > 0: a cpi tag `cut` items in: the group is cut short
    std::vector<gr::tag_t> other; //!< the other tags, in the group
};

//! Sorts `tags` (all within [start, start + n)) into a cpi_group_tags.
cpi_group_tags split_group_tags(const std::vector<gr::tag_t>& tags, std::uint64_t start);

} // namespace gpuradar
} // namespace gr

#endif
