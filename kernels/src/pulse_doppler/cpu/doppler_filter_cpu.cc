/* CPU twin of doppler_filter: per row, cancel + weight into the output row, FFTW in
 * place; rows shared out over the CPU pool (cpu_threads.h). */
#include "common/cpu/fftw_plan.h"
#include "common/cpu/row_pool.h"
#include "pulse_doppler/doppler_filter_backends.h"
#include <algorithm>

namespace gpuradar::kernels::detail {
namespace {

class doppler_filter_cpu final : public doppler_filter
{
public:
    doppler_filter_cpu(std::size_t npulses,
                       std::size_t rows,
                       std::size_t nfft,
                       mti_mode mti,
                       const window_spec& window,
                       bool fftshift)
        : doppler_filter(npulses, rows, nfft, mti, window, fftshift),
          d_weights(make_weights()),
          // One row at a time: the row is still in cache when the FFT reads it.
          d_plan(int(nfft), 1, 1, int(nfft), FFTW_FORWARD, true, "doppler_filter")
    {
    }

    void run(const cfloat* in, cfloat* out) override
    {
        // A Doppler row is short (one CPI's pulses): chunks of 16 keep the pool's
        // hand-over small next to the work.
        parallel_rows(d_rows, 16, ~0u, [&](std::size_t r0, std::size_t r1, unsigned) {
            for (std::size_t r = r0; r < r1; ++r)
                filter_row(in + r * d_npulses, out + r * d_nfft);
        });
    }

private:
    void filter_row(const cfloat* x, cfloat* y) const
    {
        const std::size_t m = d_weights.size();
        for (std::size_t n = 0; n < m; ++n) {
            cfloat v;
            switch (d_mti) {
            case mti_mode::none:
                v = x[n];
                break;
            case mti_mode::two_pulse:
                v = x[n + 1] - x[n];
                break;
            case mti_mode::three_pulse:
                v = x[n + 2] - 2.0f * x[n + 1] + x[n];
                break;
            }
            y[n] = v * d_weights[n];
        }
        std::fill(y + m, y + d_nfft, cfloat(0.0f, 0.0f));
        d_plan.execute(y, y);
    }

    const std::vector<cfloat> d_weights;
    fftwf_plan_1d d_plan;
};

} // namespace

std::unique_ptr<doppler_filter> make_doppler_filter_cpu(std::size_t npulses,
                                                        std::size_t rows,
                                                        std::size_t nfft,
                                                        doppler_filter::mti_mode mti,
                                                        const window_spec& window,
                                                        bool fftshift)
{
    return std::make_unique<doppler_filter_cpu>(
        npulses, rows, nfft, mti, window, fftshift);
}

} // namespace gpuradar::kernels::detail
