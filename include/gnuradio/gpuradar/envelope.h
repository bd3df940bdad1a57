/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_GPURADAR_ENVELOPE_H
#define INCLUDED_GPURADAR_ENVELOPE_H

#include <gnuradio/gpuradar/api.h>
#include <gnuradio/sync_block.h>
#include <string>

namespace gr {
namespace gpuradar {

/*!
 * \brief Envelope detector: complex vectors in, float vectors out.
 * \ingroup gpuradar
 *
 * Per sample x:
 * - mode "square_law": y = |x|^2 (power, what CFAR expects); with db: 10*log10(|x|^2)
 * - mode "linear":     y = |x|;                              with db: 20*log10(|x|)
 * A zero sample gives -inf dB; NaN in gives NaN out.
 *
 * Streams: in gr_complex[vlen], out float[vlen], one item per pulse or range bin (any
 * vlen >= 1). Tags pass through unchanged (the `cpi` tag keeps its shape).
 * Backend "cuda": ports use gpuradar::device_buffer (data stays on the GPU between GPU
 * blocks); "cpu": VOLK on the host; "auto": CUDA when a usable device exists.
 */
class GPURADAR_API envelope : virtual public gr::sync_block
{
public:
    typedef std::shared_ptr<envelope> sptr;

    /*!
     * \param vlen    samples per item (>= 1)
     * \param mode    "square_law" or "linear"
     * \param db      output in decibels
     * \param backend "auto", "cuda" or "cpu"
     * \param device  CUDA device (0 to number of GPUs - 1) the block's stream, plans and
     *                memory live on; checked before anything is allocated
     *                (std::invalid_argument naming `device` and the range). The CPU
     *                backend refuses a negative index and logs and ignores any other.
     */
    static sptr make(unsigned int vlen,
                     const std::string& mode = "square_law",
                     bool db = false,
                     const std::string& backend = "auto",
                     int device = 0);

    //! The backend actually running: "cuda" or "cpu".
    virtual std::string backend() const = 0;
    //! The `device` parameter.
    virtual int device() const = 0;
};

} // namespace gpuradar
} // namespace gr

#endif
