/* How sar_focus cuts a continuous pulse stream into overlapping azimuth blocks
 * (internal). */
#ifndef INCLUDED_GPURADAR_AZIMUTH_BLOCKS_H
#define INCLUDED_GPURADAR_AZIMUTH_BLOCKS_H

#include <gpuradar/kernels/sar/stripmap.h>
#include <cstddef>

namespace gr {
namespace gpuradar {

namespace kernels = ::gpuradar::kernels;

/*!
 * Blocks of `naz` pulses; rows [lead, naz - trail) of each are fully focused and
 * emitted; the next block starts `stride` pulses later, so blocks overlap by lead +
 * trail.
 *
 * A target focused at row r (its zero-Doppler pulse) is seen by the 3 dB beam on pulses
 * r - d(R) +- A(R)/2, with A(R) = aperture_pulses(R) and d(R) = R tan(squint) prf / v
 * the beam-centre offset (ahead of zero Doppler for a forward squint). Row r is fully
 * focused when all those pulses lie in the block: r >= d + A/2 and naz - 1 - r >= A/2 - d
 * for every range of the window (A and d are linear in R, so the near and far edges
 * bound them). Each side gets a guard of A/4 + 1 pulses: the azimuth reference, cut to
 * the 3 dB Doppler band, has tails beyond the aperture that decay slowly for a
 * rectangular window; with the guard, a stream focused in blocks differs from the
 * whole scene focused at once by less than -40 dB re the peak (lib tests; about -36 dB
 * without guard), and far less with a tapered azimuth window.
 */
struct azimuth_blocks {
    std::size_t naz = 0;
    std::size_t lead = 0;
    std::size_t trail = 0;

    std::size_t overlap() const { return lead + trail; }
    std::size_t stride() const { return naz - lead - trail; }

    /*!
     * naz_requested 0: the smallest 2^a 3^b 5^c length >= max(4 overlap, 256).
     * Throws std::invalid_argument "gpuradar::<block_name>: naz ..." when naz <= the
     * overlap (no fully focused row) or naz x nrange complex exceed 1 GiB.
     */
    static azimuth_blocks make(const kernels::stripmap_params& p,
                               std::size_t naz_requested,
                               const char* block_name);
};

//! The smallest n >= `at_least` whose only prime factors are 2, 3 and 5.
std::size_t next_fft_friendly(std::size_t at_least);

} // namespace gpuradar
} // namespace gr

#endif
