/* Input sample formats as SDRs deliver them (fc32, sc16, sc8), and their conversion to
 * complex float at 1.0 = full scale. */
#ifndef INCLUDED_GPURADAR_KERNELS_SAMPLE_CONVERT_H
#define INCLUDED_GPURADAR_KERNELS_SAMPLE_CONVERT_H

#include <gpuradar/kernels/common/backend.h>
#include <gpuradar/kernels/common/cuda_resources.h>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace gpuradar::kernels {

/*!
 * \brief The wire format of complex input samples.
 *
 * - fc32: interleaved float32 I, Q (gr_complex), taken as they are;
 * - sc16: interleaved int16 I, Q (UHD/SoapySDR cpu_format sc16, GNU Radio port type
 *   sc16, 4 bytes a sample);
 * - sc8: interleaved int8 I, Q (cpu_format sc8, 2 bytes a sample).
 *
 * Integers scale to float as x / 2^(bits-1): 1/32768 for sc16, 1/128 for sc8, so 1.0 is
 * full scale and the most negative code is exactly -1.0. This is UHD's own sc16 -> fc32
 * converter's scale (1/32768), VOLK's convention (volk_16i_s32f_convert_32f with 32768)
 * and the module's SigMF ci16_le / ci8 readers'. The scale is a power of two, so the
 * conversion is exact and every backend gives the same bits.
 */
enum class sample_format { fc32, sc16, sc8 };

//! The integer codes of 1.0 (x_float = x_code / code): one definition for every backend
//! (the CUDA loads that convert inside other stages' kernels use these too).
constexpr float sc16_full_scale_code = 32768.0f;
constexpr float sc8_full_scale_code = 128.0f;

//! "fc32", "sc16" or "sc8"; anything else throws std::invalid_argument
//! "gpuradar::<stage>: <param> must be one of fc32, sc16, sc8 (got '<name>')".
sample_format
parse_sample_format(const std::string& name, const char* stage, const char* param);
const char* to_string(sample_format f);
//! Bytes of one complex sample: 8, 4 or 2.
std::size_t sample_bytes(sample_format f);
//! The integer code of 1.0: 1, 32768 or 128 (x_float = x_code / full_scale_code).
float full_scale_code(sample_format f);

//! Sample i of `in` (format f) as complex float, on the host: the scalar reference the
//! converters below must equal.
inline cfloat sample_at(const void* in, sample_format f, std::size_t i)
{
    switch (f) {
    case sample_format::sc16: {
        const auto* p = static_cast<const std::int16_t*>(in) + 2 * i;
        return { float(p[0]) * (1.0f / sc16_full_scale_code),
                 float(p[1]) * (1.0f / sc16_full_scale_code) };
    }
    case sample_format::sc8: {
        const auto* p = static_cast<const std::int8_t*>(in) + 2 * i;
        return { float(p[0]) * (1.0f / sc8_full_scale_code),
                 float(p[1]) * (1.0f / sc8_full_scale_code) };
    }
    case sample_format::fc32:
    default:
        return static_cast<const cfloat*>(in)[i];
    }
}

/*!
 * \brief Rows of input samples (format f) to complex float, scaled to 1.0 = full scale:
 * the first thing a block does with an SDR's integers, fused into its first copy.
 *
 * The CPU backend converts with VOLK (volk_16i_s32f_convert_32f,
 * volk_8i_s32f_convert_32f) and copies fc32 with memcpy; the CUDA backend takes device
 * pointers and queues one kernel (a 2-D copy for fc32) on `stream` without waiting.
 */
class sample_convert
{
public:
    static std::unique_ptr<sample_convert>
    make(backend b, sample_format f, stream_ref stream = stream_ref());
    virtual ~sample_convert() = default;

    sample_format format() const { return d_format; }

    /*!
     * Row r of `rows` (row_len samples from src + r * src_stride, counted in samples of
     * the input format) to dst + r * dst_stride. No overlap.
     */
    virtual void rows(const void* src,
                      std::size_t src_stride,
                      cfloat* dst,
                      std::size_t dst_stride,
                      std::size_t row_len,
                      std::size_t nrows) = 0;

    //! n contiguous samples.
    void run(const void* src, cfloat* dst, std::size_t n) { rows(src, n, dst, n, n, 1); }

protected:
    explicit sample_convert(sample_format f) : d_format(f) {}

private:
    sample_format d_format;
};

} // namespace gpuradar::kernels

#endif
