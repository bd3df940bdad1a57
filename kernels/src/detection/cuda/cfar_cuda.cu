/*
 * CUDA CFAR engine: one fused kernel per run (estimate, threshold test, local maximum,
 * mask, optional threshold, device-side compaction of the detections, non-finite counts),
 * then a small dependent kernel that publishes the counters and the list's head to
 * mapped host memory.
 *
 * Each block owns a tile of tile_rows x tile_cols cells of one map and loads it with its
 * halo (the window's reach) into shared memory once. The estimator's kernel family:
 *  - segmented (cfar_segmented.cu): ca, go, so on any window;
 *  - row-vector (cfar_row_vector.cu): the segmented sums on CONVENTIONS.md's window when
 *    the run's maps are whole float4 rows (the pulse-Doppler chain's case), a thread
 *    per 4 cells;
 *  - summed-area (cfar_summed_area.cu): asked for, or taken by `automatic` where a tall
 *    window's segmented tile does not fit in shared memory;
 *  - ordered statistic (cfar_ordered_statistic.cu): os.
 */
#include "common/cuda/cuda_check.h"
#include "common/cuda/l2_residency.h"
#include "common/param_check.h"
#include "detection/cuda/cfar_cuda_kernels.cuh"
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpuradar::kernels::detail {
namespace {

using namespace cfar_cuda_kernels;

//! Cell rows per tile (4 per thread): the halo of 2 wr rows (12 for the PD window) is
//! loaded once per 32 rows instead of once per 8. Halved while shared memory is short.
constexpr int max_tile_rows = 32;
//! The os kernels' (8 per thread): their tile, halo and training offsets are a larger
//! share of a cell's instructions than the other estimators' (the rank test reads a
//! fraction of the window), so they are spread over twice the rows.
constexpr int max_os_tile_rows = 64;
//! Grid y and z limits of a launch; larger runs are split into several launches.
constexpr unsigned max_grid_yz = 65535;
//! Detections published with the counters at the end of each run (cfar_publish): a
//! typical CPI's list crosses PCIe without a second round trip; longer lists take a
//! second copy in collect().
constexpr std::size_t list_head = 1024;

class cfar_cuda final : public cfar_engine
{
public:
    cfar_cuda(const cfar_plan& plan, stream_ref stream)
        : d_plan(plan),
          d_stream(native(stream)),
          d_classes(plan.classes.size() * sizeof(cfar_class_entry)),
          d_results{ device_memory(results_bytes(plan.max_maps, plan.max_detections)),
                     device_memory(results_bytes(plan.max_maps, plan.max_detections)) },
          d_results_host(d_results[0].size())
    {
        const char* who = plan.stage;
        choose_kernel();
        if (plan.variant == cfar_variant::os) {
            const int tch = tile_cols + 2 * plan.wc();
            std::vector<int> delta;
            for (const auto& [dr, dc] : plan.training_offsets())
                delta.push_back(dr * tch + dc);
            d_os_delta = device_memory(delta.size() * sizeof(int));
            copy_async(d_os_delta.get(),
                       delta.data(),
                       d_os_delta.size(),
                       copy_kind::host_to_device,
                       stream,
                       who);
        }
        copy_async(d_classes.get(),
                   plan.classes.data(),
                   d_classes.size(),
                   copy_kind::host_to_device,
                   stream,
                   who);
        void* mapped = nullptr;
        GPURADAR_CUDA_CHECK(who,
                            cudaHostGetDevicePointer(&mapped, d_results_host.get(), 0));
        d_results_host_device = static_cast<unsigned long long*>(mapped);
        if (d_clustering) {
            d_clusters_memory = pinned_memory(cluster_area_bytes());
            GPURADAR_CUDA_CHECK(
                who, cudaHostGetDevicePointer(&mapped, d_clusters_memory.get(), 0));
            d_clusters_host = cluster_area_at(d_clusters_memory.get());
            d_clusters_device = cluster_area_at(mapped);
        }
        // The first run's counters start at zero; every run zeroes the other area's.
        for (const auto& area : d_results)
            GPURADAR_CUDA_CHECK(
                who,
                cudaMemsetAsync(area.get(), 0, counters_bytes(plan.max_maps), d_stream));
        // The tables above are copied from host vectors that die with this constructor.
        GPURADAR_CUDA_CHECK(who, cudaStreamSynchronize(d_stream));
    }

    void
    run(const cfar_geometry& g, const float* in, std::uint8_t* mask, float* thr) override
    {
        d_last_maps = g.nmaps;
        if (g.nmaps == 0)
            return;
        // Results of this run, one block of memory: [found][non-finite per map][list],
        // in the area this run's kernel counts into; the kernel zeroes the other area's
        // counters for the next run (begin_cfar_kernel), so no memset runs here.
        d_area ^= 1u;
        device_memory& results = d_results[d_area];
        kernel_args a = run_args(g, in, mask, thr, results);
        const std::size_t nmaps = flatten_one_row_maps(g, a);
        if (row_vector_fits(g, a, in, mask, thr)) {
            const bool stream = g.nmaps * g.nrows * g.ncols * sizeof(float) <= d_l2_bytes;
            launch_tiles(a, d_vec_kernel[stream], nmaps, vec_tile_rows, vec_tile_cols, 0);
        } else {
            const kernel_fn k = thr && d_kernel_thr ? d_kernel_thr : d_kernel;
            launch_tiles(a, k, nmaps, d_tile_rows, tile_cols, d_smem_bytes);
        }
        publish(results, g.nmaps, g);
    }

    cfar_report collect() override
    {
        const char* who = d_plan.stage;
        cfar_report r;
        if (d_last_maps == 0)
            return r;
        // One wait for the run and its copy back; a second only for a list longer than
        // the head that copy carried.
        GPURADAR_CUDA_CHECK(who, cudaStreamSynchronize(d_stream));
        const auto* counters = d_results_host.as<unsigned long long>();
        r.found = counters[0];
        r.nonfinite.assign(counters + 1, counters + 1 + d_last_maps);
        const std::size_t n = std::min<std::uint64_t>(r.found, d_plan.max_detections);
        if (d_clustering && *d_clusters_host.count != cluster_fallback) {
            const std::size_t nclusters = *d_clusters_host.count;
            std::vector<cfar_detection> peaks;
            peaks.reserve(nclusters);
            for (std::size_t i = 0; i < nclusters; ++i)
                peaks.push_back(to_cfar_detection(d_clusters_host.peaks[i]));
            r.clusters = d_clustering->from_peaks(
                peaks,
                std::vector<std::uint32_t>(d_clusters_host.cells,
                                           d_clusters_host.cells + nclusters));
            r.clustered_cells = n;
            return r;
        }
        const std::size_t head = std::min(list_head, d_plan.max_detections);
        device_detection* list = list_of(d_results_host.as<char>(), d_last_maps);
        if (n > head) {
            copy_async(list + head,
                       list_of(d_results[d_area].as<char>(), d_last_maps) + head,
                       (n - head) * sizeof(device_detection),
                       copy_kind::device_to_host,
                       stream_ref(d_stream),
                       who);
            GPURADAR_CUDA_CHECK(who, cudaStreamSynchronize(d_stream));
        }
        r.detections.reserve(n);
        for (std::size_t i = 0; i < n; ++i)
            r.detections.push_back(to_cfar_detection(list[i]));
        cfar_sort_detections(r.detections);
        if (d_clustering)
            d_clustering->cluster_report(r);
        return r;
    }

    void gather(const float* in,
                const std::vector<std::size_t>& starts,
                std::size_t count,
                std::size_t stride,
                float* out) override
    {
        // One strided copy per start: detections are few, and no kernel is needed.
        const char* who = d_plan.stage;
        for (std::size_t i = 0; i < starts.size(); ++i)
            GPURADAR_CUDA_CHECK(who,
                                cudaMemcpy2DAsync(out + i * count,
                                                  sizeof(float),
                                                  in + starts[i],
                                                  stride * sizeof(float),
                                                  sizeof(float),
                                                  count,
                                                  cudaMemcpyDeviceToHost,
                                                  d_stream));
        GPURADAR_CUDA_CHECK(who, cudaStreamSynchronize(d_stream));
    }

    cfar_estimator estimator() const override { return d_estimator; }

private:
    static cfar_detection to_cfar_detection(const device_detection& x)
    {
        cfar_detection d{ x.map, x.row, x.col, x.power, x.threshold, x.noise };
        set_neighbours(d, x.neighbours);
        return d;
    }

    //! The mapped buffer the clustering publish step writes: [count][peaks][cells].
    struct cluster_area {
        unsigned long long* count = nullptr;
        device_detection* peaks = nullptr;
        unsigned* cells = nullptr;
    };
    static std::size_t cluster_area_bytes()
    {
        return sizeof(unsigned long long) +
               cfar_device_cluster_limit * (sizeof(device_detection) + sizeof(unsigned));
    }
    static cluster_area cluster_area_at(void* base)
    {
        cluster_area a;
        a.count = static_cast<unsigned long long*>(base);
        a.peaks = reinterpret_cast<device_detection*>(a.count + 1);
        a.cells = reinterpret_cast<unsigned*>(a.peaks + cfar_device_cluster_limit);
        return a;
    }

    //! [found][non-finite per map]
    static std::size_t counter_words(std::size_t maps) { return 1 + maps; }
    static std::size_t counters_bytes(std::size_t maps)
    {
        return counter_words(maps) * sizeof(unsigned long long);
    }
    static std::size_t results_bytes(std::size_t maps, std::size_t detections)
    {
        return counters_bytes(maps) + detections * sizeof(device_detection);
    }
    //! The list follows the counters of this run's maps (8-byte aligned).
    static device_detection* list_of(char* results, std::size_t maps)
    {
        return reinterpret_cast<device_detection*>(results + counters_bytes(maps));
    }

    //! The kernel arguments of one run, up to the launch geometry (launch_tiles).
    kernel_args run_args(const cfar_geometry& g,
                         const float* in,
                         std::uint8_t* mask,
                         float* thr,
                         device_memory& results) const
    {
        kernel_args a{};
        a.in = in;
        a.mask = mask;
        a.thr = thr;
        a.nrows = int(g.nrows);
        a.ncols = int(g.ncols);
        a.channels = int(g.channels);
        a.group_stride = (long long)g.group_stride;
        a.row_stride = (long long)g.row_stride;
        a.rows_per_label = int(g.nrows);
        a.gr = d_plan.guard_rows;
        a.tr = d_plan.train_rows;
        a.gc = d_plan.guard_cols;
        a.tc = d_plan.train_cols;
        a.row_wrap = d_plan.row_wrap();
        a.col_wrap = d_plan.col_wrap();
        a.local_max = d_plan.local_max;
        a.lm_rows = d_plan.local_max_rows;
        a.classes = d_classes.as<cfar_class_entry>();
        a.interior = d_plan.interior();
        a.os_delta = d_os_delta.as<int>();
        a.os_n = d_plan.n_full;
        a.det_count = results.as<unsigned long long>();
        a.nonfinite = a.det_count + 1;
        a.det_list = list_of(results.as<char>(), g.nmaps);
        a.det_capacity = d_plan.max_detections;
        a.reset_n = int(counter_words(d_plan.max_maps));
        return a;
    }

    /*!
     * Maps of one row that no window or neighbourhood crosses (cfar_1d) and that lie
     * back to back are launched as the rows of one map, so that the tiles are full.
     * Returns the maps to launch.
     */
    std::size_t flatten_one_row_maps(const cfar_geometry& g, kernel_args& a) const
    {
        const bool one_row = g.nrows == 1 && d_plan.wr() == 0 &&
                             (!d_plan.local_max || d_plan.local_max_rows == 0) &&
                             g.channels == 1 && g.group_stride == g.ncols;
        if (!one_row)
            return g.nmaps;
        a.nrows = int(g.nmaps);
        a.row_stride = (long long)g.ncols;
        a.rows_per_label = 1;
        return 1;
    }

    //! Whether the row-vector kernel takes this run: compiled for the window, whole
    //! float4 rows and maps, 16-byte aligned input and thresholds, 4-byte aligned mask.
    bool row_vector_fits(const cfar_geometry& g,
                         const kernel_args& a,
                         const float* in,
                         const std::uint8_t* mask,
                         const float* thr) const
    {
        return d_vec_kernel[0] != nullptr && g.ncols % vec_width == 0 &&
               std::size_t(a.row_stride) % vec_width == 0 &&
               g.group_stride % vec_width == 0 && aligned(in, 16) && aligned(mask, 4) &&
               (thr == nullptr || aligned(thr, 16));
    }

    //! The kernel over tiles of tile_h x tile_w cells of `nmaps` maps, split into
    //! launches within the grid's y and z limits; the first resets the other area.
    void launch_tiles(kernel_args a,
                      kernel_fn kernel,
                      std::size_t nmaps,
                      int tile_h,
                      int tile_w,
                      std::size_t smem)
    {
        a.tile_rows = tile_h;
        const unsigned col_tiles = unsigned((std::size_t(a.ncols) + tile_w - 1) / tile_w);
        const std::size_t row_tiles = (std::size_t(a.nrows) + tile_h - 1) / tile_h;
        for (std::size_t m0 = 0; m0 < nmaps; m0 += max_grid_yz) {
            for (std::size_t y0 = 0; y0 < row_tiles; y0 += max_grid_yz) {
                a.map0 = int(m0);
                a.tile_row0 = int(y0);
                const dim3 grid(
                    col_tiles,
                    unsigned(std::min<std::size_t>(max_grid_yz, row_tiles - y0)),
                    unsigned(std::min<std::size_t>(max_grid_yz, nmaps - m0)));
                const bool first = m0 == 0 && y0 == 0;
                a.reset =
                    first ? d_results[d_area ^ 1u].as<unsigned long long>() : nullptr;
                launch_dependent(d_dependent,
                                 kernel,
                                 grid,
                                 dim3(tile_cols, block_rows),
                                 smem,
                                 d_stream,
                                 d_plan.stage,
                                 a);
            }
        }
    }

    //! Back to the host: the counters and the head of the list (or the clusters),
    //! written by a small dependent kernel into the mapped pinned buffers that
    //! collect() reads.
    void publish(device_memory& results, std::size_t nmaps, const cfar_geometry& g)
    {
        publish_args a;
        a.results = results.as<unsigned long long>();
        a.host = d_results_host_device;
        a.counter_words = int(counter_words(nmaps));
        a.list = list_of(results.as<char>(), nmaps);
        a.host_list = list_of(reinterpret_cast<char*>(d_results_host_device), nmaps);
        a.head = std::min(list_head, d_plan.max_detections);
        a.capacity = d_plan.max_detections;
        if (!d_clustering) {
            launch_publish(d_dependent, d_stream, d_plan.stage, a);
            return;
        }
        cluster_args c;
        c.nrows = int(g.nrows);
        c.ncols = int(g.ncols);
        c.row_wrap = d_plan.clustering->range_wrap;
        c.col_wrap = d_plan.clustering->doppler_wrap;
        c.clusters = d_clusters_device.count;
        c.peaks = d_clusters_device.peaks;
        c.cells = d_clusters_device.cells;
        launch_publish_clusters(d_dependent, d_stream, d_plan.stage, a, c);
    }

    std::size_t smem_bytes(cfar_estimator estimator, int tile_rows) const
    {
        const std::size_t trh = tile_rows + 2 * d_plan.wr();
        const std::size_t tch = tile_cols + 2 * d_plan.wc();
        if (d_plan.variant == cfar_variant::os)
            return (trh * tch + std::max(d_plan.n_full, os_register_max)) * sizeof(float);
        if (estimator == cfar_estimator::summed_area)
            return (trh + 1) * sat_pitch(int(tch)) * (sizeof(double) + sizeof(int));
        return (trh * tch + 2 * (trh + tile_rows) * tile_cols) * sizeof(float);
    }

    //! Largest tile height (a power of two) whose shared memory fits; 0 if none does.
    int fitting_tile_rows(cfar_estimator estimator, std::size_t optin) const
    {
        const bool os = d_plan.variant == cfar_variant::os;
        for (int rows = os ? max_os_tile_rows : max_tile_rows; rows >= 1; rows /= 2)
            if (smem_bytes(estimator, rows) <= optin)
                return rows;
        return 0;
    }

    //! The estimator and tile height that fit this device's shared memory, and the
    //! kernels that run them.
    void choose_kernel()
    {
        const char* who = d_plan.stage;
        int device = 0, optin = 0;
        GPURADAR_CUDA_CHECK(who, cudaGetDevice(&device));
        GPURADAR_CUDA_CHECK(who,
                            cudaDeviceGetAttribute(
                                &optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
        choose_estimator(std::size_t(optin));
        d_smem_bytes = smem_bytes(d_estimator, d_tile_rows);
        const bool os = d_plan.variant == cfar_variant::os;
        const bool design = is_design_window(
            d_plan.guard_rows, d_plan.train_rows, d_plan.guard_cols, d_plan.train_cols);
        d_kernel = os ? ordered_statistic_kernel(d_plan.n_full, false, design)
                   : d_estimator == cfar_estimator::summed_area
                       ? summed_area_kernel(d_plan.variant)
                       : segmented_kernel(d_plan.variant, d_plan.wr(), d_plan.wc());
        d_kernel_thr =
            os ? ordered_statistic_kernel(d_plan.n_full, true, design) : nullptr;
        for (const kernel_fn k : { d_kernel, d_kernel_thr })
            if (k)
                GPURADAR_CUDA_CHECK(
                    who,
                    cudaFuncSetAttribute(k,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         int(d_smem_bytes)));
        if (d_estimator == cfar_estimator::segmented &&
            d_plan.variant != cfar_variant::os)
            choose_row_vector_kernels();
    }

    /*!
     * The plan's estimator at the tallest tile that fits `optin` bytes of shared memory.
     * A tall window may not fit the segmented tile (two row-sum planes of its halo) yet
     * fit the summed-area one; automatic then takes the one that fits.
     */
    void choose_estimator(std::size_t optin)
    {
        const char* who = d_plan.stage;
        d_estimator = d_plan.resolved;
        d_tile_rows = fitting_tile_rows(d_estimator, optin);
        const auto other = d_estimator == cfar_estimator::segmented
                               ? cfar_estimator::summed_area
                               : cfar_estimator::segmented;
        if (d_tile_rows == 0 && d_plan.estimator == cfar_estimator::automatic &&
            d_plan.variant != cfar_variant::os) {
            d_estimator = other;
            d_tile_rows = fitting_tile_rows(d_estimator, optin);
        }
        if (d_tile_rows == 0)
            throw_invalid(who,
                          "the window",
                          "small enough for the CUDA backend's shared memory (" +
                              std::to_string(optin) +
                              " bytes per block; use backend cpu)",
                          std::to_string(smem_bytes(d_estimator, 1)) + " bytes needed");
    }

    /*!
     * The row-vector kernels (plain and evict-first loads) where one is compiled for the
     * window. The plain-load one (runs larger than L2) asks for the maximum shared-memory
     * carveout, so that its vec_blocks_per_sm tiles share an SM; the evict-first one
     * keeps the default split, whose larger L1 serves the local-maximum and threshold
     * passes (`gpuradar_bench cfar_2d/PD`, threshold and local max on PD-B / PD-C).
     */
    void choose_row_vector_kernels()
    {
        for (bool stream : { false, true }) {
            const kernel_fn k = row_vector_kernel(d_plan.variant,
                                                  d_plan.guard_rows,
                                                  d_plan.train_rows,
                                                  d_plan.guard_cols,
                                                  d_plan.train_cols,
                                                  stream);
            if (k != nullptr && !stream)
                GPURADAR_CUDA_CHECK(
                    d_plan.stage,
                    cudaFuncSetAttribute(k,
                                         cudaFuncAttributePreferredSharedMemoryCarveout,
                                         int(cudaSharedmemCarveoutMaxShared)));
            d_vec_kernel[stream] = k;
        }
    }

    static bool aligned(const void* p, std::size_t bytes)
    {
        return reinterpret_cast<std::uintptr_t>(p) % bytes == 0;
    }

    const cfar_plan d_plan;
    const cudaStream_t d_stream;
    device_memory d_classes;
    device_memory d_os_delta;
    //! Two areas used by turns (d_area: the last run's), each [0] detections found,
    //! [1 + map] non-finite cells, then the detection list.
    device_memory d_results[2];
    unsigned d_area = 1;          // the first run takes area 0
    pinned_memory d_results_host; // its copy: counters and the list's head after each run
    const bool d_dependent = dependent_launch_supported(d_plan.stage); // sm_90+
    kernel_fn d_kernel = nullptr; //!< the estimator's kernel (any layout)
    //! os only: the kernel for runs with a threshold map (every cell selects), else null.
    kernel_fn d_kernel_thr = nullptr;
    //! The row-vector kernel (segmented, CONVENTIONS.md's window), or nullptr: [1] with
    //! evict-first loads, for runs whose maps fit in L2 (d_l2_bytes, see fits_in_l2).
    kernel_fn d_vec_kernel[2] = { nullptr, nullptr };
    const std::size_t d_l2_bytes = l2_cache_bytes(d_plan.stage);
    cfar_estimator d_estimator = cfar_estimator::segmented;
    int d_tile_rows = max_tile_rows;
    std::size_t d_smem_bytes = 0;
    std::size_t d_last_maps = 0;
    //! d_results_host as the device writes it (mapped pinned memory).
    unsigned long long* d_results_host_device = nullptr;
    //! With clustering: the merged detections (mapped pinned memory), as the host reads
    //! and as the device writes them.
    const std::optional<detection_clustering> d_clustering = make_clustering(d_plan);
    pinned_memory d_clusters_memory;
    cluster_area d_clusters_host, d_clusters_device;
};

} // namespace

std::unique_ptr<cfar_engine> make_cfar_engine_cuda(const cfar_plan& plan,
                                                   stream_ref stream)
{
    return std::make_unique<cfar_cuda>(plan, stream);
}

} // namespace gpuradar::kernels::detail
