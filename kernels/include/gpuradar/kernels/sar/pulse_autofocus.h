/* The heavy sums of phase-history autofocus (python/gpuradar/pulse_autofocus.py). */
#ifndef INCLUDED_GPURADAR_KERNELS_PULSE_AUTOFOCUS_H
#define INCLUDED_GPURADAR_KERNELS_PULSE_AUTOFOCUS_H

#include <gpuradar/kernels/common/backend.h>
#include <gpuradar/kernels/common/cuda_resources.h>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace gpuradar::kernels {

/*!
 * \brief Each pulse's term of each of a set of image pixels (the autofocus chips), and
 * the sums over them that generalised PGA and minimum-entropy autofocus of a
 * backprojected image take each iteration (python/gpuradar/pulse_autofocus.py
 * orchestrates the iterations; its docstring gives the method).
 *
 * Pixel p at (x0 + dx ix, y0 + dy iy, z), pulse n with geometry (ax, ay, az, r0, dr, f0)
 * (CONVENTIONS.md): R = |antenna - pixel|, bin b = (R - r0) / dr, k = 4 pi f0 / c, and
 *
 *     D[n, p] = v_n(b) exp(+j k R)   (v_n the pulse read at b by the interpolator; 0
 *                                     when b lies outside [0, nbins - 1]),
 *     U[n, p] = exp(+j k R),
 *
 * with the interpolator (make()'s `interp`):
 * - linear (default): between samples floor(b) and floor(b) + 1, the bin clamped to
 *   [0, nbins - 2] (backprojection's own interpolation: the spotlight path);
 * - sinc16: v_n(b) = sum_{j=-7..8} h(f - j) s_n[floor(b) + j], f = b - floor(b) rounded
 *   to a multiple of 1 / sinc_steps (a table), h(x) = sinc(x) I0(beta sqrt(1 -
 *   (x / 8)^2)) / I0(beta) with beta = sinc_kaiser_beta (not normalised), samples
 *   beyond the pulse's ends 0: for pulses sampled barely finer than their resolution
 *   (the stripmap path, python/gpuradar/stripmap_autofocus.py), too coarse for a
 *   linear read.
 *
 * backprojection's term, kept in complex float (R and the phase k R in double until
 * then: k R is ~1e7 rad). A pulse whose geometry is non-finite or has dr <= 0 or
 * f0 <= 0 contributes nothing (D = U = 0); a non-finite sample counts as 0 (the
 * backprojection block zeroes them). Sums are in double on both backends.
 *
 * Memory: 20 bytes per pulse and pixel (D, U, b); on CUDA on the device.
 * All pointers are host pointers; the CUDA backend copies in and out and returns
 * after waiting for its stream.
 */
class pulse_autofocus
{
public:
    using cdouble = std::complex<double>;

    //! The image grid of backprojection (metres).
    struct grid {
        double x0 = 0, y0 = 0, dx = 1, dy = 1, z = 0;
    };

    //! Most pulse x pixel terms: 2^28 (5 GiB).
    static constexpr std::size_t max_terms = std::size_t(1) << 28;
    //! Most pulses: 2^21.
    static constexpr std::size_t max_pulses = std::size_t(1) << 21;

    //! How a pulse is read at a fractional bin (the class comment gives the maths).
    enum class interpolator { linear, sinc16 };
    //! Taps of sinc16.
    static constexpr int sinc_taps = 16;
    //! Kaiser window shape of sinc16.
    static constexpr double sinc_kaiser_beta = 6.0;
    //! Fractional-bin steps of sinc16's table: a step's phase error at the band edge,
    //! pi / (2 x 1024) rad at most, is far below autofocus' tolerance.
    static constexpr int sinc_steps = 1024;

    //! "linear" | "sinc16"; else std::invalid_argument naming `interpolator`.
    static interpolator parse_interpolator(const std::string& name);
    static const char* to_string(interpolator i);

    /*!
     * npulses 3 to max_pulses, nbins >= 2, npixels >= 1, npulses * npixels <= max_terms,
     * interpolator linear or sinc16: else std::invalid_argument
     * "gpuradar::pulse_autofocus: <param> must be ...", before anything is allocated.
     */
    static std::unique_ptr<pulse_autofocus>
    make(backend b,
         std::size_t npulses,
         std::size_t nbins,
         std::size_t npixels,
         stream_ref stream = stream_ref(),
         interpolator interp = interpolator::linear);
    //! The checks of make() alone.
    static void validate(std::size_t npulses,
                         std::size_t nbins,
                         std::size_t npixels,
                         interpolator interp = interpolator::linear);
    virtual ~pulse_autofocus() = default;

    /*!
     * Forms D, U and b from `pulses` (npulses x nbins), `geometry` (npulses x 6) and
     * `pixels` (npixels x 2: iy, ix) on grid `g`. A grid with a non-finite or zero
     * spacing: std::invalid_argument naming it.
     */
    void set_terms(const cfloat* pulses,
                   const double* geometry,
                   const grid& g,
                   const std::int32_t* pixels);

    //! image[p] = sum_n exp(-j phi[n]) D[n, p] (npixels values).
    virtual void image(const double* phi, cdouble* image) = 0;

    //! y[n] = sum_p D[n, p] w[p] (npulses values): the entropy gradient's projection.
    virtual void project(const cdouble* w, cdouble* y) = 0;

    /*!
     * The targets' echoes per pulse (PGA's projection onto the pulses at each target's
     * centre, backprojection's adjoint): for target t with centre pixel c = centres[t]
     * and window pixels window[start[t] .. start[t + 1]) (indices into the pixels),
     *
     *     g[t, n] = sum_{p in window} tri(b[n, p] - b[n, c]) conj(U[n, p]) U[n, c]
     * image[p]
     *
     * (tri(x) = max(0, 1 - |x|)), ntargets x npulses values. Indices out of range:
     * std::invalid_argument naming them.
     */
    void target_echoes(std::size_t ntargets,
                       const std::int32_t* centres,
                       const std::int32_t* start,
                       const std::int32_t* window,
                       const cdouble* image,
                       cdouble* g);

    std::size_t npulses() const { return d_npulses; }
    std::size_t nbins() const { return d_nbins; }
    std::size_t npixels() const { return d_npixels; }
    interpolator interp() const { return d_interp; }

protected:
    pulse_autofocus(std::size_t npulses,
                    std::size_t nbins,
                    std::size_t npixels,
                    interpolator interp)
        : d_npulses(npulses), d_nbins(nbins), d_npixels(npixels), d_interp(interp)
    {
    }
    virtual void form_terms(const cfloat* pulses,
                            const double* geometry,
                            const grid& g,
                            const std::int32_t* pixels) = 0;
    virtual void echoes(std::size_t ntargets,
                        const std::int32_t* centres,
                        const std::int32_t* start,
                        const std::int32_t* window,
                        const cdouble* image,
                        cdouble* g) = 0;

    std::size_t d_npulses, d_nbins, d_npixels;
    interpolator d_interp;
};

} // namespace gpuradar::kernels

#endif
