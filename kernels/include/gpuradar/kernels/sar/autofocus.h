/* SAR autofocus: phase-gradient autofocus (PGA) of a complex image. */
#ifndef INCLUDED_GPURADAR_KERNELS_AUTOFOCUS_H
#define INCLUDED_GPURADAR_KERNELS_AUTOFOCUS_H

#include <gpuradar/kernels/common/backend.h>
#include <gpuradar/kernels/common/cuda_resources.h>
#include <complex>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace gpuradar::kernels {

//! What one autofocus run did.
struct autofocus_result {
    //! The phase error estimated per azimuth sample (rad), linear trend removed: the
    //! image was corrected by exp(-j phase_error[n]) in the azimuth-time domain (not
    //! converged: the estimate so far, not applied).
    std::vector<double> phase_error;
    int iterations = 0;                //!< iterations run
    bool converged = false;            //!< false: the output is the input, unchanged
    double last_correction_rms = 0;    //!< RMS (rad) of the last iteration's correction
    std::size_t nonfinite_samples = 0; //!< non-finite input samples (any: not run)
    std::string reason;                //!< why it did not converge ("" when it did)
};

/*!
 * \brief Phase-gradient autofocus (Wahl, Eichel, Ghiglia and Jakowatz 1994) of a
 * complex image of nrange range lines by naz azimuth samples (azimuth contiguous, or
 * along the rows: options::azimuth_contiguous). Below, "row" is a range line and
 * "column" an azimuth sample.
 *
 * Model: the image's azimuth axis is the DFT of the pulses (slow time), image[r, c] =
 * sum_n g[r, n] exp(-2 pi i c n / naz), as in spotlight and polar-format images and,
 * over a short aperture, backprojected ones; a phase error e(n) common to every range
 * row multiplies g. Each iteration:
 *  1. centre: each row circularly shifted so that its brightest sample sits at column 0,
 *     then by the rest of a bin its mean azimuth-time phase slope gives, s = arg sum_n
 *     g[n+1] conj(g[n]) (g the row's inverse DFT; the row's g times exp(-j s n)), so that
 *     an off-bin response is centred too (an integer shift alone leaves it off-bin, and
 *     the window below then bends its phase at the aperture's ends);
 *  2. window: the columns within width/2 of column 0 (circularly) are kept, where
 *     width is the extent around column 0 over which the rows' summed intensity stays
 *     within 10 dB of its peak, times 2, at least min_window and never wider than the
 *     previous iteration's;
 *  3. g = inverse DFT of each windowed row; phase gradient (the maximum-likelihood
 *     estimator): d(n) = arg sum_r g[r, n] conj(g[r, n-1]) for n >= 1, in double;
 *  4. e(n) = sum of d up to n, its least-squares line removed (a linear phase only
 *     shifts the image);
 *  5. the image is corrected: every row's inverse DFT times exp(-j e(n)), then the DFT.
 * It stops when the correction's RMS falls below tolerance_rad (converged) or after
 * max_iterations. Not converged (no point-like content, e.g. noise or a flat scene):
 * the output is the input, unchanged, and result.reason says why. An image with a
 * non-finite sample is not processed (output = input; counted).
 *
 * Both backends follow these steps in the same order; sums over rows are in double.
 */
class phase_gradient_autofocus
{
public:
    struct options {
        int max_iterations = 20; //!< 1 to 1000
        double tolerance_rad =
            0.01;                   //!< > 0: converged when the correction's RMS is below
        std::size_t min_window = 8; //!< 3 to naz: narrowest window (columns)
        //! true: the image is nrange rows of naz azimuth samples (azimuth contiguous);
        //! false: naz rows (azimuth) of nrange samples, as sar_focus's stripmap images
        bool azimuth_contiguous = true;
    };

    //! Largest image (nrange * naz samples): 2^30.
    static constexpr std::size_t max_samples = std::size_t(1) << 30;

    //! The checks of make() alone (std::invalid_argument naming the parameter).
    static void validate(std::size_t nrange, std::size_t naz, const options& o);

    /*!
     * nrange >= 1, naz 8 to 2^24, nrange*naz <= max_samples, options in their ranges:
     * else std::invalid_argument "gpuradar::autofocus: <param> must be ...", before
     * anything is allocated. CUDA queues its work on `stream`; run() waits for it.
     */
    static std::unique_ptr<phase_gradient_autofocus>
    make(backend b,
         std::size_t nrange,
         std::size_t naz,
         const options& o,
         stream_ref stream = stream_ref());
    virtual ~phase_gradient_autofocus() = default;

    /*!
     * Autofocus `in` (nrange x naz) into `out` (may be `in`). Device pointers on CUDA.
     * Returns when done (CUDA: after waiting for the stream).
     */
    autofocus_result run(const cfloat* in, cfloat* out);

    std::size_t nrange() const { return d_nrange; }
    std::size_t naz() const { return d_naz; }

protected:
    phase_gradient_autofocus(std::size_t nrange, std::size_t naz, const options& o)
        : d_nrange(nrange), d_naz(naz), d_options(o)
    {
    }

    //! Keeps a copy of `in` (restore() puts it back), counting its non-finite samples.
    virtual std::size_t keep_input(const cfloat* in) = 0;
    //! Copies the kept input into `out`.
    virtual void restore(cfloat* out) = 0;
    //! Steps 1-2's centring into the backend's scratch rows; returns through `profile`
    //! their summed intensity per column (naz values).
    virtual void centre(const cfloat* image, std::vector<double>& profile) = 0;
    //! Step 3 on the centred rows with window `width`: sums[n] = sum_r g[r, n]
    //! conj(g[r, n-1]) (sums[0] = 0).
    virtual void phase_sums(std::size_t width,
                            std::vector<std::complex<double>>& sums) = 0;
    //! Step 5: image rows times exp(-j phase[n]) in the azimuth-time domain.
    virtual void correct(cfloat* image, const std::vector<double>& phase) = 0;

    std::size_t d_nrange, d_naz;
    options d_options;
};

} // namespace gpuradar::kernels

#endif
