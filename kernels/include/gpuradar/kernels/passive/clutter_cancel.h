/* Passive radar: direct-path and clutter cancellation of a surveillance channel by the
 * batched extensive cancellation algorithm (ECA-B). */
#ifndef INCLUDED_GPURADAR_KERNELS_CLUTTER_CANCEL_H
#define INCLUDED_GPURADAR_KERNELS_CLUTTER_CANCEL_H

#include <gpuradar/kernels/common/backend.h>
#include <gpuradar/kernels/common/cuda_resources.h>
#include <cstddef>
#include <memory>

namespace gpuradar::kernels {

//! ECA-B: a least-squares fit per batch, each CPI on its own. NLMS: block-normalised
//! least mean squares, its weights carried from CPI to CPI (streaming).
enum class cancel_method { eca_b, nlms };

struct clutter_cancel_params {
    std::size_t nsamples = 0; //!< N, samples per CPI in each channel, >= 1
    std::size_t ntaps = 0;    //!< K, reference delays 0..K-1 (samples), >= 1
    cancel_method method = cancel_method::eca_b;
    std::size_t nbatches = 1; //!< ECA-B: B, batches per CPI: divides N
    //! also the copies shifted by +-1 Doppler bin of the CPI (exp(+-j 2 pi n / N)): 3K
    //! columns, for clutter spread over the bins next to zero Doppler
    bool doppler_taps = false;
    //! Diagonal loading always added, relative to the mean diagonal of the normal
    //! equations (>= 0; 0: none unless the system is singular)
    double diagonal_loading = 0.0;
    //! NLMS: mu, the normalised step, in (0, 2) (stable); smaller converges slower and
    //! leaves less excess residual
    double nlms_step = 0.1;
    //! NLMS: samples per weight update (the block of block-NLMS; 1: textbook NLMS):
    //! divides N
    std::size_t nlms_block = 64;
    //! Surveillance channels cancelled against the one reference by run_channels(), in
    //! [1, clutter_cancel::max_nsurv]: ECA-B forms the reference's normal matrices and
    //! their factorisation once for all of them (the channels differ only in their
    //! right-hand sides); NLMS keeps each channel's weights
    std::size_t nsurv = 1;
};

//! What one CPI's cancellation did.
struct clutter_cancel_result {
    double power_before = 0;    //!< mean |s|^2 of the surveillance input
    double power_after = 0;     //!< mean |e|^2 of the output
    double cancellation_db = 0; //!< 10 log10(power_before / power_after) (0 when both 0)
    std::size_t loaded_batches = 0; //!< batches whose system was singular: solved loaded
    std::size_t nonfinite_samples =
        0; //!< NaN/inf input samples (either channel), used as 0
};

/*!
 * \brief ECA-B (Colone, O'Hagan, Lombardo and Baker, IEEE Trans. AES 45(2), 2009): the
 * CPI of N samples in B batches of L = N / B; in each batch b the surveillance samples
 * s[n] (n in [bL, bL + L)) are fitted in the least-squares sense by the columns
 *
 *     x_{d,q}[n] = r[n - d] exp(j 2 pi q n / N),  d = 0..K-1, q = 0 (or -1, 0, +1),
 *
 * (the reference before the batch is used, never wrapped; r[n] for n < 0 is the
 * previous run()'s last K - 1 samples, 0 after make() or reset(): in a continuous
 * stream the first samples of a CPI hold echoes of the previous one's reference, which
 * the fit must see to cancel), and the fit subtracted: e = s - X a with (X^H X + delta I)
 * a = X^H s, solved by Cholesky (LAPACK's zpotrf / zpotrs on the CPU); delta =
 * diagonal_loading * tr(X^H X) / columns, or, when the factorisation fails (a singular
 * system: a reference of zeros, a tone), 1e-6 * tr / columns (1 when the trace is 0),
 * the batch counted in loaded_batches. The output is never NaN.
 *
 * What it removes: anything in the span of the delayed reference within a batch — the
 * direct path (d = 0), static clutter at delays below K, and so also a target at a
 * bistatic delay below K whose Doppler is well inside one batch's resolution (|f| << B
 * / N cycles per sample, e.g. zero Doppler): such targets are cancelled as clutter.
 * A target beyond K taps or moving loses about K / L of its power (the fit's degrees
 * of freedom per batch), the CAF's integration gain otherwise intact.
 *
 * CPU: double precision (normal equations built by the Toeplitz recursion along their
 * diagonals). CUDA: single precision, cuSOLVER batched Cholesky. Without Doppler taps
 * the normal matrix is Toeplitz up to edge terms, R[i][j] = A[i - j] + sum over the
 * j samples that enter before the batch minus the j that leave at its end, with
 * A[d] = sum_n conj(r[n - d]) r[n] the batch's autocorrelation: one pass over the
 * reference gives A and the right-hand side, O(K N) work and O(N) memory, and the fit
 * is subtracted sample by sample. With Doppler taps the columns are materialised,
 * N x 3K complex floats of device memory, and cuBLAS batched products form the
 * system.
 *
 * NLMS (method nlms; streaming): block-normalised LMS over the K delays (no Doppler
 * taps, no batches), the same arithmetic on both backends. Per block of P =
 * nlms_block samples starting at n0, with the weights w held over the block:
 *
 *     e[n] = s[n] - sum_d w_d r[n - d],           n in [n0, n0 + P)
 *     w_d += mu sum_n e[n] conj(r[n - d]) / sum_n sum_d |r[n - d]|^2
 *
 * (no update when the reference is silent over the block). P = 1 is textbook NLMS;
 * larger P updates P times less often (slower convergence in samples) but lets the
 * GPU work on P samples at once: CUDA runs the blocks in order in one thread block,
 * as an adaptive filter must. The weights and the last K - 1 reference samples carry
 * over to the next run() (r before the first CPI is 0); reset() forgets them. The
 * first CPIs after a start include the convergence; NLMS tracks a changing scene
 * where ECA-B refits each batch. loaded_batches is 0 for NLMS.
 */
class clutter_cancel
{
public:
    //! Surveillance channels per run at most: a KrakenSDR has 4, large arrays stay well
    //! below this.
    static constexpr std::size_t max_nsurv = 64;

