#include "common/sample_convert_backends.h"
#include <volk/volk.h>
#include <cstring>

namespace gpuradar::kernels::detail {
namespace {

class sample_convert_cpu final : public sample_convert
{
public:
    explicit sample_convert_cpu(sample_format f) : sample_convert(f) {}

    void rows(const void* src,
              std::size_t src_stride,
              cfloat* dst,
              std::size_t dst_stride,
              std::size_t row_len,
              std::size_t nrows) override
    {
        const auto* in = static_cast<const unsigned char*>(src);
        const std::size_t in_row = src_stride * sample_bytes(format());
        // VOLK divides by the scalar (multiplies by its reciprocal, exact for a power of
        // two); a row is 2 * row_len interleaved parts.
        const float scale = full_scale_code(format());
        const auto parts = static_cast<unsigned int>(2 * row_len);
        for (std::size_t r = 0; r < nrows; ++r, in += in_row) {
            auto* out = reinterpret_cast<float*>(dst + r * dst_stride);
            switch (format()) {
            case sample_format::sc16:
                volk_16i_s32f_convert_32f(
                    out, reinterpret_cast<const std::int16_t*>(in), scale, parts);
                break;
            case sample_format::sc8:
                volk_8i_s32f_convert_32f(
                    out, reinterpret_cast<const std::int8_t*>(in), scale, parts);
                break;
            case sample_format::fc32:
            default:
                std::memcpy(out, in, row_len * sizeof(cfloat));
                break;
            }
        }
    }
};

} // namespace

std::unique_ptr<sample_convert> make_sample_convert_cpu(sample_format f)
{
    return std::make_unique<sample_convert_cpu>(f);
}

} // namespace gpuradar::kernels::detail
