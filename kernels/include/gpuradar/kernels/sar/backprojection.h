/* SAR backprojection: range-compressed pulses to a complex image on a Cartesian grid. */
#ifndef INCLUDED_GPURADAR_KERNELS_BACKPROJECTION_H
#define INCLUDED_GPURADAR_KERNELS_BACKPROJECTION_H

#include <gpuradar/kernels/common/backend.h>
#include <gpuradar/kernels/common/constants.h>
#include <gpuradar/kernels/common/cuda_resources.h>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace gpuradar::kernels {

/*!
 * \brief Image grid of the backprojection (local Cartesian metres: x east, y north, z
 * up): a flat image, an image on a height map (DEM), or a volume of nz slices.
 *
 * Voxel (ix, iy, iz) sits at (x0 + ix*dx, y0 + iy*dy, h + iz*dz) where h = z, or with a
 * height map h = height[iy*nx + ix]. Slice iz is a row-major image of ny rows of nx;
 * the slices follow each other, lowest first: the image is nz x ny x nx, voxel
 * (ix, iy, iz) at index (iz*ny + iy)*nx + ix. nz = 1 (the default) is the flat image.
 * A height map of one value everywhere is the flat grid at that height (the same
 * arithmetic, bit for bit the same image).
 */
struct image_grid {
    double x0 = 0.0;  //!< x of pixel column 0 (m)
    double y0 = 0.0;  //!< y of pixel row 0 (m)
    double dx = 1.0;  //!< column spacing (m), > 0
    double dy = 1.0;  //!< row spacing (m), > 0
    long long nx = 0; //!< columns, >= 1
    long long ny = 0; //!< rows, >= 1
    double z = 0.0;   //!< constant pixel height (m), used when `height` is empty
    std::vector<double> height; //!< optional height map (m), ny*nx row-major, finite
    long long nz = 1;           //!< height slices of a volume, 1 to 65535
    double dz = 1.0;            //!< slice spacing (m), > 0 and finite; unused for nz = 1

    //! Voxels (nx*ny*nz); only meaningful for a validated grid.
    long long voxels() const { return nx * ny * nz; }
};

/*!
 * \brief Time-domain backprojection (Chapman, Ranka, Sahni et al., Eq. 1.1).
 *
 * For every pixel P and every pulse i with geometry g_i = [x, y, z, r0, dr, f0]
 * (antenna phase centre A_i in m, range of bin 0 in m, bin spacing in m, reference
 * frequency in Hz; see CONVENTIONS.md):
 *
 *   R = |P - A_i|,  b = (R - r0)/dr,
 *   v = (1 - w) p_i[k] + w p_i[k+1] with k = floor(b), w = b - k,  (0 when b is outside
 *       [0, nbins-1]: a pixel outside a pulse's swath gets exactly nothing from it)
 *   image(P) += v * exp(+j 4 pi f0 R / c),   c = 299 792 458 m/s.
 *
 * `run` always adds into the image it is given, so two calls over two halves of an
 * aperture give the image of the whole aperture (mode `accumulate`); clear the image
 * first for a new one (mode `restart`).
 *
 * Precision. Both backends compute the range of each pixel relative to the range of the
 * centre of its 32 x 32-pixel tile, taken in double per tile and pulse, so that no
 * absolute range (up to ~1000 km) ever goes through float.
 *  - fast: the range difference, bin and phase in float32 (error ~1e-7 of the tile's
 *    half-diagonal, ~1e-4 rad at X band for 0.25 m pixels): SER >= 60 dB against an fp64
 *    reference for airborne geometries (500 m to 20 km).
 *  - accurate: range difference and phase in double (the phase reduced to turns exactly),
 *    bin and interpolation in float: SER >= 100 dB, e.g. spaceborne X band at 800 km.
 *    CUDA on a flat grid takes the phase's part linear in the pixel offset, kt u.d/r, in
 *    32-bit fixed-point turns (exact modulo a turn) and the rest in float where the rest
 *    is bounded by 2 turns (far geometries), the range and bin as in `fast`; the same
 *    SER bound.
 * SER = 10 log10(sum |ref|^2 / sum |img - ref|^2).
 *
 * Volumes. Each slice of an nz-slice grid is backprojected exactly as the flat (or
 * height-map) image at its height: the same per-pixel arithmetic, one more loop (CPU) or
 * grid dimension (CUDA) over the slices.
 *
 * Bad geometry. A pulse whose geometry has a non-finite value, or a value the
 * arithmetic cannot carry, is skipped (contributes nothing) and counted in
 * skipped_pulses(). Not carried, in either precision: a phase range over one 32 x 32
 * tile |2 f0 / c| (hd + dr) above 2^19 turns (hd: the tile's half-diagonal; the phase is
 * reduced in 32-bit fixed point over that range), e.g. f0 = 1e300; a reference phase
 * |2 f0 / c| r above 2^51 turns (a double would no longer hold the fraction of a turn);
 * a distance r from the antenna to the scene above 1e15 m, or a range in bins
 * (r + |r0|) / dr above 2^60. A finite dr <= 0 throws std::invalid_argument before
 * anything is added.
 *
 * Bad samples. A pulse sample with a non-finite part (NaN or +-Inf) is used as 0 and
 * counted in nonfinite_samples(): one bad sample never spreads into the image. Only the
 * samples of the pulses that are backprojected (not skipped) are looked at.
 */
class backprojection
{
public:
    enum class precision { fast, accurate };

