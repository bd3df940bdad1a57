/* Two-dimensional CFAR detection on range-Doppler power maps. */
#ifndef INCLUDED_GPURADAR_KERNELS_CFAR_2D_H
#define INCLUDED_GPURADAR_KERNELS_CFAR_2D_H

#include <gpuradar/kernels/common/backend.h>
#include <gpuradar/kernels/common/cuda_resources.h>
#include <gpuradar/kernels/detection/cfar_common.h>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace gpuradar::kernels {

namespace detail {
class cfar_engine;
}

//! Configuration of a cfar_2d; every field is checked by cfar_2d::make.
struct cfar_2d_params {
    std::size_t nrange = 0;   //!< range bins per map (rows), >= 1
    std::size_t ndoppler = 0; //!< Doppler bins per map (contiguous), >= 1
    std::size_t channels = 1; //!< maps per range item, channel-major (CONVENTIONS.md)
    int guard_range = 1;      //!< guard cells per side in range, >= 0
    int train_range = 5;      //!< training cells per side in range, >= 0
    int guard_doppler = 1;    //!< guard cells per side in Doppler, >= 0
    int train_doppler = 1;    //!< training cells per side in Doppler, >= 0
    cfar_edge range_edge = cfar_edge::clip;   //!< the thesis: zero padding in range
    cfar_edge doppler_edge = cfar_edge::wrap; //!< the thesis: Doppler is periodic
    cfar_variant variant = cfar_variant::ca;
    int os_k = 0;      //!< os rank in [1, N]; see cfar_default_os_k (unused otherwise)
    double pfa = 1e-6; //!< design false-alarm probability per cell, in (0, 1)
    bool local_max = false; //!< keep only detections that peak in their 3x3 neighbourhood
    std::size_t max_cpi = 1;            //!< most CPIs one run() may take, >= 1
    std::size_t max_detections = 65536; //!< room in the detection list per run(), >= 1
    cfar_estimator estimator = cfar_estimator::automatic; //!< CUDA only
    /*!
     * Merge touching detections into one per target (detection_clustering over this
     * CFAR's edges): collect() fills cfar_report::clusters instead of detections. The
     * CUDA backend merges on the device when a run lists at most
     * cfar_device_cluster_limit cells, so only the clusters cross PCIe.
     */
    bool cluster = false;
};

//! Most listed cells the CUDA backend clusters on the device (one block's shared
//! memory); a longer list is clustered on the host, with the same result.
constexpr std::size_t cfar_device_cluster_limit = 1024;

/*!
 * \brief Two-dimensional CFAR on a square-law range-Doppler power map.
 *
 * Layout (CONVENTIONS.md): a CPI holds nrange range items of channels x ndoppler floats,
 * channel-major, Doppler contiguous; element (cpi, range r, channel c, Doppler d) is at
 * ((cpi * nrange + r) * channels + c) * ndoppler + d. Each (cpi, channel) is an
 * independent map, numbered map = cpi * channels + c. Outputs use the same layout.
 *
 * Window of a cell under test (CUT): a rectangle of (2 Wr + 1) x (2 Wd + 1) cells centred
 * on it, Wr = guard_range + train_range, Wd = guard_doppler + train_doppler, minus the
 * guard rectangle (2 guard_range + 1) x (2 guard_doppler + 1) that holds the CUT. The
 * rest are the N training cells. Threshold T = alpha * Z (see cfar_variant for Z and the
 * lead/lag halves), alpha from cfar_alpha for the design pfa (precomputed on the host;
 * clipped windows near the map's edges get their own alpha, see cfar_edge).
 * Detection: x > T and x finite; with local_max also x is the largest of its 3x3
 * neighbourhood (neighbours outside a clipped edge ignored, non-finite ones ignored, ties
 * go to the cell earlier in memory), so an extended target reports once per peak.
 *
 * Non-finite input (NaN, +-Inf) never crashes and is never a detection; each run counts
 * such cells per map (cfar_report::nonfinite). As a training cell it stands for +Inf
 * interference: ca and go give T = +Inf for every window that holds it, so ignores the
 * half that holds it, os ranks it above every finite value.
 *
 * Huge finite input: a training cell above cfar_max_training_power (2^100) counts as
 * that level, so float sums never overflow to +Inf and a huge cell only raises the
 * thresholds of the windows that hold it (the summed-area estimator treats it as
 * non-finite, +Inf for those windows). The cell under test is compared unclamped.
 *
 * The CUDA backend fuses estimate and threshold test in one kernel and compacts the
 * detections on the device into a bounded list (an atomic counter), so collect() moves
 * only the list and the counters across PCIe. When more than max_detections are found
 * the list keeps max_detections of them (CPU: the first in memory order; CUDA: an
 * arbitrary subset) and cfar_report::found says how many there were; the mask is always
 * complete. The CPU backend computes the same sums in the same order (identical results
 * to the CUDA segmented estimator; the summed-area one differs by rounding only).
 */
