/* Detection clustering: the CFAR cells of one target merged into one detection at the
 * interpolated peak. */
#ifndef INCLUDED_GPURADAR_KERNELS_DETECTION_CLUSTERING_H
#define INCLUDED_GPURADAR_KERNELS_DETECTION_CLUSTERING_H

#include <gpuradar/kernels/detection/cfar_common.h>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpuradar::kernels {

//! The maps the detections come from; checked by detection_clustering's constructor.
struct detection_clustering_params {
    std::size_t nrange = 0;   //!< range bins per map, >= 1
    std::size_t ndoppler = 1; //!< Doppler bins per map, >= 1 (1: range-only lines)
    bool range_wrap = false;  //!< the CFAR's range edge is wrap: bin 0 touches nrange-1
    bool doppler_wrap = true; //!< the CFAR's Doppler edge is wrap (the spectrum is)
};

/*!
 * Offset of a peak from its bin, in [-0.5, 0.5], from the powers of the bin before, the
 * bin and the bin after: the vertex of the parabola through their logarithms (Gaussian
 * interpolation), 0.5 (ln prev - ln next) / (ln prev - 2 ln peak + ln next). Exact for a
 * Gaussian main lobe, which a windowed FFT's or a compressed pulse's main lobe is close
 * to. 0 when a neighbour is missing (NaN), not positive, or the three do not form a
 * peak (the parabola opens upwards or is flat).
 */
double gaussian_peak_offset(float prev, float peak, float next);

/*!
 * \brief Merges the detections of a CFAR report that touch each other into one per
 * target.
 *
 * Two detections of one map are neighbours when their range bins and their Doppler bins
 * each differ by at most one (8-connectivity; across an edge that wraps). A cluster is a
 * connected set of neighbours; it reports its strongest cell (ties: the earliest in
 * memory) with the sub-bin position of that cell's peak from gaussian_peak_offset over
 * the map's values beside it (cfar_detection::range_prev ..., fetched by the CFAR from
 * the map itself, so neighbours below the threshold count too).
 *
 * Why the interpolated peak and not a power-weighted centroid: a centroid averages over
 * the cells that crossed the threshold, a set that depends on the SNR and the noise, so
 * it is pulled towards the strongest cell and jumps as cells come and go; the three
 * samples around the peak are what the main lobe's shape fixes.
 *
 * Cost: O(D) for D detections in the CFAR's sorted order (a sweep and a union-find;
 * O(D log D) for a list in any other order), on the host; the CFAR fetches four
 * neighbours per detection. D is a small fraction of the cells. cfar_2d's `cluster`
 * option runs this class on the CPU backend and the same merging in the CUDA CFAR's
 * publish kernel (cfar_publish.cu), where from_peaks() finishes the clusters.
 */
class detection_clustering
{
public:
    using params = detection_clustering_params;

    //! Throws std::invalid_argument "gpuradar::detection_clustering: <param> must be
    //! ...".
    explicit detection_clustering(const params& p);

    //! The clusters of `detections` (any order), sorted by (map, range bin, Doppler bin)
    //! of their peaks.
    std::vector<clustered_detection>
    cluster(const std::vector<cfar_detection>& detections) const;

    /*!
     * The clusters whose strongest cells and cell counts were found elsewhere (the CUDA
     * CFAR merges on the device): each peak's sub-bin position, as cluster() gives it,
     * the result sorted like cluster()'s. `peaks` and `cells` have the same length.
     */
    std::vector<clustered_detection>
    from_peaks(const std::vector<cfar_detection>& peaks,
               const std::vector<std::uint32_t>& cells) const;

    //! Moves a report's detections into its clusters (clustered_cells: their number).
    void cluster_report(cfar_report& report) const;

    const params& get_params() const { return d_params; }

private:
    const params d_params;
};

/*!
 * \brief The detections of beam-major maps that are each target's strongest listing.
 *
 * A target is detected in several beams of its CPI, at its cell or (noise, a straddled
 * peak) one bin beside it. Maps are numbered cpi * beams + beam. A detection is dropped
 * when a stronger detection of another beam of the same CPI lies within one range bin
 * and one Doppler bin (across the Doppler edge when `doppler_wrap`); of equal powers the
 * lower beam is kept. Returns the indices into `detections` of the kept ones, in order.
 * Throws std::invalid_argument naming `beams` or `ndoppler` when either is 0.
 */
std::vector<std::size_t>
strongest_across_beams(const std::vector<cfar_detection>& detections,
                       std::size_t beams,
                       std::size_t ndoppler,
                       bool doppler_wrap);

} // namespace gpuradar::kernels

#endif
