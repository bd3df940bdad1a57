/*
 * CFAR internals shared by cfar_2d and cfar_1d and by both backends: the plan (window,
 * edges, the alpha table of every clip class) and the engine interface (internal).
 *
 * Both stages run on one engine that sees maps of nrows x ncols floats, columns
 * contiguous. cfar_2d: rows = range, columns = Doppler. cfar_1d: one row per line,
 * columns = range, no window across rows.
 */
#ifndef INCLUDED_GPURADAR_KERNELS_CFAR_PLAN_H
#define INCLUDED_GPURADAR_KERNELS_CFAR_PLAN_H

#include "detection/cfar_math.h"
#include <gpuradar/kernels/common/backend.h>
#include <gpuradar/kernels/common/buffer_size.h>
#include <gpuradar/kernels/common/cuda_resources.h>
#include <gpuradar/kernels/detection/cfar_common.h>
#include <gpuradar/kernels/detection/detection_clustering.h>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gpuradar::kernels::detail {

/*
 * The automatic estimator is the segmented one: `gpuradar_bench cfar_window_sweep` (CA on
 * the PD-B map, docs/PERFORMANCE.md) finds segmented sums faster than the summed-area
 * table for every window tried, square ones from N = 16 to about 3500 training cells and
 * range- or Doppler-elongated ones to about 1000; the thesis's crossover near 1000 cells
 * does not appear with both in shared memory.
 * The CUDA backend takes the summed-area table where a tall window's segmented tile
 * does not fit in shared memory.
 */

// Parameter checks shared by cfar_2d and cfar_1d; each throws through throw_invalid
// (param_check.h).
void cfar_check_extent(const char* stage, const char* param, std::size_t value);
void cfar_check_count(const char* stage, const char* param, int value);
//! 2 (guard + train) + 1 <= n, whatever the edge: a clipped window must fit the map, a
//! wrapped one must not meet itself (a cell would count twice).
void cfar_check_fits(const char* stage,
                     const char* guard_name,
                     int guard,
                     const char* train_name,
                     int train,
                     const char* n_name,
                     std::size_t n,
                     const char* edge_name,
                     cfar_edge edge);
//! The window's cells, (2 wr + 1) x (2 wc + 1), at most cfar_max_window_cells.
void cfar_check_window_cells(const char* stage, int wr, int wc);
void cfar_check_pfa(const char* stage, double pfa);
void cfar_check_os_k(const char* stage, int k, int n);
//! max_detections >= 1, and within the buffer limits (buffer_size.h) the detection list
//! and the float maps of one run(), `map_factors` (their product) cells.
void cfar_check_sizes(const char* stage,
                      std::initializer_list<size_factor> map_factors,
                      std::size_t max_detections);
//! run(): non-null input and mask, count in [0, max].
void cfar_check_run(const char* stage,
                    const float* power,
                    const std::uint8_t* mask,
                    const char* count_name,
                    std::size_t count,
                    const char* max_name,
                    std::size_t max);

/*!
 * Largest window, (2 wr + 1) x (2 wc + 1) cells. With both edges clipped the plan solves
 * alpha once per clip class, up to one class per window cell, each solve costing O(N);
 * 2^14 cells (e.g. 127 x 127) is far beyond the CFAR windows of the literature (N = 20
 * to ~1000) and bounds the plan's worst case to seconds.
 */
constexpr long cfar_max_window_cells = 1L << 14;

struct cfar_plan_request {
    const char* stage = "cfar";
    int guard_rows = 0, train_rows = 0, guard_cols = 0, train_cols = 0;
    cfar_edge row_edge = cfar_edge::clip, col_edge = cfar_edge::wrap;
    cfar_variant variant = cfar_variant::ca;
    int os_k = 0;
    double pfa = 1e-6;
    bool local_max = false;
    int local_max_rows = 1; //!< neighbourhood half-height: 1 (3x3) in 2-D, 0 in 1-D
    cfar_estimator estimator = cfar_estimator::automatic;
    std::size_t max_maps = 1;
    std::size_t max_detections = 1;
    //! Set: collect() reports clusters (cfar_2d_params::cluster) over these maps.
    std::optional<detection_clustering_params> clustering;
};

