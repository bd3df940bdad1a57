/* CPU twin of the envelope stage: VOLK for |x|^2 and |x|, a plain loop for dB. */
#include "../envelope_backends.h"
#include <volk/volk.h>
#include <cmath>

namespace gpuradar::kernels::detail {
namespace {

class envelope_cpu final : public envelope
{
public:
    envelope_cpu(mode m, bool db) : envelope(m, db) {}

    void run(const cfloat* in, float* out, std::size_t n) override
    {
        // VOLK takes unsigned int counts; a CPI can exceed 2^32 samples in principle.
        constexpr std::size_t chunk = std::size_t(1) << 30;
        for (std::size_t off = 0; off < n; off += chunk) {
            const auto len = static_cast<unsigned int>(std::min(chunk, n - off));
            const auto* x = reinterpret_cast<const lv_32fc_t*>(in + off);
            float* y = out + off;
            if (d_mode == mode::square_law) {
                volk_32fc_magnitude_squared_32f(y, x, len);
                if (d_db)
                    for (unsigned int i = 0; i < len; ++i)
                        y[i] = 10.0f * std::log10(y[i]);
            } else {
                volk_32fc_magnitude_32f(y, x, len);
                if (d_db)
                    for (unsigned int i = 0; i < len; ++i)
                        y[i] = 20.0f * std::log10(y[i]);
            }
        }
    }
};

} // namespace

std::unique_ptr<envelope> make_envelope_cpu(envelope::mode m, bool db)
{
    return std::make_unique<envelope_cpu>(m, db);
}

} // namespace gpuradar::kernels::detail
