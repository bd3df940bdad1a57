/* One-dimensional (range-only) CFAR detection. */
#ifndef INCLUDED_GPURADAR_KERNELS_CFAR_1D_H
#define INCLUDED_GPURADAR_KERNELS_CFAR_1D_H

#include <gpuradar/kernels/common/backend.h>
#include <gpuradar/kernels/common/cuda_resources.h>
#include <gpuradar/kernels/detection/cfar_common.h>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace gpuradar::kernels {

namespace detail {
class cfar_engine;
}

//! Configuration of a cfar_1d; every field is checked by cfar_1d::make.
struct cfar_1d_params {
    std::size_t nrange = 0;   //!< range bins per line (contiguous), >= 1
    std::size_t channels = 1; //!< lines per item, channel-major
    int guard = 1;            //!< guard cells per side, >= 0
    int train = 8;            //!< training cells per side, >= 1
    cfar_edge edge = cfar_edge::clip;
    cfar_variant variant = cfar_variant::ca;
    int os_k = 0;              //!< os rank in [1, N = 2 train]; see cfar_default_os_k
    double pfa = 1e-6;         //!< design false-alarm probability per cell, in (0, 1)
    bool local_max = false;    //!< keep only detections not below either neighbour
    std::size_t max_items = 1; //!< most items one run() may take, >= 1
    std::size_t max_detections = 65536; //!< room in the detection list per run(), >= 1
    cfar_estimator estimator = cfar_estimator::automatic; //!< CUDA only
};

/*!
 * \brief Range-only CFAR on square-law power lines (single pulses, or pulses after
 * integration): an item holds channels x nrange floats, channel-major, range contiguous;
 * each (item, channel) is an independent line, numbered line = item * channels + channel.
 *
 * The window of a cell is `train` training cells on each side beyond `guard` guard cells;
 * the leading half (lower range) and lagging half (higher range) are the lead and lag
 * halves of cfar_variant. Edges, alpha, non-finite input, local maxima (here: the cell is
 * the largest of itself and its two range neighbours), the detection list and its
 * overflow behave as in cfar_2d. A detection reports map = line, range_bin, doppler_bin
 * 0.
 */
class cfar_1d
{
public:
    using params = cfar_1d_params;

    //! Validates `p` ("gpuradar::cfar_1d: <param> must be ..."), then makes workspaces.
    static std::unique_ptr<cfar_1d>
    make(backend b, const params& p, stream_ref stream = stream_ref());
    //! make()'s parameter checks, allocating nothing; the maps of one run() within
    //! max_buffer_elements and max_buffer_bytes (buffer_size.h).
    static void validate(const params& p);

    ~cfar_1d();
    cfar_1d(const cfar_1d&) = delete;
    cfar_1d& operator=(const cfar_1d&) = delete;

    /*!
     * Detect on `nitems` items (1 <= nitems <= max_items). Pointers as in cfar_2d::run:
     * device pointers on CUDA (queued, not waited for), host pointers on the CPU;
     * `threshold` may be null.
     */
    void
    run(const float* power, std::uint8_t* mask, float* threshold, std::size_t nitems);

    //! Detections and non-finite counts (per line) of the last run(); see
    //! cfar_2d::collect.
    cfar_report collect();

    const params& get_params() const { return d_params; }
    int training_cells() const { return 2 * d_params.train; }
    int os_k() const { return d_params.variant == cfar_variant::os ? d_params.os_k : 0; }
    double alpha() const { return d_alpha; }
    cfar_estimator estimator() const { return d_estimator; }

private:
    explicit cfar_1d(const params& p);
    const params d_params;
    double d_alpha = 0;
    cfar_estimator d_estimator = cfar_estimator::segmented;
    std::unique_ptr<detail::cfar_engine> d_engine;
};

} // namespace gpuradar::kernels

#endif