//! Everything a backend needs, computed once per configuration on the host.
struct cfar_plan : cfar_plan_request {
    int n_full = 0;          //!< training cells of a full window
    double alpha_full = 0;   //!< alpha of a full window
    cfar_estimator resolved; //!< the request's choice; automatic and os: segmented
    //! One entry per clip class: (2 wr + 1) x (2 wc + 1), row class major
    //! (cfar_clip_class).
    std::vector<cfar_class_entry> classes;

    int wr() const { return guard_rows + train_rows; }
    int wc() const { return guard_cols + train_cols; }
    bool row_wrap() const { return row_edge == cfar_edge::wrap; }
    bool col_wrap() const { return col_edge == cfar_edge::wrap; }
    const cfar_class_entry& entry(int row_class, int col_class) const
    {
        return classes[std::size_t(row_class) * (2 * wc() + 1) + col_class];
    }
    const cfar_class_entry& interior() const { return entry(wr(), wc()); }
    //! (dr, dc) of every training cell of a full window, in memory order.
    std::vector<std::pair<int, int>> training_offsets() const;
};

//! Solves alpha for every clip class (fp64, cached per distinct window). The request's
//! parameters must already be valid.
cfar_plan make_cfar_plan(const cfar_plan_request& request);

//! Where the maps of one run() lie: map b starts at (b / channels) * group_stride +
//! (b % channels) * ncols; row r of a map is row_stride further per row.
struct cfar_geometry {
    std::size_t nmaps = 0;
    std::size_t nrows = 0;
    std::size_t ncols = 0;
    std::size_t row_stride = 0;
    std::size_t channels = 1;
    std::size_t group_stride = 0;

    std::size_t map_offset(std::size_t b) const
    {
        return (b / channels) * group_stride + (b % channels) * ncols;
    }
};

//! One backend's CFAR: engine detections report map = b, range_bin = row, doppler_bin =
//! col.
class cfar_engine
{
public:
    virtual ~cfar_engine() = default;
    virtual void run(const cfar_geometry& g,
                     const float* in,
                     std::uint8_t* mask,
                     float* threshold) = 0;
    virtual cfar_report collect() = 0;
    /*!
     * For each offset in `starts`, `count` values `stride` apart of `in` (an input of
     * run(): device memory on CUDA, still valid) into host `out`, count per start in
     * order. Waits for the copies.
     */
    virtual void gather(const float* in,
                        const std::vector<std::size_t>& starts,
                        std::size_t count,
                        std::size_t stride,
                        float* out) = 0;
    //! The estimator that runs: the plan's choice, unless the CUDA backend had to take
    //! the other one because the chosen one's tile does not fit in shared memory.
    virtual cfar_estimator estimator() const = 0;
};

//! What clusters a report under `plan` (cfar_report::clusters), or nothing.
std::optional<detection_clustering> make_clustering(const cfar_plan& plan);

//! The engine of backend `b` (checked usable by the caller) for maps of nrows x ncols;
//! the CUDA one queues its work on `stream`.
std::unique_ptr<cfar_engine> make_cfar_engine(backend b,
                                              const cfar_plan& plan,
                                              std::size_t nrows,
                                              std::size_t ncols,
                                              stream_ref stream);
//! CPU twin; workspaces for maps of nrows x ncols.
std::unique_ptr<cfar_engine>
make_cfar_engine_cpu(const cfar_plan& plan, std::size_t nrows, std::size_t ncols);
#ifdef GPURADAR_HAVE_CUDA
std::unique_ptr<cfar_engine> make_cfar_engine_cuda(const cfar_plan& plan,
                                                   stream_ref stream);
#endif

//! Sorts detections into (map, range_bin, doppler_bin) order.
void cfar_sort_detections(std::vector<cfar_detection>& d);

} // namespace gpuradar::kernels::detail

#endif
