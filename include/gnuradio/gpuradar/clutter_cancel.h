/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_GPURADAR_CLUTTER_CANCEL_H
#define INCLUDED_GPURADAR_CLUTTER_CANCEL_H

#include <gnuradio/gpuradar/api.h>
#include <gnuradio/sync_block.h>
#include <string>
#include <vector>

namespace gr {
namespace gpuradar {

/*!
 * \brief Passive radar: cancels the direct path and static clutter in each surveillance
 * channel by a fit of delayed copies of the reference channel (ECA-B or block NLMS),
 * one CPI at a time.
 * \ingroup gpuradar
 *
 * Streams (gr_complex, continuous, one sample rate): input 0 the reference channel,
 * inputs 1..nsurv the surveillance channels; output 0 the reference unchanged, outputs
 * 1..nsurv the cleaned surveillance channels, e = s - sum_d a_d r[n - d] (d < ntaps),
 * ready for cross_ambiguity (input 0 the reference, input 1 a cleaned channel). Every
 * nsamples samples of each channel make one CPI; kernels::clutter_cancel does the work
 * (its header has the equations):
 *
 * - "eca_b": least squares per batch of nsamples / nbatches samples (optionally with
 *   the copies shifted by +-1 Doppler bin), each CPI on its own. Removes everything in
 *   the span of the delayed reference within a batch: the direct path, clutter at
 *   delays below ntaps, and also a target there whose Doppler is well inside one
 *   batch's resolution (zero-Doppler targets are cancelled as clutter). A moving
 *   target loses about ntaps / (nsamples / nbatches) of its power.
 * - "nlms": block-normalised LMS (step nlms_step, a weight update every nlms_block
 *   samples), its weights carried from CPI to CPI: for streaming, the first CPIs
 *   converging.
 *
 * Reporting, per CPI: a message on port "cancellation" (dict: cpi index,
 * cancellation_db, power_before, power_after as f64 vectors of nsurv, one per channel;
 * loaded_batches and nonfinite_samples summed over the channels), a `cancellation_db`
 * tag (double) on each cleaned channel's first sample of the CPI, the debug logger
 * (every CPI) and a rate-limited warning when a least-squares system was singular
 * (solved with diagonal loading; never NaN) or input samples were NaN/inf (used as 0).
 * Stream tags pass one to one (input k to output k).
 *
 * Sample rates: the block has no rate parameter, but compares the `rx_rate` tags
 * (samples/s; stamped by UHD, Soapy and osmosdr sources and the module's sources) of
 * the reference and every surveillance input, each holding from its sample on. A CPI
 * during which a surveillance channel's rate differs from the reference's (by more than
 * 1e-9 relative) is not cancelled: its surveillance outputs are zero (no false
 * detections from mixed rates downstream; cross_ambiguity drops such CPIs too), an error
 * naming both inputs and rates is logged (rate-limited) and it is counted in
 * rate_mismatch_cpis(); cancelling resumes, afresh (as after reset: no reference
 * history, NLMS weights from zero), when the rates agree again. An input with no
 * `rx_rate` tag is not compared.
 */
class GPURADAR_API clutter_cancel : virtual public gr::sync_block
{
public:
    typedef std::shared_ptr<clutter_cancel> sptr;

    /*!
     * \param nsamples          N, samples per CPI (>= 1)
     * \param ntaps             K, reference delays 0..K-1 (samples); ECA-B: K (3K with
     *                          Doppler taps) <= N / nbatches and <= 4096, and
     *                          nbatches x (that)^2 <= 2^27; NLMS: K <= N
     * \param nbatches          ECA-B batches per CPI (divides N)
     * \param method            "eca_b" or "nlms"
     * \param nsurv             surveillance channels (1 to 64)
     * \param doppler_taps      ECA-B: also the copies shifted by +-1 Doppler bin
     * \param diagonal_loading  ECA-B: loading relative to the mean diagonal (>= 0)
     * \param nlms_step         NLMS: normalised step mu, in (0, 2)
     * \param nlms_block        NLMS: samples per weight update (divides N)
     * \param backend           "auto", "cuda" or "cpu"
     * \param device            CUDA device (0 to number of GPUs - 1)
     * Bad values: std::invalid_argument naming the parameter, before anything is
     * allocated.
     */
    static sptr make(unsigned int nsamples,
                     unsigned int ntaps,
                     unsigned int nbatches = 1,
                     const std::string& method = "eca_b",
                     unsigned int nsurv = 1,
                     bool doppler_taps = false,
                     double diagonal_loading = 0.0,
                     double nlms_step = 0.1,
                     unsigned int nlms_block = 64,
                     const std::string& backend = "auto",
                     int device = 0);

    //! The last CPI's cancellation per surveillance channel (dB; empty before the first).
    virtual std::vector<double> cancellation_db() const = 0;
    //! CPIs cancelled so far.
    virtual std::uint64_t cpis() const = 0;
    //! CPIs not cancelled because the inputs' `rx_rate` tags disagreed.
    virtual std::uint64_t rate_mismatch_cpis() const = 0;
    //! "eca_b" or "nlms".
    virtual std::string method() const = 0;
    //! The backend actually running: "cuda" or "cpu".
    virtual std::string backend() const = 0;
    //! The `device` parameter.
    virtual int device() const = 0;
};

} // namespace gpuradar
} // namespace gr

#endif