    //! Columns per batch: K, or 3K with Doppler taps.
    static std::size_t columns(const clutter_cancel_params& p)
    {
        return p.doppler_taps ? 3 * p.ntaps : p.ntaps;
    }

    /*!
     * The checks of make() alone, before anything is allocated: std::invalid_argument
     * "gpuradar::clutter_cancel: <param> must be <range> (got <value>)"; ECA-B: ntaps
     * (times 3 with Doppler taps) at most the samples per batch N / B and 4096, and
     * B x columns^2 at most 2^27 (every batch's normal matrix is held); NLMS: ntaps at
     * most N, nlms_block a divisor of N, nlms_step in (0, 2), no Doppler taps; both:
     * nsurv in [1, max_nsurv].
     */
    static void validate(const clutter_cancel_params& p);

    static std::unique_ptr<clutter_cancel>
    make(backend b, const clutter_cancel_params& p, stream_ref stream = stream_ref());
    virtual ~clutter_cancel() = default;

    /*!
     * Cancels the nsurv channels surveillance[k] (N samples each) against `reference`
     * (N) into out[k] (N, may be surveillance[k]), results[k] each channel's report
     * (its non-finite count includes the reference's). The pointer arrays are on the
     * host, the samples in device memory on CUDA. ECA-B: the reference's normal
     * matrices and their Cholesky factors are formed once, and the systems solved for
     * every channel's right-hand side; each channel's output is what a run() of that
     * channel alone gives. Returns when done.
     */
    virtual void run_channels(const cfloat* reference,
                              const cfloat* const* surveillance,
                              cfloat* const* out,
                              clutter_cancel_result* results) = 0;

    /*!
     * Cancels `surveillance` (N samples) against `reference` (N) into `out` (N, may be
     * `surveillance`): run_channels() of one channel (std::invalid_argument naming
     * nsurv unless it is 1). Device pointers on CUDA. Returns when done.
     */
    clutter_cancel_result
    run(const cfloat* reference, const cfloat* surveillance, cfloat* out);

    //! run() after checking both lengths are nsamples (std::invalid_argument naming
    //! reference_length or surveillance_length).
    clutter_cancel_result run(const cfloat* reference,
                              std::size_t reference_length,
                              const cfloat* surveillance,
                              std::size_t surveillance_length,
                              cfloat* out);

    //! Forgets the reference history (both methods) and NLMS's weights: a new stream,
    //! not continuous with the previous run().
    virtual void reset() = 0;

    const clutter_cancel_params& params() const { return d_params; }

protected:
    explicit clutter_cancel(const clutter_cancel_params& p) : d_params(p) {}
    clutter_cancel_params d_params;
};

} // namespace gpuradar::kernels

#endif
