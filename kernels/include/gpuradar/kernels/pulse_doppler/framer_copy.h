/* The pulse framer's data movement: range gates out of the raw stream into the CPI being
 * assembled, and finished CPIs out, in host memory (CPU) or on the GPU (CUDA). */
#ifndef INCLUDED_GPURADAR_KERNELS_FRAMER_COPY_H
#define INCLUDED_GPURADAR_KERNELS_FRAMER_COPY_H

#include <gpuradar/kernels/common/backend.h>
#include <gpuradar/kernels/common/cuda_resources.h>
#include <gpuradar/kernels/common/sample_convert.h>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace gpuradar::kernels {

/*!
 * \brief Copies for pulse_framer, so that the same framing logic (pulse_framer.h)
 * runs on host samples or on samples already on the GPU.
 *
 * The CPU backend uses memcpy. The CUDA backend takes device pointers, queues its copies
 * on `stream` without waiting, and turns a batch of equally spaced gates (any integer
 * PRI) into one 2-D copy; unequal spacing (a fractional PRI) is one copy per gate.
 *
 * Non-finite samples: a finished CPI leaves through copy_finite(), which writes every
 * sample with a NaN or infinite real or imaginary part as 0 and counts those samples,
 * one count per CPI (slot). One such sample would otherwise turn every cell of the CPI's
 * range-Doppler map into NaN (the FFTs spread it). The CUDA backend counts with one
 * atomic per warp that saw any (none on clean data) into a device counter per slot;
 * take_nonfinite() reads all slots back with one copy and one wait.
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
     */
    static std::unique_ptr<framer_copy> make(backend b,
                                             std::size_t cpi_samples,
                                             stream_ref stream = stream_ref(),
                                             sample_format input = sample_format::fc32);
    virtual ~framer_copy() = default;

    //! The CPI being assembled (cpi_samples samples; host or device memory).
    virtual cfloat* staging() = 0;

    /*!
     * Gate i of `count` (nrange samples starting at sample offsets[i] of src, in the
     * input format) to dst + i * nrange as complex float.
     */
    virtual void gather(cfloat* dst,
                        const void* src,
                        const std::vector<std::uint64_t>& offsets,
                        std::size_t nrange) = 0;

    /*!
     * n samples from src to dst (no overlap); a sample with a NaN or infinite part is
     * written as 0 and counted in count slot `slot` (slots 0, 1, ... in the order of
     * the CPIs since the last take_nonfinite()).
     */
    virtual void
    copy_finite(cfloat* dst, const cfloat* src, std::size_t n, std::size_t slot) = 0;

    /*!
     * The counts of slots [0, n) into counts[0, n), then every slot back to 0. CUDA:
     * waits until the counts queued so far have reached the host (not for later work).
     */
    virtual void take_nonfinite(std::uint64_t* counts, std::size_t n) = 0;
};

} // namespace gpuradar::kernels

#endif
