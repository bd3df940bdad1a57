/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef INCLUDED_GPURADAR_SAR_FOCUS_H
#define INCLUDED_GPURADAR_SAR_FOCUS_H

#include <gnuradio/block.h>
#include <gnuradio/gpuradar/api.h>
#include <gnuradio/gpuradar/stripmap_acquisition.h>
#include <cstdint>
#include <string>

namespace gr {
namespace gpuradar {

/*!
 * sar_focus's parameters as named fields, for C++ callers: pass them to
 * sar_focus::make(const params&). These initialisers are the block's defaults: the flat
 * make() and the Python binding take theirs from here.
 */
struct sar_focus_params {
    stripmap_acquisition acquisition; //!< the pass the echoes were acquired on
    //! "csa" (chirp scaling); "rda" and "omega_k" are reserved, refused as not
    //! implemented yet
    std::string algorithm = "csa";
    //! pulses per azimuth block: 0 picks the smallest 2^a 3^b 5^c length
    //! >= max(4 (lead + trail), 256); else > lead + trail
    unsigned int naz = 0;
    std::string range_window = "rectangular";   //!< window over the chirp band
    std::string azimuth_window = "rectangular"; //!< window over the 3 dB Doppler band
    std::string backend = "auto";               //!< "auto", "cuda" or "cpu"
    int device = 0;                             //!< CUDA device (0 to number of GPUs - 1)
};

/*!
 * \brief Stripmap SAR focusing of a continuous pulse stream, in overlapping azimuth
 * blocks.
 * \ingroup gpuradar
 *
 * In: raw (uncompressed) echoes, one pulse per item = nrange gr_complex (device buffer
 * on CUDA), acquired as the parameters say (kernels/stripmap.h; a stripmap_source
 * makes such a stream). Out: the focused image, one azimuth line per item = nrange
 * gr_complex in zero-Doppler geometry (column k at closest-approach slant range
 * near_range + k c / (2 fs); device buffer on CUDA).
 *
 * The stream is focused in blocks of naz pulses (kernels::csa). The first `lead` and the
 * last `trail` rows of a block are only partly focused (the synthetic aperture, shifted
 * by the squint, runs off the block; both computed at the near and far edges of the range
 * window), so consecutive blocks overlap by lead + trail pulses and each block emits only
 * its stride = naz - lead - trail fully focused middle rows: every row once, in order,
 * without seams. Output row j is the zero-Doppler line of input pulse j + lead of the
 * strip; the first `lead` pulses of a strip are never emitted, nor the rows of a last,
 * incomplete block at the end of a finite stream.
 *
 * Tags: a `stripmap` tag (docs/CONVENTIONS.md) inside a block starts a new strip there
 * (a gap or a new pass upstream): the incomplete block is dropped, counted (restarts()),
 * and focusing starts again at the tag, never across it. A tag whose acquisition
 * parameters differ from the block's is counted (mismatched_tags()) and logged; the
 * block focuses with its own parameters. The first output row of every strip carries a
 * `stripmap` tag with the block's parameters, `pulse` (the input pulse of that row) and
 * `y0` (its along-track position, m) and `dy` (row spacing velocity / prf, m).
 */
class GPURADAR_API sar_focus : virtual public gr::block
{
public:
    typedef std::shared_ptr<sar_focus> sptr;
    using params = sar_focus_params;

    /*!
     * The block from named parameters (sar_focus_params), checked as the flat make()
     * checks them.
     */
    static sptr make(const params& p);

    /*!
     * The same, one argument per field (the acquisition's first), in the order GRC and
     * Python use; the defaults are sar_focus_params's.
     * Acquisition (as stripmap_source, kernels::stripmap_params::validate):
     * \param fc, bandwidth, pulse_width, up_chirp, fs, prf, velocity, altitude,
     *        near_range, nrange, squint, antenna_length
     * Focusing:
     * \param algorithm       "csa" (chirp scaling); "rda" and "omega_k" are reserved
     *                        names, refused as not implemented yet
     * \param naz             pulses per azimuth block: 0 picks the smallest 2^a 3^b 5^c
     *                        length >= max(4 (lead + trail), 256); else > lead + trail
     * \param range_window    window over the chirp band (window.h names)
     * \param azimuth_window  window over the 3 dB Doppler band
     * \param backend         "auto", "cuda" or "cpu"
     * \param device          CUDA device (0 to number of GPUs - 1) the block's stream,
     *                        plans and memory live on; checked before anything is
     *                        allocated (std::invalid_argument naming `device` and the
     *                        range). The CPU backend refuses a negative index and logs
     *                        and ignores any other.
     */
    static sptr make(double fc,
                     double bandwidth,
                     double pulse_width,
                     bool up_chirp,
                     double fs,
                     double prf,
                     double velocity,
                     double altitude,
                     double near_range,
                     unsigned int nrange,
                     double squint,
                     double antenna_length,
                     const std::string& algorithm = params{}.algorithm,
                     unsigned int naz = params{}.naz,
                     const std::string& range_window = params{}.range_window,
                     const std::string& azimuth_window = params{}.azimuth_window,
                     const std::string& backend = params{}.backend,
                     int device = params{}.device);

    //! Pulses per azimuth block.
    virtual unsigned int naz() const = 0;
    //! Partly focused rows at the start of each block (not emitted).
    virtual unsigned int lead() const = 0;
    //! Partly focused rows at the end of each block (not emitted).
    virtual unsigned int trail() const = 0;
    //! Rows emitted per block: naz - lead - trail.
    virtual unsigned int stride() const = 0;
    //! Azimuth blocks focused so far.
    virtual std::uint64_t blocks() const = 0;
    //! Strips restarted at a `stripmap` tag inside a block.
    virtual std::uint64_t restarts() const = 0;
    //! `stripmap` tags whose parameters differ from the block's.
    virtual std::uint64_t mismatched_tags() const = 0;
    //! Blocks whose focusing failed (their rows are emitted as zeros, logged).
    virtual std::uint64_t failed_blocks() const = 0;
    virtual std::string algorithm() const = 0;
    virtual std::string backend() const = 0;
    //! The `device` parameter.
    virtual int device() const = 0;
};

} // namespace gpuradar
} // namespace gr

#endif
