/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef INCLUDED_GPURADAR_CFAR_1D_H
#define INCLUDED_GPURADAR_CFAR_1D_H

#include <gnuradio/block.h>
#include <gnuradio/gpuradar/api.h>
#include <cstdint>
#include <string>

namespace gr {
namespace gpuradar {

/*!
 * \brief Range-only CFAR detector (single pulses, or pulses after integration), with
 * detection reports.
 * \ingroup gpuradar
 *
 * In: float[channels * nrange] per item (square-law power, range contiguous,
 * channel-major). Each (item, channel) is one line.
 * Out 0: detection mask, uint8[channels * nrange] per item. Out 1 (optional): threshold,
 * float[channels * nrange] per item, computed only when connected.
 *
 * Message port `detections`: one PDU per group of items_per_cpi items, pmt pair
 * (metadata dict, vector of dicts) as in cfar_2d. Each detection: `range_bin`,
 * `doppler_bin` (always 0), `item` (the item within the group, e.g. the pulse),
 * `channel`, `cpi` (u64), `power`, `threshold`, `noise`, `snr_db`, and `range_m` (tag has
 * `fs`) and `rx_time` (tag has it, the group's) as in cfar_2d; no velocity.
 *
 * Framing: a group is items_per_cpi items. A `cpi` tag starts a group at its item (a tag
 * inside a group discards the partial group, counted in dropped_cpis()); a tag with
 * another `nrange` or `channels` discards its group (counted). Without tags groups are
 * counted from the start of the stream, indexed from 0; with tags, a group takes the
 * index of the last tag seen and the items after it count on (`item` = items since the
 * tag). The cpi tag is re-emitted where it came in; while no tag has been seen, one is
 * made (index, nrange) on the first item of each group. Other tags pass through. NaN /
 * Inf cells: never detections, counted and logged per group.
 */
class GPURADAR_API cfar_1d : virtual public gr::block
{
public:
    typedef std::shared_ptr<cfar_1d> sptr;

    /*!
     * \param nrange         range bins per line (>= 1)
     * \param channels       lines per item, channel-major (>= 1)
     * \param guard          guard cells per side (>= 0)
     * \param train          training cells per side (>= 1)
     * \param pfa            design false-alarm probability per cell, in (0, 1)
     * \param variant        "ca", "go", "so" or "os"
     * \param os_k           os rank in [1, 2 train]; 0 = round(3N/4)
     * \param edge           "clip" (default) or "wrap"
     * \param local_max_only report only cells not below either range neighbour
     * \param items_per_cpi  items per detections PDU (>= 1)
     * \param max_detections most detections listed per PDU (>= 1)
     * \param backend        "auto", "cuda" or "cpu"
     * \param device         CUDA device (0 to number of GPUs - 1) the block's stream,
     *                       plans and memory live on; checked before anything is
     *                       allocated (std::invalid_argument naming `device` and the
     *                       range). The CPU backend refuses a negative index and logs and
     *                       ignores any other.
     */
    static sptr make(unsigned int nrange,
                     unsigned int channels = 1,
                     int guard = 1,
                     int train = 8,
                     double pfa = 1e-6,
                     const std::string& variant = "ca",
                     int os_k = 0,
                     const std::string& edge = "clip",
                     bool local_max_only = false,
                     unsigned int items_per_cpi = 1,
                     unsigned int max_detections = 4096,
                     const std::string& backend = "auto",
                     int device = 0);

    /*!
     * Live control (GRC callbacks). Each setter checks its value as make() does
     * (std::invalid_argument naming the parameter; the old value stays) and the change
     * takes effect at the next group of items_per_cpi items, never inside one. os_k = 0
     * (make()) is re-resolved for a new window.
     */
    virtual void set_pfa(double pfa) = 0;
    //! "ca", "go", "so" or "os".
    virtual void set_variant(const std::string& variant) = 0;
    virtual void set_guard(int guard) = 0;
    virtual void set_train(int train) = 0;

    virtual std::uint64_t dropped_cpis() const = 0;
    virtual std::uint64_t nonfinite_cells() const = 0;
    virtual std::uint64_t overflowed_cpis() const = 0;
    virtual int training_cells() const = 0;
    virtual double alpha() const = 0;
    virtual int os_k() const = 0;
    virtual std::string backend() const = 0;
    //! The `device` parameter.
    virtual int device() const = 0;
};

} // namespace gpuradar
} // namespace gr

#endif
