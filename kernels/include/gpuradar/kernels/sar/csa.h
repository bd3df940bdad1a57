/* Stripmap SAR focusing by the Chirp Scaling Algorithm (Raney et al. 1994). */
#ifndef INCLUDED_GPURADAR_KERNELS_CSA_H
#define INCLUDED_GPURADAR_KERNELS_CSA_H

#include <gpuradar/kernels/common/backend.h>
#include <gpuradar/kernels/common/cuda_resources.h>
#include <gpuradar/kernels/common/window.h>
#include <gpuradar/kernels/sar/stripmap.h>
#include <cstddef>
#include <memory>

namespace gpuradar::kernels {

/*!
 * \brief Chirp-scaling focusing of one azimuth block of raw stripmap echoes.
 *
 * Input: `naz` pulses x p.nrange uncompressed echoes (stripmap_params conventions),
 * pulse-major. Output: the focused image, naz rows x p.nrange columns, row-major, in
 * zero-Doppler geometry: row i is the along-track position of pulse i, column k the
 * closest-approach slant range near_range + k c / (2 fs). A point target at (y, R0)
 * peaks at row (y - y_0) PRF / v, column (R0 - near_range) / (c / (2 fs)).
 *
 * Steps: azimuth FFT; chirp-scaling phase (range-Doppler domain); range FFT; range
 * compression with secondary range compression and bulk RCMC (2-D frequency domain);
 * range IFFT; residual phase correction and azimuth compression (range-Doppler domain);
 * azimuth IFFT. Phase functions are computed from the parameters at construction (both
 * backends from the same double-precision formulas); the FFT shifts are folded into them.
 *
 * Range and azimuth windows (window.h) taper the processed bandwidths: the range window
 * over the chirp's band, the azimuth window over the 3 dB Doppler bandwidth around the
 * Doppler centroid.
 *
 * The first and last aperture_pulses(range)/2 rows of a block are only partly focused
 * (the synthetic aperture runs off the block): a stream is focused in blocks that
 * overlap by at least one aperture (the sar_focus block does this).
 *
 * Scale: the transforms are normalised, so a point target of amplitude a peaks at about
 * |a| times (chirp samples T fs) times (pulses in the processed Doppler band) times the
 * windows' coherent gains and the antenna gain; the peak's phase is arg(a).
 *
 * Squint (f_dc = doppler_centroid_hz() != 0): the range-Doppler data put a target at
 * R0 / D_ref with D_ref = sqrt(1 - (lambda f_dc / 2 V)^2) (about cos(squint)); each row
 * is resampled (32-tap windowed sinc, in the range-Doppler domain where the range
 * spectrum is at baseband) onto the zero-Doppler grid above. Consequences a caller must
 * know: (1) the window's echoes come from closest-approach ranges near D_ref .. far
 * D_ref, so the columns beyond far D_ref are empty and targets closer than near are
 * not imaged; (2) a target's zero-Doppler row (y - y_0) PRF / v lies R0 tan(squint)
 * PRF / v rows after the pulses that saw it, so it can fall outside [0, naz): the
 * azimuth FFT wraps it to that row modulo naz (an overlapping caller keeps the rows
 * whose aperture lay inside the block); (3) the main lobe is skewed (range-azimuth
 * coupling): its sidelobes run off the range and azimuth axes.
 *
 * Memory: CPU, none beyond the image (plus one row per thread with squint). CUDA: one
 * cuFFT work area shared by the plans, per-row tables (O(naz + nrange)), and with squint
 * one naz x nrange scratch (the resampler cannot run in place).
 */
class csa
{
public:
    struct options {
        window_spec range_window;   //!< default rectangular
        window_spec azimuth_window; //!< default rectangular
        //! Reference (closest-approach) range of the chirp scaling (m), >= 0; 0: D_ref
        //! times the centre of the range window (D_ref = 1 at broadside).
        double reference_range_m = 0.0;
        //! Effective velocity (m/s), >= 0; 0: the platform's velocity (flat-earth,
        //! airborne). Used in the range-Doppler migration D(f) only.
        double effective_velocity_mps = 0.0;
    };

    /*!
     * \param b      backend; CUDA queues its work on `stream` and does not wait
     * \param p      acquisition (validated)
     * \param naz    pulses per block, a length cuFFT/FFTW handle well; must be at least
     *               the synthetic aperture at the far range (else std::invalid_argument
     *               naming `naz` with the aperture in pulses)
     * Throws std::invalid_argument naming the parameter, before anything is allocated.
     */
    static std::unique_ptr<csa> make(backend b,
                                     const stripmap_params& p,
                                     std::size_t naz,
                                     const options& o,
                                     stream_ref stream = stream_ref());

    virtual ~csa() = default;

    /*!
     * Focuses one block. `raw` and `image` are naz x nrange complex (device pointers on
     * CUDA; they may not alias). CUDA returns once the work is queued.
     */
    virtual void run(const cfloat* raw, cfloat* image) = 0;

    /*!
     * Full passes over the matrix one run() makes when every FFT is one pass. CUDA:
     * the azimuth FFT and its inverse, one pass each (cuFFT) or two each (the four-step
     * transform, for naz a power of two from 8192 to 65536), around the range stage,
     * one pass when nrange is a power of two from 512 to 16384, else 5 (two FFTs and
     * three phase kernels): 3 to 9. CPU 3.
     */
    virtual int passes() const = 0;

    const stripmap_params& params() const { return d_params; }
    std::size_t naz() const { return d_naz; }

protected:
    csa(const stripmap_params& p, std::size_t naz) : d_params(p), d_naz(naz) {}
    const stripmap_params d_params;
    const std::size_t d_naz;
};

} // namespace gpuradar::kernels

#endif
