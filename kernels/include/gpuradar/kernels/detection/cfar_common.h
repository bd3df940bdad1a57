/*
 * CFAR (constant false-alarm rate) detection: what cfar_2d and cfar_1d share. The
 * variants, the edge modes, the threshold factor alpha for a design false-alarm
 * probability, and the detection report.
 */
#ifndef INCLUDED_GPURADAR_KERNELS_CFAR_COMMON_H
#define INCLUDED_GPURADAR_KERNELS_CFAR_COMMON_H

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace gpuradar::kernels {

/*!
 * \brief How the interference level Z of a cell under test (CUT) is formed from its
 * training cells; the threshold is T = alpha * Z and the CUT is a detection when
 * x > T (strictly: an all-zero neighbourhood never makes a zero cell a detection).
 *
 * The training cells are split into two halves that mirror each other through the CUT:
 * the \e lead half holds the cells before the CUT in memory order (range offset < 0, and
 * on the CUT's own range row the Doppler offset < 0), the \e lag half the cells after it.
 * A full window has N/2 cells in each half. In cfar_1d the halves are the classic leading
 * and lagging windows.
 *
 * - ca: Z = mean of all N training cells (cell averaging; Venter 2014).
 * - go: Z = max(mean of lead, mean of lag) (greatest-of; robust at clutter edges).
 * - so: Z = min(mean of lead, mean of lag) (smallest-of; resolves close targets).
 * - os: Z = the k-th smallest of the N training cells (ordered statistic, Rohling 1983).
 */
enum class cfar_variant { ca, go, so, os };

/*!
 * The largest power a training cell contributes (2^100, about 1.3e30): a finite cell
 * above it counts as this much. A window holds at most 2^27 cells far beyond any CFAR's,
 * so no float training sum can overflow to +Inf, and no cell of a real map comes near it
 * (a full-scale echo through a 10^7-gain chain is ~1e14; the framer clamps its input,
 * framer_copy.h). Without it one finite 3e38 cell beside another would make the sums of
 * every window holding both +Inf. The cell under test is compared unclamped.
 */
constexpr float cfar_max_training_power = 0x1p100f;

/*!
 * \brief What a window does where it leaves the map in one dimension.
 *
 * - wrap: the map is periodic in that dimension (Doppler: the spectrum is ambiguous).
 * - clip: cells outside the map do not exist. Such a window uses only the training
 *   cells inside the map; N, the halves and alpha are recomputed for the reduced window
 *   so that every cell keeps the design false-alarm probability (for os, k is scaled to
 *   the reduced count, see cfar_reduced_os_k). Precomputed once per configuration.
 */
enum class cfar_edge { wrap, clip };

/*!
 * \brief How the CUDA backend forms the interference sums of ca, go and so (os always
 * selects per cell). Both give the same detections up to rounding; the CPU backend
 * always uses separable sums. automatic is segmented, faster than the summed-area table
 * at every window size from 16 to ~3500 training cells (`gpuradar_bench
 * cfar_window_sweep`), and the summed-area table where a tall window's segmented tile
 * would not fit in shared memory.
 *
 * - segmented: separable row sums, then column sums, in shared memory; cost per cell
 *   grows with the window's width plus height.
 * - summed_area: a summed-area table (integral image, fp64) per tile in shared memory;
 *   constant cost per cell.
 */
enum class cfar_estimator { automatic, segmented, summed_area };

//! Parse "ca" | "go" | "so" | "os"; std::invalid_argument naming `variant` otherwise.
cfar_variant parse_cfar_variant(const std::string& name);
//! Parse "wrap" | "clip"; `param` names the parameter in the error ("range_edge", ...).
cfar_edge parse_cfar_edge(const std::string& name, const std::string& param);
//! Parse "automatic" | "segmented" | "summed_area".
cfar_estimator parse_cfar_estimator(const std::string& name);
const char* to_string(cfar_variant v);
const char* to_string(cfar_edge e);
const char* to_string(cfar_estimator e);

//! Training cells of one window: `lead` before the CUT, `lag` after it (see
//! cfar_variant).
struct cfar_counts {
    int lead = 0;
    int lag = 0;
    int total() const { return lead + lag; }
};

/*!
 * \brief False-alarm probability of a variant with threshold factor alpha, for a
 * square-law detector on exponentially distributed noise (complex Gaussian noise), iid.
 *
 * - ca: Pfa = (1 + alpha/N)^-N.
 * - so (halves of m = lead and n = lag cells, means compared; a = m/(alpha+m+n),
 *   b = n/(alpha+m+n)):
 *   Pfa = sum_{j<n} C(m-1+j, j) a^m b^j + sum_{i<m} C(n-1+i, i) b^n a^i.
 * - go: the same two series from j = n and i = m to infinity; equivalently
 *   Pfa = (1 + alpha/m)^-m + (1 + alpha/n)^-n - Pfa_so (evaluated as the series: no
 *   cancellation at small Pfa).
 *   For m = n = N/2 these are the closed forms of Gandhi & Kassam (1988) and Richards,
 *   Fundamentals of Radar Signal Processing (2005), sec. 7.5; the unequal case (clipped
 *   windows) follows from the same integral, E[exp(-alpha * min|max(U, V))] with U, V
 *   the Gamma-distributed half means. An empty half leaves the other one: go and so
 *   become ca on the non-empty half.
 * - os: Pfa = prod_{i=0}^{k-1} (N - i) / (N - i + alpha) (Rohling 1983).
 * Evaluated in fp64; `k` is used by os only.
 */
double cfar_pfa(cfar_variant v, cfar_counts counts, int k, double alpha);

/*!
 * \brief The threshold factor alpha that gives false-alarm probability `pfa`.
 * ca: alpha = N (pfa^(-1/N) - 1) in closed form (Venter 2014); go, so, os: bisection in
 * fp64 on cfar_pfa (monotone decreasing in alpha) to a relative width of 1e-12.
 * Throws std::invalid_argument when pfa is not in (0, 1), the counts are empty, or k is
 * not in [1, N] for os.
 */
double cfar_alpha(cfar_variant v, cfar_counts counts, int k, double pfa);

/*!
 * \brief The os rank used where a clipped window keeps n_reduced of its n_full cells:
 * the same quantile, round(k * n_reduced / n_full), clamped to [1, n_reduced].
 */
int cfar_reduced_os_k(int k, int n_full, int n_reduced);

//! Rohling's usual choice of os rank, k = round(3N/4), at least 1.
int cfar_default_os_k(int n);

//! One detection. Bins are map coordinates; `map` counts maps within one run() call.
struct cfar_detection {
    std::uint32_t map = 0;         //!< cfar_2d: cpi * channels + channel; cfar_1d: line
    std::uint32_t range_bin = 0;   //!< range bin (row of the map)
    std::uint32_t doppler_bin = 0; //!< Doppler bin (cfar_2d); always 0 in cfar_1d
    float power = 0;               //!< the cell's power (the map's value)
    float threshold = 0;           //!< T = alpha * Z at this cell
    float noise = 0;               //!< Z = T / alpha: the interference level (for SNR)
    /*!
     * The map's power at the neighbours of the cell, fetched where the map is (on the
     * GPU for the CUDA backend), for sub-bin interpolation (detection_clustering):
     * range bin - 1, range bin + 1, Doppler bin - 1, Doppler bin + 1. NaN where the
     * neighbour does not exist (beyond a clipped edge; Doppler in cfar_1d).
     */
    float range_prev = NAN, range_next = NAN;
    float doppler_prev = NAN, doppler_next = NAN;
};

//! One target: the strongest cell of a cluster of touching detections
//! (detection_clustering) and where its peak lies between bins.
struct clustered_detection {
    cfar_detection peak; //!< the cluster's strongest cell (power, threshold, noise)
    //! Interpolated peak position in (fractional) bins: peak bin + offset in
    //! [-0.5, 0.5]; the Doppler one wrapped into [0, ndoppler) when Doppler wraps.
    double range_bin = 0;
    double doppler_bin = 0;
    std::uint32_t cells = 1; //!< detected cells merged into this one
};

//! What one run() found, read back on the host with collect().
struct cfar_report {
    /*!
     * Sorted by (map, range_bin, doppler_bin); at most max_detections of them. Empty
     * when the CFAR clusters (cfar_2d_params::cluster): the cells are in `clusters`.
     */
    std::vector<cfar_detection> detections;
    //! With cfar_2d_params::cluster: one per target, sorted by their peaks' cells.
    std::vector<clustered_detection> clusters;
    //! With cfar_2d_params::cluster: the detected cells merged into `clusters`.
    std::uint64_t clustered_cells = 0;
    //! Per map of the run: cells that were NaN or +-Inf (never detections).
    std::vector<std::uint64_t> nonfinite;
    //! Detections found, including those that did not fit into the list.
    std::uint64_t found = 0;
    //! Cells listed: in `detections` or merged into `clusters`.
    std::uint64_t listed() const { return detections.size() + clustered_cells; }
    //! True when detections were dropped for lack of room (found > listed()).
    bool overflow() const { return found > listed(); }
};

} // namespace gpuradar::kernels

#endif
