/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_GPURADAR_MULTIPLY_CONST_H
#define INCLUDED_GPURADAR_MULTIPLY_CONST_H

#include <gnuradio/gpuradar/api.h>
#include <gnuradio/sync_block.h>
#include <gnuradio/types.h>
#include <string>

namespace gr {
namespace gpuradar {

/*!
 * \brief Complex gain on complex vectors: y = k * x, k settable while running.
 * \ingroup gpuradar
 *
 * Streams: in and out gr_complex[vlen] (vlen >= 1). Tags pass through. A new k applies
 * from the next call of work() on; a call never mixes two gains.
 * Backend as for every gpuradar block: "auto", "cuda" (device_buffer ports, data stays on
 * the GPU between GPU blocks) or "cpu".
 */
class GPURADAR_API multiply_const : virtual public gr::sync_block
{
public:
    typedef std::shared_ptr<multiply_const> sptr;

    /*!
     * \param k       complex gain (linear), finite (NaN or infinity:
     *                std::invalid_argument)
     * \param vlen    samples per item (>= 1)
     * \param backend "auto", "cuda" or "cpu"
     * \param device  CUDA device (0 to number of GPUs - 1) the block's stream, plans and
     *                memory live on; checked before anything is allocated
     *                (std::invalid_argument naming `device` and the range). The CPU
     *                backend refuses a negative index and logs and ignores any other.
     */
    static sptr make(gr_complex k,
                     unsigned int vlen = 1,
                     const std::string& backend = "auto",
                     int device = 0);

    virtual gr_complex k() const = 0;
    //! Throws std::invalid_argument (and keeps the old gain) for a non-finite k.
    virtual void set_k(gr_complex k) = 0;
    //! The backend actually running: "cuda" or "cpu".
    virtual std::string backend() const = 0;
    //! The `device` parameter.
    virtual int device() const = 0;
};

} // namespace gpuradar
} // namespace gr

#endif
