/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef INCLUDED_GPURADAR_CFAR_2D_H
#define INCLUDED_GPURADAR_CFAR_2D_H

#include <gnuradio/block.h>
#include <gnuradio/gpuradar/api.h>
#include <cstdint>
#include <string>

namespace gr {
namespace gpuradar {

/*!
 * \brief Two-dimensional CFAR detector on a range-Doppler power map, with detection
 * reports.
 * \ingroup gpuradar
 *
 * In: the power map (square law, e.g. the envelope block after the Doppler filter): a CPI
 * is nrange items of float[channels * ndoppler] (one range bin each, channel-major,
 * Doppler contiguous; CONVENTIONS.md). Each (CPI, channel) is one map.
 *
 * Out 0: detection mask, uint8[channels * ndoppler] per item (1 = detection), same
 * layout. Out 1 (optional, connect it to get it): the threshold T per cell, float, same
 * layout (+Inf where the window holds NaN/Inf interference); it is not computed when
 * unconnected.
 *
 * Message port `detections`: one PDU per CPI, pmt pair (metadata dict, vector of dicts).
 * Metadata: every field of the CPI's `cpi` tag (after a pulse_framer among them
 * `nonfinite_samples`, the NaN/Inf input samples it wrote as 0), plus `cpi` (index),
 * `channels`, `ndetections` (listed), `found` (including those over max_detections),
 * `overflow` (bool), `nonfinite` (NaN/Inf cells in the CPI's map), `alpha` (full window),
 * `variant`.
 * Each detection: `range_bin`, `doppler_bin`, `channel`, `cpi` (u64), `power`,
 * `threshold`, `noise` (T / alpha), `snr_db` = 10 log10(power / noise) (doubles), and
 * - `range_m` = r0 + range_bin * c / (2 fs) when the tag has `fs` (`r0` absent: 0);
 * - `velocity_mps` when the tag has `prf`, `fc` and `ndoppler` (the Doppler filter ran):
 *   with `fftshift` true, v = (m - ndoppler/2) prf/ndoppler c/(2 fc); otherwise (false or
 *   absent) bins m >= ndoppler/2 stand for m - ndoppler (docs/CONVENTIONS.md). Positive:
 *   closing;
 * - `rx_time` (the CPI's, as in the tag) when the tag has it.
 * gnuradio.gpuradar.detections turns the PDU into plain Python dicts.
 *
 * Clustering (cluster = true): detected cells of one map that touch (range and Doppler
 * bins each within one, across an edge that wraps) are one target, listed once: its
 * strongest cell's fields, with `range_m` / `velocity_mps` at the peak interpolated
 * between bins (a parabola through the log power of the peak and its two neighbours in
 * each dimension, read from the map by the CFAR, on the GPU when the map is there),
 * plus `range_bin_interp`, `doppler_bin_interp` (fractional bins) and `cells` (cells
 * merged; on the CUDA backend merged on the GPU, up to 1024 cells per CPI, beyond that on
 * the host with the same result). The metadata adds `clustered` (true) and `cells`
 * (cells listed by the CFAR);
 * `ndetections` counts the merged detections. With max_detections too small for the
 * cells, a target's cells beyond the list are not merged (overflow is reported).
 *
 * Angles (angles = true): the channels are beams of one array (a beamformer upstream,
 * whose `cpi` tag carries beam_angles_deg, element_positions_wl and beam_weights). A
 * target detected at one cell (CPI, range bin, Doppler bin) in several beams is listed
 * once, from the beam with the most power there, and every listed detection gains
 * `azimuth_deg` (beamformer.h's convention), `azimuth_std_deg` (its standard deviation)
 * and `azimuth_beam` (first beam of the three used): amplitude-comparison monopulse on
 * the strongest beam at the cell and its two neighbours, from the map's powers there
 * (read on the GPU when the map is there) and the detection's interference estimate
 * (kernels/monopulse.h, estimate_from_powers). When the beams span elevations (an
 * azimuth x elevation grid, beam_elevations_deg in the tag) the azimuth comes from the
 * strongest beam's row and the detection also gains `elevation_deg`,
 * `elevation_std_deg` and `elevation_beam` from its column (kernels::grid_monopulse).
 * The metadata adds `angles` (true). A CPI
 * whose tag lacks the beams' geometry (or holds one that does not fit) is reported as
 * without angles (every beam's detections, no azimuths, no `angles` in the metadata)
 * and the reason logged. NaN / Inf beam powers or a zero interference
 * estimate at a cell: that detection has no azimuth.
 *
 * CPI framing: a `cpi` tag starts a CPI at its item; without tags the block counts
 * nrange items from the start of the stream. A tag inside a CPI discards the partial CPI
 * (counted, dropped_cpis()) and realigns on it. A tag whose shape differs (nrange, its
 * ndoppler or, without ndoppler, npulses, channels) is logged and the CPI discarded
 * (counted). The `cpi` tag is re-emitted on the first output item of each CPI (made with
 * index, nrange, ndoppler when none came in); other tags inside a CPI pass through at
 * their item. NaN / Inf cells are never detections; their count per CPI is logged as a
 * warning when nonzero and summed in nonfinite_cells().
 */
class GPURADAR_API cfar_2d : virtual public gr::block
{
public:
    typedef std::shared_ptr<cfar_2d> sptr;

