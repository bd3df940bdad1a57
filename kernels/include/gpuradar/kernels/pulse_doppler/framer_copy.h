/* The pulse framer's data movement: range gates out of the raw stream into the CPI being
 * assembled, and finished CPIs out, in host memory (CPU) or on the GPU (CUDA). */
#ifndef INCLUDED_GPURADAR_KERNELS_FRAMER_COPY_H
#define INCLUDED_GPURADAR_KERNELS_FRAMER_COPY_H

#include <gpuradar/kernels/common/backend.h>
#include <gpuradar/kernels/common/cuda_resources.h>
#include <gpuradar/kernels/common/sample_convert.h>
#include <gpuradar/kernels/pulse_doppler/front_end_correction.h>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace gpuradar::kernels {

/*!
 * fc32 input: the level (1.0 = full scale) each real and imaginary part is clamped to:
 * 2^16, above any sample a receiver gives (full scale is 1.0; a stream of unscaled int16
 * codes as floats stays within 32768), and low enough that the chain's gains cannot
 * overflow float: a cell of the power map is at most (2^16 sqrt(2) nrange npulses)^2,
 * below FLT_MAX for any CPI of fewer than 10^13 samples, and a clamped sample's FFT
 * rounding (2^16 x 2^-24 relative) stays far below any receiver's noise.
 */
constexpr float framer_clamp_level = 65536.0f;

/*!
 * sc16 / sc8 input: a part at or beyond this level (after the 1.0 = full scale scaling)
 * is at full scale, i.e. the ADC saturated: |code| >= 2^(bits-1) - 1 (32767/32768 and
 * 127/128; both ends, since some receivers clip symmetrically at +-32767 and others at
 * -32768). fc32: +Inf (fc32 samples are clamped instead, framer_clamp_level).
 */
float saturation_level(sample_format f);

//! One CPI's counts of the samples framer_copy::copy_finite() changed or flagged.
struct framer_sample_counts {
    std::uint64_t nonfinite = 0; //!< a NaN or infinite part: written as 0
    std::uint64_t clamped = 0;   //!< fc32: a part beyond +-framer_clamp_level: clamped
    std::uint64_t saturated = 0; //!< sc16 / sc8: a part at +-full scale: counted only
    bool operator==(const framer_sample_counts& o) const
    {
        return nonfinite == o.nonfinite && clamped == o.clamped &&
               saturated == o.saturated;
    }
};

/*!
 * \brief Copies for pulse_framer, so that the same framing logic (pulse_framer.h)
 * runs on host samples or on samples already on the GPU.
 *
 * The CPU backend uses memcpy. The CUDA backend takes device pointers, queues its copies
 * on `stream` without waiting, and turns a batch of equally spaced gates (any integer
 * PRI) into one 2-D copy kernel; unequal spacing (a fractional PRI) is one copy per gate.
 * With corrections that take sums, the CUDA gather of gates into the staging CPI is the
 * corrections' sums pass (front_end_correction.h, "How").
 *
 * Non-finite samples: a finished CPI leaves through copy_finite(), which writes every
 * sample with a NaN or infinite real or imaginary part as 0 and counts those samples,
 * one count per CPI (slot). One such sample would otherwise turn every cell of the CPI's
 * range-Doppler map into NaN (the FFTs spread it). The CUDA backend counts with one
 * atomic per warp that saw any (none on clean data) into a device counter per slot;
 * take_counts() reads all slots back with one copy and one wait.
 *
 * Huge and saturated samples, in the same pass: with fc32 input each real and imaginary
 * part is clamped to [-framer_clamp_level, framer_clamp_level] and the samples with a
 * part beyond it are counted (clamped); with sc16 / sc8 input a part cannot exceed full
 * scale, so instead the samples with a part at +-full scale (the ADC's extreme codes,
 * saturation_level()) are counted (saturated) and left as they are. One finite 3e38
 * sample would otherwise overflow the chain's FFTs to Inf and NaN and blank the whole
 * CPI's map, as a NaN does.
 */
class framer_copy
{
public:
    /*!
     * \param cpi_samples npulses * nrange: the staging CPI's size (>= 1)
     * \param input       the input samples' format: sc16 and sc8 gates are converted to
     *                    complex float (sample_convert) as they are gathered, so the
     *                    integers are what reaches the GPU and nothing makes a second
     *                    pass over them
     * \param corrections the receiver corrections copy_finite applies (null: none),
     *                    made for backend b (and the same stream) and a CPI of
     *                    cpi_samples; std::invalid_argument naming `corrections`
     *                    otherwise
     */
    static std::unique_ptr<framer_copy>
    make(backend b,
         std::size_t cpi_samples,
         stream_ref stream = stream_ref(),
         sample_format input = sample_format::fc32,
         std::unique_ptr<front_end_correction> corrections = nullptr);
    virtual ~framer_copy() = default;

    //! The corrections copy_finite applies (null: none): for take_estimates().
    front_end_correction* corrections() const { return d_corrections.get(); }

    //! The CPI being assembled (cpi_samples samples; host or device memory).
    virtual cfloat* staging() = 0;

    /*!
     * Gate i of `count` (nrange samples starting at sample offsets[i] of src, in the
     * input format) to dst + i * nrange as complex float. The same bits with or without
     * corrections; gates gathered into the staging CPI whole and in order (row 0 first)
     * let copy_finite's estimate use the sums the CUDA gather took.
     */
    virtual void gather(cfloat* dst,
                        const void* src,
                        const std::vector<std::uint64_t>& offsets,
                        std::size_t nrange) = 0;

    /*!
     * n samples from src to dst (no overlap); a sample with a NaN or infinite part is
     * written as 0, a finite part beyond +-framer_clamp_level is clamped to it, a part at
     * or beyond saturation_level(input) is noted, each counted in count slot `slot`
     * (slots 0, 1, ... in the order of the CPIs since the last take_counts()). A sample
     * is counted once per kind, however many of its parts qualify. With corrections,
     * src is one whole CPI (n = npulses * nrange) and each sample is corrected after
     * it is screened (its counts are the raw sample's), the CPI's estimate (slot
     * `slot` of take_estimates()) taken from src first.
     */
    virtual void
    copy_finite(cfloat* dst, const cfloat* src, std::size_t n, std::size_t slot) = 0;

    /*!
     * The counts of slots [0, n) into counts[0, n), then every slot back to 0. CUDA:
     * waits until the counts queued so far have reached the host (not for later work).
     */
    virtual void take_counts(framer_sample_counts* counts, std::size_t n) = 0;

protected:
    explicit framer_copy(std::unique_ptr<front_end_correction> corrections)
        : d_corrections(std::move(corrections))
    {
    }
    //! Checked by make(): same backend, CPI of cpi_samples.
    const std::unique_ptr<front_end_correction> d_corrections;
};

} // namespace gpuradar::kernels

#endif
