/* SAR autofocus of a complex image: phase-gradient (PGA) or minimum-entropy. */
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
 * \brief Autofocus of a complex SAR image of nrange range lines by naz azimuth samples
 * (azimuth contiguous, or along the rows: options::azimuth_contiguous). Below, "row" is
 * a range line and "column" an azimuth sample.
 *
 * Model: the image's azimuth axis is the DFT of the pulses (slow time), image[r, c] =
 * sum_n g[r, n] exp(-2 pi i c n / naz), as in spotlight and polar-format images and,
 * over a short aperture, backprojected ones; a phase error e(n) common to every range
 * row multiplies g. The image is corrected by exp(-j e(n)) on every row's g.
 *
 * method::pga, phase-gradient autofocus (Wahl, Eichel, Ghiglia and Jakowatz 1994). Each
 * iteration:
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
 *  5. the image is corrected.
 * Converged when a correction's RMS falls below tolerance_rad.
 *
 * method::entropy, minimum-entropy autofocus by gradient descent: the phases e(n)
 * minimise the image entropy H = -sum p ln p, p = |image|^2 / sum |image|^2. Its
 * gradient, dH/de(n) = -(2 / (naz E)) sum_r Im(A[r, n] conj(B[r, n])) with A, B the
 * unnormalised inverse DFTs of the image and of (ln p + 1) times the image and E = sum
 * |image|^2, is taken each iteration; the step starts at 0.5 / max |gradient| (then four
 * times the last accepted step) and is halved until the entropy falls by the Armijo
 * margin 1e-4 x step x |gradient|^2 (at most 40 halvings). Converged when a step lowers
 * the entropy by less than tolerance_entropy x H, or no step lowers it (a minimum).
 * The phases are found per pulse, so modulo 2 pi: phase_error is unwrapped (and its
 * line removed) before it is reported.
 *
 * Either method: after max_iterations without converging (no point-like content, e.g.
 * noise or a flat scene), the output is the input, unchanged, and result.reason says
 * why. An image with a non-finite sample is not processed (output = input; counted).
 * Both backends follow the same steps in the same order; sums over rows are in double.
 */
class autofocus
{
public:
    enum class method { pga, entropy };

    struct options {
        method algorithm = method::pga;
        int max_iterations = 50;     //!< 1 to 1000
        double tolerance_rad = 0.01; //!< pga: > 0, converged below this correction RMS
        double tolerance_entropy = 1e-6; //!< entropy: > 0, relative decrease that stops
        std::size_t min_window = 8;      //!< pga: 3 to naz, narrowest window (columns)
        //! true: the image is nrange rows of naz azimuth samples (azimuth contiguous);
        //! false: naz rows (azimuth) of nrange samples, as sar_focus's stripmap images
        bool azimuth_contiguous = true;
    };

    //! Largest image (nrange * naz samples): 2^30.
    static constexpr std::size_t max_samples = std::size_t(1) << 30;

    //! Parses "pga" | "entropy"; std::invalid_argument naming `method` otherwise.
    static method parse_method(const std::string& name);
    static const char* to_string(method m);

    //! The checks of make() alone (std::invalid_argument naming the parameter).
    static void validate(std::size_t nrange, std::size_t naz, const options& o);

    /*!
     * nrange >= 1, naz 8 to 2^24, nrange*naz <= max_samples, options in their ranges:
     * else std::invalid_argument "gpuradar::autofocus: <param> must be ...", before
     * anything is allocated. CUDA queues its work on `stream`; run() waits for it.
     */
    static std::unique_ptr<autofocus> make(backend b,
                                           std::size_t nrange,
                                           std::size_t naz,
                                           const options& o,
                                           stream_ref stream = stream_ref());
    virtual ~autofocus() = default;

    /*!
     * Autofocus `in` (nrange x naz) into `out` (may be `in`). Device pointers on CUDA.
     * Returns when done (CUDA: after waiting for the stream).
     */
    autofocus_result run(const cfloat* in, cfloat* out);

    std::size_t nrange() const { return d_nrange; }
    std::size_t naz() const { return d_naz; }

protected:
    autofocus(std::size_t nrange, std::size_t naz, const options& o)
        : d_nrange(nrange), d_naz(naz), d_options(o)
    {
    }

    //! Keeps a copy of `in` (restore() puts it back), counting its non-finite samples.
    virtual std::size_t keep_input(const cfloat* in) = 0;
    //! Copies the kept input into `out`.
    virtual void restore(cfloat* out) = 0;

    // pga
    //! Steps 1-2's centring into the backend's scratch rows; returns through `profile`
    //! their summed intensity per column (naz values).
    virtual void centre(const cfloat* image, std::vector<double>& profile) = 0;
    //! Step 3 on the centred rows with window `width`: sums[n] = sum_r g[r, n]
    //! conj(g[r, n-1]) (sums[0] = 0).
    virtual void phase_sums(std::size_t width,
                            std::vector<std::complex<double>>& sums) = 0;
    //! Step 5: image rows times exp(-j phase[n]) in the azimuth-time domain.
    virtual void correct(cfloat* image, const std::vector<double>& phase) = 0;

    // entropy
    //! Keeps the pulses g of `image` (each row's inverse DFT, 1/naz) for apply_phase();
    //! returns E = sum |image|^2.
    virtual double keep_pulses(const cfloat* image) = 0;
    //! The image's entropy with p = |image|^2 / energy (double).
    virtual double entropy(const cfloat* image, double energy) = 0;
    //! dH/de(n) of the image (see the class comment), naz values.
    virtual void entropy_gradient(const cfloat* image,
                                  double energy,
                                  std::vector<double>& gradient) = 0;
    //! image = the DFT of the kept pulses times exp(-j phase[n]).
    virtual void apply_phase(const std::vector<double>& phase, cfloat* image) = 0;

private:
    void run_pga(cfloat* out, autofocus_result& r);
    void run_entropy(cfloat* out, autofocus_result& r);

protected:
    std::size_t d_nrange, d_naz;
    options d_options;
};

} // namespace gpuradar::kernels

#endif
