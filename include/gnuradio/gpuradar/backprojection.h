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
 * \brief SAR time-domain backprojection: range-compressed pulses to a complex image, an
 * image on a height map (DEM) or a voxel volume.
 * \ingroup gpuradar
 *
 * Input 0: range-compressed pulses, one item = nbins gr_complex (device buffer on CUDA).
 * Input 1: the geometry of each pulse, one item = 6 doubles [x, y, z, r0, dr, f0]
 * (antenna phase centre in local Cartesian metres, range of bin 0 (m), bin spacing (m),
 * reference frequency (Hz); CONVENTIONS.md), item for item with input 0 (host memory).
 * Output: the complex image, nz*ny items of nx gr_complex, emitted every
 * pulses_per_image pulses (device buffer on CUDA): slice iz (height h + iz*dz, lowest
 * first), row iy (y0 + iy*dy), column ix (x0 + ix*dx) is item iz*ny + iy, element ix;
 * h is z, or height[iy*nx + ix] with a height map. nz = 1: one flat (or DEM) image of ny
 * items. The first item of every image carries two uint64 tags counting that image's
 * pulses: "nonfinite_samples" (samples with a NaN or Inf part, used as 0) and
 * "skipped_pulses" (bad geometry).
 * Per pixel and pulse (gpuradar::kernels::backprojection): R = |pixel - antenna|, linear
 * interpolation at bin (R - r0)/dr, times exp(+j 4 pi f0 R / c), summed over pulses.
 * The image is integrated in the backend's memory (on the GPU for CUDA) and only copied
 * to the output when emitted.
 *
 * Mode `restart`: each image holds exactly the pulses_per_image pulses since the last
 * one. Mode `accumulate`: the image is never cleared; each emitted image holds every
 * pulse since the start of the stream.
 *
 * A pulse whose geometry has a non-finite value, a bin spacing dr <= 0, or values the
 * precision cannot carry (e.g. f0 = 1e300; kernels/backprojection.h) is skipped
 * (contributes nothing, still counts towards pulses_per_image), counted
 * (skipped_pulses()) and logged. A non-finite pulse sample is used as 0 and counted
 * (nonfinite_samples()). The image never becomes NaN, in `accumulate` mode neither. A
 * partial image at the end of a finite stream is not emitted.
 */
class GPURADAR_API backprojection : virtual public gr::block
{
public:
    typedef std::shared_ptr<backprojection> sptr;

    //! Values per geometry item (x, y, z, r0, dr, f0).
    static constexpr unsigned int geometry_length = 6;

    /*!
     * \param nbins             range bins per pulse (2 to 2^24)
     * \param nx                image columns (>= 1, at most 2^27: one output item, 1 GiB)
     * \param ny                image rows (>= 1; nx*ny*nz at most 2^30 voxels, 8 GiB)
     * \param x0                x of column 0 (m, finite)
     * \param y0                y of row 0 (m, finite)
     * \param dx                column spacing (m, > 0)
     * \param dy                row spacing (m, > 0)
     * \param z                 height of the flat image or of slice 0 (m, finite), used
     *                          when `height` is empty
     * \param pulses_per_image  pulses per emitted image (>= 1)
     * \param mode              "restart" | "accumulate"
     * \param precision         "fast" (float32, airborne ranges) | "accurate" (double
     *                          range and phase, e.g. spaceborne slant ranges)
     * \param height            optional height map, a DEM (m): empty, or ny*nx finite
     *                          values, row-major; replaces z
     * \param backend           "auto", "cuda" or "cpu"
     * \param nz                height slices of a volume (1 to 65535; 1: one image)
     * \param dz                slice spacing (m, > 0 and finite)
     * \param device            CUDA device index (0 to devices - 1) the block's stream,
     *                          image and kernel live on; negative is refused on every
     *                          backend, the CPU backend logs and ignores other values.
     *                          Edges to blocks on other devices are copied peer to
     *                          peer (device_buffer).
     * \param algorithm         "direct" (every pulse to every pixel, the definition
     *                          above) | "factorized" (fast factorized backprojection,
     *                          kernels/sar/backprojection_factorized.h: O(N^2 log P),
     *                          the image to the accuracy the ffbp_* knobs give; each
     *                          image's pulses are collected and formed at once; flat
     *                          images and volumes on one device, refused with a
     *                          height map; `precision` is direct's only)
     * \param ffbp_stages       factorized: merge stages, 0 (auto) or 1 to
     *                          floor(log_factor(pulses_per_image))
     * \param ffbp_factor       factorized: subimages merged per stage, 2 or 4
     * \param ffbp_order_range  factorized: range taps of the Kaiser-windowed sinc
     *                          interpolator, even, 2 to 16
     * \param ffbp_order_angle  factorized: angle taps, even, 2 to 16
     * \param ffbp_oversample_range  factorized: range oversampling of the polar
     *                          images, 1.25 to 8
     * \param ffbp_oversample_angle  factorized: angle oversampling, 1.25 to 8. The
     *                          defaults (4, 8, 8, 3, 2) give SER >= 30 dB against
     *                          direct; (6, 6, 2, 2) ~24 dB for ~2.7x fewer operations.
     * Throws std::invalid_argument naming the parameter on bad input, before anything
     * is allocated (sizes with the memory they would take).
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
                     const std::string& backend = "auto",
                     unsigned int nz = 1,
                     double dz = 1.0,
                     int device = 0,
                     const std::string& algorithm = "direct",
                     int ffbp_stages = 0,
                     int ffbp_factor = 4,
                     int ffbp_order_range = 8,
                     int ffbp_order_angle = 8,
                     double ffbp_oversample_range = 3.0,
                     double ffbp_oversample_angle = 2.0);

    //! Pulses skipped since construction (non-finite geometry, dr <= 0, not carried).
    virtual std::uint64_t skipped_pulses() const = 0;
    //! Non-finite samples (used as 0) in the pulses of the images emitted so far.
    virtual std::uint64_t nonfinite_samples() const = 0;
    //! Images emitted since construction.
    virtual std::uint64_t images() const = 0;
    virtual std::string mode() const = 0;
    virtual std::string precision() const = 0;
    virtual std::string backend() const = 0;
    //! The `device` parameter.
    virtual int device() const = 0;
    //! "direct" | "factorized".
    virtual std::string algorithm() const = 0;
};

} // namespace gpuradar
} // namespace gr

#endif
