/* Corner turn: a CPI from pulse-major (fast time contiguous) to range-major. */
#ifndef INCLUDED_GPURADAR_KERNELS_CORNER_TURN_H
#define INCLUDED_GPURADAR_KERNELS_CORNER_TURN_H

#include <gpuradar/kernels/common/backend.h>
#include <gpuradar/kernels/common/cuda_resources.h>
#include <cstddef>
#include <memory>

namespace gpuradar::kernels {

/*!
 * \brief Transposes one CPI per channel:
 *
 *     out[(r * channels + c) * npulses + p] = in[(p * channels + c) * nrange + r]
 *
 * for pulse p < npulses, channel c < channels, range bin r < nrange. The input is the
 * pulse stream's CPI (npulses items of channels x nrange, channel-major inside an item),
 * the output the range stream's CPI (nrange items of channels x npulses): slow time
 * becomes contiguous for the Doppler FFT (CONVENTIONS.md, Streams and the CPI).
 *
 * CUDA: 32x32 tiles through shared memory with one padding column (conflict-free reads
 * down a column), 32x8 threads per tile, any sizes (partial edge tiles are masked).
 * Device pointers, queued on the stream, not waited for. in and out must not overlap.
 */
class corner_turn
{
public:
    /*!
     * \param npulses   pulses per CPI, >= 1
     * \param nrange    range bins per pulse, >= 1
     * \param channels  channels per item, >= 1
     * Throws std::invalid_argument naming the parameter (validate()); cuda_error without
     * a device.
     */
    static std::unique_ptr<corner_turn> make(backend b,
                                             std::size_t npulses,
                                             std::size_t nrange,
                                             std::size_t channels = 1,
                                             stream_ref stream = stream_ref());
    virtual ~corner_turn() = default;

    //! make()'s parameter checks, allocating nothing: each size >= 1, the CPI within
    //! max_buffer_elements and max_buffer_bytes (buffer_size.h).
    static void validate(std::size_t npulses, std::size_t nrange, std::size_t channels);

    //! One CPI: npulses * channels * nrange samples in and out.
    virtual void run(const cfloat* in, cfloat* out) = 0;

    std::size_t npulses() const { return d_npulses; }
    std::size_t nrange() const { return d_nrange; }
    std::size_t channels() const { return d_channels; }

protected:
    corner_turn(std::size_t npulses, std::size_t nrange, std::size_t channels)
        : d_npulses(npulses), d_nrange(nrange), d_channels(channels)
    {
    }
    const std::size_t d_npulses, d_nrange, d_channels;
};

} // namespace gpuradar::kernels

#endif
