/* CPU twin of the envelope stage: VOLK for |x|^2 and |x|, a plain loop for dB; blocks of
 * samples shared out over the CPU pool (cpu_threads.h). */
#include "common/cpu/row_pool.h"
#include "pulse_doppler/envelope_backends.h"
#include <volk/volk.h>
#include <algorithm>
#include <cmath>

namespace gpuradar::kernels::detail {
namespace {

class envelope_cpu final : public envelope
{
public:
    envelope_cpu(mode m, bool db) : envelope(m, db) {}

    void run(const cfloat* in, float* out, std::size_t n) override
    {
        // Blocks of 2^16 samples (512 KiB in, 256 KiB out): worth a hand-over, and
        // within VOLK's unsigned int counts.
        constexpr std::size_t block = std::size_t(1) << 16;
        const std::size_t nblocks = (n + block - 1) / block;
        parallel_rows(nblocks, 1, ~0u, [&](std::size_t b0, std::size_t b1, unsigned) {
            const std::size_t first = b0 * block, last = std::min(n, b1 * block);
            envelope_of(in + first, out + first, static_cast<unsigned int>(last - first));
        });
    }

private:
    void envelope_of(const cfloat* in, float* y, unsigned int len) const
    {
        const auto* x = reinterpret_cast<const lv_32fc_t*>(in);
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
};

} // namespace

std::unique_ptr<envelope> make_envelope_cpu(envelope::mode m, bool db)
{
    return std::make_unique<envelope_cpu>(m, db);
}

} // namespace gpuradar::kernels::detail
