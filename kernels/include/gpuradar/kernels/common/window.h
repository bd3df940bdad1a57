/*
 * Real amplitude windows (tapers) shared by pulse compression (fast time) and the Doppler
 * filter (slow time). CPU-only maths in double precision: both backends take the
 * coefficients from here and upload them once, so CPU and CUDA use the same numbers.
 */
#ifndef INCLUDED_GPURADAR_KERNELS_WINDOW_H
#define INCLUDED_GPURADAR_KERNELS_WINDOW_H

#include <cstddef>
#include <string>
#include <vector>

namespace gpuradar::kernels {

enum class window_type {
    rectangular,
    hamming,
    hann,
    blackman,
    taylor,
    kaiser,
    chebyshev
};

/*!
 * \brief A window by name and parameters.
 *
 * Only the parameters of the chosen type are read:
 * - taylor:    `nbar` (number of nearly equal sidelobes next to the main lobe, >= 1) and
 *              `sll_db` (design peak sidelobe level, dB below the main lobe, > 0)
 * - kaiser:    `beta` (shape, >= 0; 0 is rectangular)
 * - chebyshev: `sll_db` (Dolph-Chebyshev equiripple sidelobe level, dB below the main
 *              lobe, > 0)
 * Sidelobe levels are positive numbers of dB *below* the peak (35 means -35 dB).
 */
struct window_spec {
    window_type type = window_type::rectangular;
    int nbar = 4;
    double sll_db = 35.0;
    double beta = 6.0;

    /*!
     * Parses the name (rectangular | hamming | hann | blackman | taylor | kaiser |
     * chebyshev) and validates the parameters the type uses; throws std::invalid_argument
     * "gpuradar::<who>: <param> must be ... (got ...)" naming `window`, `nbar`, `sll_db`
     * or `beta`, each after `prefix` (a stage with two windows passes "range_" or
     * "doppler_", so that the message names range_window, doppler_sll_db, ...).
     */
    static window_spec make(const std::string& name,
                            int nbar = 4,
                            double sll_db = 35.0,
                            double beta = 6.0,
                            const char* who = "window",
                            const std::string& prefix = "");

    //! Throws std::invalid_argument naming the offending parameter (see make()).
    void validate(const char* who = "window", const std::string& prefix = "") const;
};

//! Parses a window name; throws std::invalid_argument naming `<prefix>window` and the
//! value.
window_type parse_window_type(const std::string& name,
                              const char* who = "window",
                              const std::string& prefix = "");
const char* to_string(window_type t);

/*!
 * \brief The n symmetric coefficients w[0..n-1] (w[k] == w[n-1-k]), n >= 1 (n == 1 gives
 * {1}). With x = k/(n-1):
 * - rectangular: 1
 * - hamming:     0.54 - 0.46 cos(2 pi x)
 * - hann:        0.5 - 0.5 cos(2 pi x)                (zero at both ends)
 * - blackman:    0.42 - 0.5 cos(2 pi x) + 0.08 cos(4 pi x)
 * - kaiser:      I0(beta sqrt(1 - (2x - 1)^2)) / I0(beta)
 * - taylor:      1 + 2 sum_{m=1}^{nbar-1} F_m cos(2 pi m (k - n/2 + 1/2)/n), scaled so
 * the continuous centre is 1 (Taylor 1955; Carrara et al., "Spotlight SAR", 1995, app.
 * D.2; the same as scipy.signal.windows.taylor(norm=True))
 * - chebyshev:   Dolph-Chebyshev, the inverse DFT of T_{n-1}(x0 cos(pi k/n)) with
 *                x0 = cosh(acosh(10^(sll/20))/(n-1)), scaled to a peak of 1 (Dolph,
 *                Proc. IRE 34(6), 1946; computed as scipy.signal.windows.chebwin). The
 *                DFT is direct (O(n^2) in double): fine for the lengths a window is made
 *                for (waveforms, CPIs), once per configuration.
 * The cosine windows are not rescaled (an even-length Hann peaks below 1).
 */
std::vector<double> window_coefficients(const window_spec& w, std::size_t n);

/*!
 * \brief The window's theoretical peak sidelobe level in dB (negative), in the limit of a
 * long window: rectangular -13.26, hamming -42.68, hann -31.47, blackman -58.12
 * (Harris, Proc. IEEE 66(1), 1978, Table 1; the hundredths read off a 32x zero-padded
 * spectrum of a 4001-point window),
 * taylor and chebyshev -sll_db (their design value), kaiser 20 log10(0.21723 beta /
 * sinh(beta)) from the continuous Kaiser spectrum sinh(sqrt(beta^2 - u^2))/sqrt(...)
 * whose sidelobes are those of sin(v)/v (first sidelobe 0.21723).
 */
double window_peak_sidelobe_db(const window_spec& w);

//! Modified Bessel function of the first kind, order 0 (power series, double precision).
double bessel_i0(double x);

/*!
 * The Kaiser-windowed sinc interpolation kernel at x samples from its centre:
 * sinc(x) I0(beta sqrt(1 - (x / half_width)^2)) / I0(beta) for |x| < half_width, else 0
 * (sinc(x) = sin(pi x) / (pi x)). The resamplers of the SAR kernels share it.
 */
double kaiser_sinc(double x, double half_width, double beta);

} // namespace gpuradar::kernels

#endif