    //! Values per pulse in the geometry array: x, y, z, r0, dr, f0.
    static constexpr std::size_t geometry_length = 6;
    //! Speed of light (m/s, constants.h).
    static constexpr double speed_of_light = kernels::speed_of_light;
    //! Most voxels (nx*ny*nz) of an image: 2^30, 8 GiB of complex float.
    static constexpr long long max_voxels = 1LL << 30;
    //! Most range bins per pulse: 2^24, 128 MiB per pulse.
    static constexpr std::size_t max_bins = std::size_t(1) << 24;
    //! Most slices of a volume (a CUDA grid dimension).
    static constexpr long long max_slices = 65535;

    //! Parses "fast" | "accurate"; throws std::invalid_argument naming `precision`.
    static precision parse_precision(const std::string& name);
    static const char* to_string(precision p);

    /*!
     * Checks a grid and a pulse length without allocating anything: nx, ny >= 1,
     * nx*ny*nz <= max_voxels (the message gives the memory the image would take), dx, dy
     * > 0 and finite, x0, y0, z finite, height empty or nx*ny finite values, 1 <= nz <=
     * max_slices, dz > 0 and finite, 2 <= nbins <= max_bins. Sizes are computed without
     * overflow. Throws std::invalid_argument "gpuradar::backprojection: <param> must be
     * ..." naming the parameter.
     */
    static void validate(const image_grid& grid, std::size_t nbins);

    /*!
     * \param b       backend; CUDA queues its work on `stream` and does not wait.
     * \param grid    image grid, checked by validate() before anything is allocated
     * \param nbins   range bins per pulse, 2 to max_bins
     * \param p       precision (fast | accurate)
     * \param devices CUDA devices to share the image between. Empty (the default): the
     *                current device, as without the list. One entry: that device is
     *                made current while the object is built (`stream` must belong to
     *                it). Several: the image rows are split into one share per entry in
     *                whole 32-row tile rows (split_image_rows; entries beyond the tile
     *                rows get none), each share backprojected on its device with its own
     *                stream and buffers; the pulses go to every device and each share's
     *                rows are gathered into `image`. Pulses and image then live on the
     *                device current at make(); run() and run_host_pulses() wait for
     *                `stream` first and return when every share is done, and
     *                skipped_pulses() / nonfinite_samples() are the largest count of any
     *                share. An entry may repeat (several shares on one device). Each
     *                entry must be 0 to (number of devices - 1): std::invalid_argument
     *                naming `device` otherwise. The CPU backend ignores the list.
     * Throws std::invalid_argument "gpuradar::backprojection: <param> must be ..." .
     */
    static std::unique_ptr<backprojection> make(backend b,
                                                const image_grid& grid,
                                                std::size_t nbins,
                                                precision p,
                                                stream_ref stream = stream_ref(),
                                                const std::vector<int>& devices = {});

    virtual ~backprojection() = default;

    /*!
     * Backproject `npulses` pulses and add them into `image` (grid.voxels() complex,
     * nz x ny x nx).
     * \param pulses    npulses x nbins complex, pulse-major. Device pointer on CUDA.
     * \param geometry  npulses x 6 doubles (geometry_length). Always a HOST pointer (the
     *                  per-pulse set-up is done on the host, in double).
     * \param image     nz*ny*nx complex, read and written. Device pointer on CUDA.
     * CUDA: returns once the work is queued on the stream (geometry is copied first, so
     * the caller may reuse its geometry buffer at once).
     */
    virtual void run(const cfloat* pulses,
                     const double* geometry,
                     std::size_t npulses,
                     cfloat* image) = 0;

    /*!
     * As run(), with the pulses in HOST memory and the image on the device (CUDA) or host
     * (CPU). CUDA streams the pulses to the device in blocks through pinned buffers while
     * the kernel works on the previous block (Chapman et al.); page-locked input is
     * copied directly. Returns when the pulses have been copied (the kernels may still
     * run).
     */
    virtual void run_host_pulses(const cfloat* host_pulses,
                                 const double* geometry,
                                 std::size_t npulses,
                                 cfloat* image) = 0;

    //! Pulses skipped since construction: geometry non-finite or not carried (above).
    std::size_t skipped_pulses() const { return d_skipped; }
    /*!
     * Non-finite samples (NaN or Inf in either part) of backprojected pulses since
     * construction, each used as 0. CUDA counts on the device: this waits for the work
     * queued on the stream.
     */
    virtual std::size_t nonfinite_samples() const { return d_nonfinite; }
    /*!
     * The count of nonfinite_samples() as it stands after the work queued so far,
     * written to `*count` without waiting for the stream: a caller that keeps kernels
     * queued reads a finished image's count while the next image's kernels run. CUDA
     * (one device) queues the copy on the stream: `count` must be pinned host memory and
     * holds the value once the stream has passed this point (e.g. an event recorded
     * after this call has completed). Otherwise (CPU, several devices) the count is
     * written before returning.
     */
    virtual void nonfinite_samples_async(std::uint64_t* count) const
    {
        *count = nonfinite_samples();
    }

    const image_grid& grid() const { return d_grid; }
    std::size_t nbins() const { return d_nbins; }
    precision get_precision() const { return d_precision; }

protected:
    backprojection(const image_grid& grid, std::size_t nbins, precision p)
        : d_grid(grid), d_nbins(nbins), d_precision(p)
    {
    }
    const image_grid d_grid;
    const std::size_t d_nbins;
    const precision d_precision;
    std::size_t d_skipped = 0;
    std::size_t d_nonfinite = 0;
};

} // namespace gpuradar::kernels

#endif