class cfar_2d
{
public:
    using params = cfar_2d_params;

    /*!
     * Validates `p` (std::invalid_argument "gpuradar::cfar_2d: <param> must be ... (got
     * ...)"), computes the alpha table and makes the backend's workspaces. The CUDA
     * backend queues all its work on `stream`.
     */
    static std::unique_ptr<cfar_2d>
    make(backend b, const params& p, stream_ref stream = stream_ref());
    //! make()'s parameter checks, allocating nothing; the maps of one run() within
    //! max_buffer_elements and max_buffer_bytes (buffer_size.h).
    static void validate(const params& p);

    ~cfar_2d();
    cfar_2d(const cfar_2d&) = delete;
    cfar_2d& operator=(const cfar_2d&) = delete;

    /*!
     * Detect on `ncpi` CPIs (1 <= ncpi <= max_cpi) of `power`. Writes `mask` (1 =
     * detection, 0 otherwise) and, when not null, `threshold` (T per cell; +Inf where the
     * window holds non-finite interference), both in the input's layout. On the CUDA
     * backend all three are device pointers and the call returns once the work is queued;
     * on the CPU backend they are host pointers. The detection list and the non-finite
     * counts of this call are read with collect().
     */
    void run(const float* power, std::uint8_t* mask, float* threshold, std::size_t ncpi);

    /*!
     * The detections and non-finite counts of the last run() (empty before the first).
     * On CUDA it waits for that run to finish (one stream synchronisation, then a copy of
     * only the listed detections). Host memory in, host memory out.
     */
    cfar_report collect();

    /*!
     * The power of every channel at each detection's cell (its CPI, range bin and
     * Doppler bin), `channels` values per detection in detection order, read from
     * `power`, the input of the last run() (device memory on CUDA, still unchanged).
     * What angle estimation across beams needs: a target's cell in all the beams of a
     * beam-major map. Host memory out; waits for the copies on CUDA.
     */
    std::vector<float> channel_powers(const float* power,
                                      const std::vector<cfar_detection>& detections);

    const params& get_params() const { return d_params; }
    //! Training cells of a full (unclipped) window.
    int training_cells() const { return d_training_cells; }
    //! The os rank in use (0 for other variants).
    int os_k() const { return d_params.variant == cfar_variant::os ? d_params.os_k : 0; }
    //! alpha of a full window (cells away from clipped edges).
    double alpha() const { return d_alpha; }
    //! The estimator that runs: segmented or summed_area (always segmented on the CPU
    //! and for os, whose per-cell selection works on the same shared-memory tile).
    cfar_estimator estimator() const { return d_estimator; }

private:
    explicit cfar_2d(const params& p);
    const params d_params;
    int d_training_cells = 0;
    double d_alpha = 0;
    cfar_estimator d_estimator = cfar_estimator::segmented;
    std::unique_ptr<detail::cfar_engine> d_engine;
};

} // namespace gpuradar::kernels

#endif
