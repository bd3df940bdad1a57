/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef INCLUDED_GPURADAR_BACKPROJECTION_H
#define INCLUDED_GPURADAR_BACKPROJECTION_H

#include <gnuradio/block.h>
#include <gnuradio/gpuradar/api.h>
#include <cstdint>
#include <string>
#include <vector>

namespace gr {
namespace gpuradar {

/*!
 * \brief SAR time-domain backprojection: range-compressed pulses to a complex image.
 * \ingroup gpuradar
 *
 * Input 0: range-compressed pulses, one item = nbins gr_complex (device buffer on CUDA).
 * Input 1: the geometry of each pulse, one item = 6 doubles [x, y, z, r0, dr, f0]
 * (antenna phase centre in local Cartesian metres, range of bin 0 (m), bin spacing (m),
 * reference frequency (Hz); DESIGN.md), item for item with input 0 (host memory).
 * Output: the complex image, ny items of nx gr_complex (row iy = y0 + iy*dy, column
 * ix = x0 + ix*dx), emitted every pulses_per_image pulses (device buffer on CUDA).
 * Per pixel and pulse (gpuradar::kernels::backprojection): R = |pixel - antenna|, linear
 * interpolation at bin (R - r0)/dr, times exp(+j 4 pi f0 R / c), summed over pulses.
 * The image is integrated in the backend's memory (on the GPU for CUDA) and only copied
 * to the output when emitted.
 *
 * Mode `restart`: each image holds exactly the pulses_per_image pulses since the last
 * one. Mode `accumulate`: the image is never cleared; each emitted image holds every
 * pulse since the start of the stream.
 *
 * A pulse whose geometry has a non-finite value, or a bin spacing dr <= 0, is skipped
 * (contributes nothing, still counts towards pulses_per_image), counted
 * (skipped_pulses()) and logged; the image never becomes NaN. A partial image at the
 * end of a finite stream is not emitted.
 */
class GPURADAR_API backprojection : virtual public gr::block
{
public:
    typedef std::shared_ptr<backprojection> sptr;

    //! Values per geometry item (x, y, z, r0, dr, f0).
    static constexpr unsigned int geometry_length = 6;

    /*!
     * \param nbins             range bins per pulse (>= 2)
     * \param nx                image columns (>= 1; nx*ny < 2^31)
     * \param ny                image rows (>= 1)
     * \param x0                x of column 0 (m, finite)
     * \param y0                y of row 0 (m, finite)
     * \param dx                column spacing (m, > 0)
     * \param dy                row spacing (m, > 0)
     * \param z                 constant pixel height (m, finite), used when `height` is
     * empty \param pulses_per_image  pulses per emitted image (>= 1) \param mode
     * "restart" | "accumulate" \param precision         "fast" (float32, airborne ranges)
     * | "accurate" (double range and phase, e.g. spaceborne slant ranges) \param height
     * optional height map (m): empty, or ny*nx finite values, row-major; replaces z
     * \param backend           "auto", "cuda" or "cpu"
     * Throws std::invalid_argument naming the parameter on bad input.
     */
    static sptr make(unsigned int nbins,
                     unsigned int nx,
                     unsigned int ny,
                     double x0,
                     double y0,
                     double dx,
                     double dy,
                     double z,
                     unsigned int pulses_per_image,
                     const std::string& mode = "restart",
                     const std::string& precision = "fast",
                     const std::vector<float>& height = std::vector<float>(),
                     const std::string& backend = "auto");

    //! Pulses skipped since construction (non-finite geometry or dr <= 0).
    virtual std::uint64_t skipped_pulses() const = 0;
    //! Images emitted since construction.
    virtual std::uint64_t images() const = 0;
    virtual std::string mode() const = 0;
    virtual std::string precision() const = 0;
    virtual std::string backend() const = 0;
};

} // namespace gpuradar
} // namespace gr

#endif
