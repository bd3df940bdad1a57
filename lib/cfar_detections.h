/* The detections PDU of the CFAR blocks and their CPI framing from tags (internal). */
#ifndef INCLUDED_GPURADAR_CFAR_DETECTIONS_H
#define INCLUDED_GPURADAR_CFAR_DETECTIONS_H

#include "cfar_angles.h"
#include "cpi_tag.h"
#include "log_limiter.h"
#include <gnuradio/io_signature.h>
#include <gnuradio/logger.h>
#include <gnuradio/tags.h>
#include <gpuradar/kernels/common/backend.h>
#include <gpuradar/kernels/common/constants.h>
#include <gpuradar/kernels/detection/cfar_common.h>
#include <pmt/pmt.h>
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace gr {
namespace gpuradar {

namespace kernels = ::gpuradar::kernels;

//! The message port, "detections".
pmt::pmt_t detections_port();

/*!
 * What a CPI's `cpi` tag says about the axes of its map (docs/CONVENTIONS.md): range of
 * a bin when the tag has fs, velocity of a Doppler bin when it has prf, fc and ndoppler.
 */
struct cpi_axes {
    std::uint64_t index = 0;
    bool has_range = false;
    double r0 = 0;    //!< m, range of bin 0
    double bin_m = 0; //!< m per range bin, c / (2 fs) (bistatic: c / fs)
    bool has_velocity = false;
    double prf = 0, fc = 0;
    //! Radar path per unit of range: 2 (monostatic, two-way) or 1 (bistatic range and
    //! velocity, from a cpi dict's `bistatic`: the echo path minus the baseline)
    double path = 2.0;
    std::uint64_t ndoppler = 0;
    bool fftshift = false;
    pmt::pmt_t rx_time; //!< the tag's rx_time, or null

    //! Range (m) of a range bin, fractional ones (interpolated peaks) too.
    double range_m(double bin) const { return r0 + bin * bin_m; }
    //! Velocity (m/s, positive closing) of Doppler bin m, fractional ones too.
    double velocity_mps(double m) const;
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

/*!
 * One merged detection (detection_clustering): detection_dict of its peak cell, with
 * range_m / velocity_mps at the interpolated peak, plus range_bin_interp,
 * doppler_bin_interp (fractional bins) and cells (detected cells merged).
 */
pmt::pmt_t clustered_detection_dict(const kernels::clustered_detection& c,
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
    pmt::pmt_t cpi;        //!< value of a cpi tag on item `start`, or null
    std::uint64_t cut = 0; //!< > 0: a cpi tag `cut` items in: the group is cut short
    std::vector<gr::tag_t> other; //!< the other tags, in the group
};

//! Sorts `tags` (all within [start, start + n)) into a cpi_group_tags.
cpi_group_tags split_group_tags(const std::vector<gr::tag_t>& tags, std::uint64_t start);

//! Out 0: the mask (uint8 per cell); out 1, optional: the threshold (float per cell).
gr::io_signature::sptr cfar_output_signature(kernels::backend b, std::size_t cells);

//! The shape of a CFAR block's input and how its items are grouped.
struct cfar_layout {
    std::uint64_t nrange = 1;
    std::uint64_t ndoppler = 0; //!< cfar_2d: Doppler bins per item; 0: cfar_1d
    std::uint64_t channels = 1;
    std::uint64_t group = 1; //!< items per kernel run() and per PDU (cfar_2d: nrange)
    std::uint64_t max_detections = 1;
    kernels::cfar_variant variant = kernels::cfar_variant::ca;
    //! cfar_2d: the kernel merges the touching cells of a target into one detection
    //! (cfar_report::clusters).
    bool cluster = false;
    //! The CFAR's Doppler edge wraps (angles: a target's cell in the other beams).
    bool doppler_wrap = true;

    //! cfar_1d: items are range lines, several groups per CPI.
    bool lines() const { return ndoppler == 0; }
    std::size_t cells_per_item() const
    {
        return channels * (lines() ? nrange : ndoppler);
    }
    //! The kernel's run() count for one group: items (cfar_1d) or CPIs (cfar_2d).
    std::size_t runs_per_group() const { return lines() ? group : 1; }
};

/*!
 * Empty when the cpi dict's nrange, channels and (layout.ndoppler > 0) ndoppler (or,
 * before the Doppler filter, npulses) match the layout, where present; else what differs.
 */
std::string cfar_shape_mismatch(const pmt::pmt_t& dict, const cfar_layout& layout);

//! The CPI bookkeeping of a CFAR block, group by group (the rules in cfar_block.h).
class cfar_framer
{
public:
    explicit cfar_framer(const cfar_layout& layout) : d_layout(layout) {}

    struct decision {
        bool drop = false;            //!< the tag's shape differs: discard the group
        std::string reason;           //!< why, for the log
        pmt::pmt_t dict;              //!< the cpi dict the group's detections refer to
        std::uint64_t index = 0;      //!< the CPI's index
        std::int64_t first_item = -1; //!< cfar_1d: items since the CPI's tag; else -1
        pmt::pmt_t emit;              //!< the cpi tag for the group's first item, or null
    };

    //! The next whole group, `tag` being the cpi tag on its first item (or null).
    decision next(const pmt::pmt_t& tag);

private:
    const cfar_layout d_layout;
    std::uint64_t d_index = 0; //!< next CPI's (cfar_2d) / current group's (cfar_1d) index
    pmt::pmt_t d_last_tag;     //!< cfar_1d: the last usable cpi tag, null before one
    std::uint64_t d_item_base = 0; //!< cfar_1d: items since d_last_tag
};

//! The counters a CFAR block reports; safe to read from any thread.
struct cfar_counters {
    std::atomic<std::uint64_t> dropped{ 0 };
    std::atomic<std::uint64_t> nonfinite{ 0 };
    std::atomic<std::uint64_t> overflowed{ 0 };
    //! Groups with a detection on a negative cell: the input is not power (dB, ...).
    std::atomic<std::uint64_t> negative{ 0 };
    //! The warnings of each kind, a line per 100 groups or 10 s after the first (a
    //! stream of bad maps would otherwise log every CPI); from work()'s thread only.
    log_limiter nonfinite_log, overflow_log, negative_log;
};

/*!
 * The detections PDU of one group's report: logs and counts its NaN/Inf cells, a
 * detection list overflow and detections on negative cells (a map that cannot be power:
 * its thresholds are meaningless; the metadata's negative_power is their number); for
 * cfar_1d the detections carry `item` and the metadata first_item and items. With
 * layout.cluster the list holds one merged detection per target
 * (clustered_detection_dict) and the metadata says clustered = true and cells (the CFAR's
 * listed cells). With `angles` (cfar_2d on a beam-major map) the listed detections gain
 * azimuths and a target seen in several beams at one cell is listed once (with_azimuths);
 * the metadata says angles = true.
 */
pmt::pmt_t cfar_report_pdu(const kernels::cfar_report& report,
                           const cfar_framer::decision& group,
                           const cfar_layout& layout,
                           double alpha,
                           const gr::logger_ptr& logger,
                           cfar_counters& counters,
                           const angle_source& angles = {});

} // namespace gpuradar
} // namespace gr

#endif