    /*!
     * \param nrange         range bins (items) per CPI (>= 1)
     * \param ndoppler       Doppler bins per map (>= 1)
     * \param channels       maps per item, channel-major (>= 1)
     * \param guard_range    guard cells per side in range (>= 0)
     * \param train_range    training cells per side in range (>= 0)
     * \param guard_doppler  guard cells per side in Doppler (>= 0)
     * \param train_doppler  training cells per side in Doppler (>= 0; train_range +
     *                       train_doppler >= 1)
     * \param pfa            design false-alarm probability per cell, in (0, 1)
     * \param variant        "ca" (cell averaging), "go" (greatest of), "so" (smallest
     *                       of), "os" (ordered statistic)
     * \param os_k           os: rank of the order statistic in [1, N] (N = training
     *                       cells); 0 = round(3N/4). Ignored by the other variants.
     * \param range_edge     "clip" (default: the window uses only cells inside the map,
     *                       alpha recomputed per clipped window) or "wrap"
     * \param doppler_edge   "wrap" (default: Doppler is periodic) or "clip"
     * \param local_max_only report only cells that peak in their 3x3 neighbourhood
     * \param max_detections most detections listed per CPI (>= 1; the mask is always
     *                       complete)
     * \param backend        "auto", "cuda" or "cpu"
     * \param cluster        merge the touching detected cells of a target into one
     *                       detection at its interpolated peak (see below)
     * \param angles         the map is beam-major (a beamformer's beams as channels):
     *                       give each detection an azimuth (see below); needs
     *                       channels >= 2
     * \param device         CUDA device (0 to number of GPUs - 1) the block's stream,
     *                       plans and memory live on; checked before anything is
     *                       allocated (std::invalid_argument naming `device` and the
     *                       range). The CPU backend refuses a negative index and logs and
     *                       ignores any other.
     */
    static sptr make(unsigned int nrange,
                     unsigned int ndoppler,
                     unsigned int channels = 1,
                     int guard_range = 1,
                     int train_range = 5,
                     int guard_doppler = 1,
                     int train_doppler = 1,
                     double pfa = 1e-6,
                     const std::string& variant = "ca",
                     int os_k = 0,
                     const std::string& range_edge = "clip",
                     const std::string& doppler_edge = "wrap",
                     bool local_max_only = false,
                     unsigned int max_detections = 4096,
                     const std::string& backend = "auto",
                     bool cluster = false,
                     bool angles = false,
                     int device = 0);

    /*!
     * Live control (GRC callbacks). Each setter checks its value as make() does
     * (std::invalid_argument naming the parameter; the old value stays) and the change
     * takes effect at the next CPI: every CPI is detected wholly with the old or wholly
     * with the new parameters. os_k = 0 (make()) is re-resolved for a new window.
     */
    virtual void set_pfa(double pfa) = 0;
    //! "ca", "go", "so" or "os".
    virtual void set_variant(const std::string& variant) = 0;
    virtual void set_guard_range(int guard_range) = 0;
    virtual void set_train_range(int train_range) = 0;
    virtual void set_guard_doppler(int guard_doppler) = 0;
    virtual void set_train_doppler(int train_doppler) = 0;

    //! CPIs discarded (cut short by a tag, or a tag of another shape).
    virtual std::uint64_t dropped_cpis() const = 0;
    //! NaN / Inf cells seen so far (never detections).
    virtual std::uint64_t nonfinite_cells() const = 0;
    //! CPIs whose detection list overflowed max_detections.
    virtual std::uint64_t overflowed_cpis() const = 0;
    //! Training cells N of a full window.
    virtual int training_cells() const = 0;
    //! Threshold factor alpha of a full window.
    virtual double alpha() const = 0;
    //! The os rank in use (0 for other variants).
    virtual int os_k() const = 0;
    //! The backend actually running: "cuda" or "cpu".
    virtual std::string backend() const = 0;
    //! The `device` parameter.
    virtual int device() const = 0;
};

} // namespace gpuradar
} // namespace gr

#endif
