/* Passive radar: the cross-ambiguity function (range x Doppler map) of a surveillance
 * channel against the reference channel over one CPI. */
#ifndef INCLUDED_GPURADAR_KERNELS_CROSS_AMBIGUITY_H
#define INCLUDED_GPURADAR_KERNELS_CROSS_AMBIGUITY_H

#include <gpuradar/kernels/common/backend.h>
#include <gpuradar/kernels/common/cuda_resources.h>
#include <gpuradar/kernels/common/window.h>
#include <cstddef>
#include <memory>

namespace gpuradar::kernels {

//! How the map is computed (cross_ambiguity, "Methods").
enum class caf_method {
    automatic, //!< the rule of cross_ambiguity_params::method
    direct,    //!< one FFT correlation of the CPI per Doppler bin: exact
    batched    //!< per-batch FFT correlation, then an FFT across batches: decimated
};

struct cross_ambiguity_params {
    std::size_t nsamples = 0;     //!< N, samples per CPI in each channel, >= 2
    std::size_t nrange = 0;       //!< M, range lags 0..M-1 (samples), 1 to N
    std::size_t doppler_half = 0; //!< K, Doppler bins -K..K (2K+1 in all), 2K+1 <= N
    //! L, samples per batch (batched method): divides N, N / L >= 2K + 1. 0: chosen,
    //! the largest divisor of N giving at least max(4K, 2K + 1) batches.
    std::size_t batch_length = 0;
    caf_method method = caf_method::automatic;
    //! Slow-time taper: over the N samples (direct) or the N / L batches (batched).
    window_spec window;
    bool db = false; //!< false: power |X|^2; true: 10 log10(max(|X|^2, FLT_MIN))
    //! automatic: batched when its Doppler-straddle loss at the edge bin K is at most
    //! this (dB, > 0) with the batch length in use (given or chosen); else direct.
    double max_straddle_loss_db = 1.0;
};

/*!
 * \brief Cross-ambiguity map of a surveillance channel s against a reference r over one
 * CPI of N samples:
 *
 *     X[m, k] = sum_{n=0}^{N-1} w(n) s[n] conj(r[n - m]) exp(-j 2 pi k n / N),
 *     map[m, k] = |X[m, k]|^2 (power) or its dB,
 *
 * for range lags m = 0..M-1 (samples of bistatic delay: bistatic range m c / fs minus
 * the baseline) and Doppler bins k = -K..K (k / N cycles per sample, k fs / N Hz); r[n]
 * is 0 for n < 0 (the correlation is linear, never wrapped). Sign: an echo s[n] = a
 * r[n - m0] exp(+j 2 pi f n / fs) of a target closing in bistatic range (bistatic range
 * decreasing, Doppler f = v fc / c > 0, v the bistatic velocity, closing positive as in
 * CONVENTIONS.md) peaks at m0 and k = f N / fs > 0: positive bins are closing.
 *
 * Layout (the CFAR's, CONVENTIONS.md "Power map"; as pulse_doppler's maps with
 * fftshift): M range rows of 2K+1 Doppler bins, Doppler contiguous, element
 * map[m * (2K+1) + (k + K)]; zero Doppler at bin (2K+1)/2 = K.
 *
 * Methods (params.method):
 * - direct: for each k, s times w(n) exp(-j 2 pi k n / N), then one FFT correlation with
 *   r over the CPI (length >= N + M - 1). Exact; cost (2K+1) FFTs of the CPI.
 * - batched (decimated): the CPI in B = N / L batches of L samples; per batch b the
 *   correlation c_b[m] = sum_{i<L} s[bL+i] conj(r[bL+i-m]) by FFT (length >= L + M - 1),
 *   then X[m, k] = sum_b w(b) c_b[m] exp(-j 2 pi k b / B) (an FFT of B over the batches).
 *   The phase of exp(-j 2 pi k n / N) is held constant across each batch, so a target
 *   at bin k loses the batch's coherent sum |D_L(k)| = |sin(pi k L / N) / (L sin(pi k
 *   / N))| in amplitude (the straddle loss, -20 log10 |D_L(k)| dB, largest at k = K,
 *   3.9 dB at B = 2K+1, 0.9 dB at B = 4K), and Doppler beyond B / 2 aliases: B >= 2K+1
 *   is required. Cost B FFTs of about L + M plus M FFTs of B.
 * - automatic: batched when straddle_loss_db(K) <= max_straddle_loss_db with the batch
 *   length in use, else direct.
 *
 * Powers are unnormalised (no 1/N). CPU: FFTW, single precision, sums of FFT outputs;
 * CUDA: cuFFT, the same steps; the two agree to float rounding.
 */
class cross_ambiguity
{
public:
    /*!
     * The checks of make() alone, before anything is allocated: std::invalid_argument
     * "gpuradar::cross_ambiguity: <param> must be <range> (got <value>)".
     */
    static void validate(const cross_ambiguity_params& p);

    /*!
     * After validate(): the backend's engine. CUDA queues its work on `stream`; run()
     * waits for it.
     */
    static std::unique_ptr<cross_ambiguity>
    make(backend b, const cross_ambiguity_params& p, stream_ref stream = stream_ref());
    virtual ~cross_ambiguity() = default;

    /*!
     * The map of `surveillance` (N samples) against `reference` (N samples) into `map`
     * (M x (2K+1) floats). Device pointers on CUDA. Returns when done.
     */
    virtual void run(const cfloat* reference, const cfloat* surveillance, float* map) = 0;

    /*!
     * run() after checking that both channels hold nsamples samples: otherwise
     * std::invalid_argument naming reference_length or surveillance_length (a CPI
     * of two receivers that disagree is refused, not truncated).
     */
    void run(const cfloat* reference,
             std::size_t reference_length,
             const cfloat* surveillance,
             std::size_t surveillance_length,
             float* map);

    //! The method the rule chose (never automatic) and the batch length it uses (N for
    //! direct).
    caf_method method() const { return d_method; }
    std::size_t batch_length() const { return d_batch_length; }
    std::size_t ndoppler() const { return 2 * d_params.doppler_half + 1; }
    const cross_ambiguity_params& params() const { return d_params; }

    //! -20 log10 |D_L(k)|: the batched method's amplitude loss at Doppler bin k (dB >=
    //! 0).
    static double
    straddle_loss_db(std::size_t nsamples, std::size_t batch_length, long k);
    //! The batch length make() uses for p (p.batch_length, or the chosen one; 0 when
    //! none fits, and then automatic is direct).
    static std::size_t choose_batch_length(const cross_ambiguity_params& p);
    //! The method make() uses for p.
    static caf_method choose_method(const cross_ambiguity_params& p);

protected:
    explicit cross_ambiguity(const cross_ambiguity_params& p);

    cross_ambiguity_params d_params;
    caf_method d_method;
    std::size_t d_batch_length;
};

} // namespace gpuradar::kernels

#endif
