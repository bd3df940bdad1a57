/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef INCLUDED_GPURADAR_CORNER_TURN_H
#define INCLUDED_GPURADAR_CORNER_TURN_H

#include <gnuradio/block.h>
#include <gnuradio/gpuradar/api.h>
#include <cstdint>
#include <string>

namespace gr {
namespace gpuradar {

/*!
 * \brief Corner turn: a CPI from the pulse stream to the range stream.
 * \ingroup gpuradar
 *
 * In: npulses items of gr_complex[channels * nrange] (one pulse each, channel-major).
 * Out: nrange items of gr_complex[channels * npulses] (one range bin's slow-time vector
 * per channel), out[r][c][p] = in[p][c][r] (CONVENTIONS.md, Streams and the CPI).
 *
 * CPI boundaries: a `cpi` tag on an input item starts a CPI there; without tags the block
 * counts npulses items from the start of the stream. A tag that arrives inside a CPI
 * (samples were lost upstream) discards the partial CPI, counts it (dropped_cpis()) and
 * realigns on the tag: a CPI is never built across a gap. A tag whose npulses / nrange
 * differ from the block's parameters is logged and that CPI discarded (counted). The tag
 * is re-emitted on the first output item of each CPI (made with index, npulses, nrange
 * when none came in).
 */
class GPURADAR_API corner_turn : virtual public gr::block
{
public:
    typedef std::shared_ptr<corner_turn> sptr;

    /*!
     * \param npulses  pulses per CPI (>= 1)
     * \param nrange   range bins per pulse (>= 1)
     * \param channels channels per item (>= 1)
     * \param backend  "auto", "cuda" or "cpu"
     * \param device   CUDA device (0 to number of GPUs - 1) the block's stream, plans and
     *                 memory live on; checked before anything is allocated
     *                 (std::invalid_argument naming `device` and the range). The CPU
     *                 backend refuses a negative index and logs and ignores any other.
     */
    static sptr make(unsigned int npulses,
                     unsigned int nrange,
                     unsigned int channels = 1,
                     const std::string& backend = "auto",
                     int device = 0);

    //! CPIs discarded because a cpi tag arrived before they were complete.
    virtual std::uint64_t dropped_cpis() const = 0;
    virtual std::string backend() const = 0;
    //! The `device` parameter.
    virtual int device() const = 0;
};

} // namespace gpuradar
} // namespace gr

#endif
