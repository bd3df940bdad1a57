/* Doppler filter: MTI canceller, slow-time window, zero-padded FFT, optional fftshift. */
#ifndef INCLUDED_GPURADAR_KERNELS_DOPPLER_FILTER_H
#define INCLUDED_GPURADAR_KERNELS_DOPPLER_FILTER_H

#include <gpuradar/kernels/common/backend.h>
#include <gpuradar/kernels/common/cuda_resources.h>
#include <gpuradar/kernels/common/window.h>
#include <cstddef>
#include <memory>
#include <string>

namespace gpuradar::kernels {

/*!
 * \brief Range-major CPI in (rows of npulses slow-time samples), range-Doppler out (rows
 * of nfft Doppler bins). A multi-channel CPI is rows = nrange * channels.
 *
 * Per row x[0..npulses-1]:
 * 1. MTI canceller (newest pulse first):
 *    - none:        v[n] = x[n],                              m = npulses
 *    - two_pulse:   v[n] = x[n+1] - x[n],         [1, -1],    m = npulses - 1
 *    - three_pulse: v[n] = x[n+2] - 2x[n+1] + x[n], [1, -2, 1], m = npulses - 2
 *    The canceller drops its first 1 or 2 outputs (no pulse before the CPI), so m <
 * npulses.
 * 2. Slow-time window w of length m (window.h), not renormalised.
 * 3. Zero padding to nfft >= npulses and an unnormalised forward DFT:
 *        Y[k] = sum_{n<m} w[n] v[n] exp(-j 2 pi (k - s) n / nfft),
 *    s = floor(nfft/2) with fftshift (zero Doppler at bin nfft/2), else s = 0.
 * Bin k holds Doppler f = (k - s) prf / nfft (without fftshift, bins k >= nfft/2 are the
 * negative frequencies (k - nfft) prf / nfft). With the design's sign convention a
 * closing target has positive Doppler, at k > s, and velocity (k - s) prf / nfft * c / (2
 * fc).
 *
 * Implementation: one pass builds the padded, windowed, cancelled rows directly in `out`
 * (fftshift as a modulation exp(+j 2 pi s n / nfft), which is (-1)^n for even nfft,
 * folded into the window table), then an in-place batched FFT (cuFFT / FFTW) of out.
 * CUDA: device pointers, queued on the stream, not waited for. in and out must not
 * overlap.
 */
class doppler_filter
{
public:
    enum class mti_mode { none, two_pulse, three_pulse };

    //! Parses "none" | "two_pulse" | "three_pulse"; throws std::invalid_argument naming
    //! `mti`.
    static mti_mode parse_mti(const std::string& name);
    static const char* to_string(mti_mode m);
    //! Samples the canceller leaves out of npulses (0, 1 or 2).
    static std::size_t mti_order(mti_mode m);

    /*!
     * \param npulses   slow-time samples per row, >= 2 (>= 3 for three_pulse)
     * \param rows      rows per run() (nrange * channels), >= 1
     * \param nfft      Doppler bins, >= npulses
     * \param mti       canceller
     * \param window    slow-time window (length npulses - mti_order)
     * \param fftshift  zero Doppler at bin nfft/2
     * Throws std::invalid_argument naming the parameter before allocating.
     */
    static std::unique_ptr<doppler_filter> make(backend b,
                                                std::size_t npulses,
                                                std::size_t rows,
                                                std::size_t nfft,
                                                mti_mode mti = mti_mode::none,
                                                const window_spec& window = window_spec(),
                                                bool fftshift = true,
                                                stream_ref stream = stream_ref());
    virtual ~doppler_filter() = default;

    //! make()'s parameter checks, allocating nothing: npulses (check_npulses), rows >= 1,
    //! nfft >= npulses, the window, and the output (rows * nfft complex) within
    //! max_buffer_elements and max_buffer_bytes (buffer_size.h).
    static void validate(std::size_t npulses,
                         std::size_t rows,
                         std::size_t nfft,
                         mti_mode mti,
                         const window_spec& window);
    //! npulses >= 2 without MTI, >= mti_order + 1 with it; the message names `stage`.
    static void check_npulses(std::size_t npulses, mti_mode mti, const char* stage);

    //! rows*npulses samples in, rows*nfft bins out.
    virtual void run(const cfloat* in, cfloat* out) = 0;

    std::size_t npulses() const { return d_npulses; }
    std::size_t rows() const { return d_rows; }
    std::size_t nfft() const { return d_nfft; }
    mti_mode mti() const { return d_mti; }
    const window_spec& window() const { return d_window; }
    bool fftshift() const { return d_fftshift; }
    //! Slow-time samples after the canceller (the window length): npulses - mti_order.
    std::size_t mti_output_length() const { return d_npulses - mti_order(d_mti); }

protected:
    doppler_filter(std::size_t npulses,
                   std::size_t rows,
                   std::size_t nfft,
                   mti_mode mti,
                   const window_spec& window,
                   bool fftshift);

    //! w[n] exp(+j 2 pi s n / nfft), n < mti_output_length(): the table both backends
    //! use.
    std::vector<cfloat> make_weights() const;

    const std::size_t d_npulses, d_rows, d_nfft;
    const mti_mode d_mti;
    const window_spec d_window;
    const bool d_fftshift;
};

} // namespace gpuradar::kernels

#endif
