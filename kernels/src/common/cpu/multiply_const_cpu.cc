/* CPU twin of multiply_const: VOLK complex scalar multiply. */
#include "common/multiply_const_backends.h"
#include <volk/volk.h>
#include <algorithm>

namespace gpuradar::kernels::detail {
namespace {

class multiply_const_cpu final : public multiply_const
{
public:
    void run(const cfloat* in, cfloat* out, std::size_t n, cfloat k) override
    {
        constexpr std::size_t chunk = std::size_t(1) << 30; // VOLK counts are 32-bit
        const lv_32fc_t scalar = k;
        for (std::size_t off = 0; off < n; off += chunk) {
            const auto len = static_cast<unsigned int>(std::min(chunk, n - off));
            volk_32fc_s32fc_multiply_32fc(reinterpret_cast<lv_32fc_t*>(out + off),
                                          reinterpret_cast<const lv_32fc_t*>(in + off),
                                          scalar,
                                          len);
        }
    }
};

} // namespace

std::unique_ptr<multiply_const> make_multiply_const_cpu()
{
    return std::make_unique<multiply_const_cpu>();
}

} // namespace gpuradar::kernels::detail
