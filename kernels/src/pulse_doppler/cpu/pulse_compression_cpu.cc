/*
 * CPU twin of pulse_compression. fft: per row pad, FFTW forward, VOLK multiply by H,
 * FFTW inverse, keep nrange bins (one row's nfft-sample buffer stays in cache). fir: per
 * output bin a VOLK dot product over a zero-padded copy of the row. Rows are shared out
 * over the CPU pool (cpu_threads.h), each participant with its own row buffer.
 */
#include "common/cpu/fftw_plan.h"
#include "common/cpu/row_pool.h"
#include "pulse_doppler/pulse_compression_backends.h"
#include <gpuradar/kernels/common/cpu_threads.h>
#include <volk/volk.h>
#include <algorithm>

namespace gpuradar::kernels::detail {
namespace {

constexpr const char* who = "pulse_compression";

class pulse_compression_cpu final : public pulse_compression
{
public:
    pulse_compression_cpu(std::size_t nrange,
                          std::size_t rows,
                          const std::vector<cfloat>& waveform,
                          const window_spec& window,
                          bool normalize,
                          method m,
                          std::size_t fft_length,
                          sample_format input)
        : pulse_compression(
              backend::cpu, nrange, rows, window, normalize, m, fft_length, input)
    {
        install(make_reference(waveform));
    }

    void set_waveform(const std::vector<cfloat>& waveform) override
    {
        install(make_reference(waveform));
    }

    void run(const cfloat* in, cfloat* out) override
    {
        if (d_resolved == method::fir)
            run_fir(in, out);
        else
            run_fft(in, out);
    }

private:
    void install(const reference& ref)
    {
        // Everything is built before anything is replaced, so a failure keeps the old
        // state.
        const std::size_t nfft = ref.fft_length;
        if (ref.resolved == method::fft) {
            auto spectrum = make_spectrum(ref);
            auto buffers = make_buffers(nfft);
            std::unique_ptr<fftwf_plan_1d> fwd, inv;
            if (!d_forward || d_forward_length != nfft) {
                fwd = std::make_unique<fftwf_plan_1d>(
                    int(nfft), 1, 1, int(nfft), FFTW_FORWARD, true, who);
                inv = std::make_unique<fftwf_plan_1d>(
                    int(nfft), 1, 1, int(nfft), FFTW_BACKWARD, true, who);
            }
            d_spectrum = std::move(spectrum);
            d_buffers = std::move(buffers);
            if (fwd) {
                d_forward = std::move(fwd);
                d_inverse = std::move(inv);
                d_forward_length = nfft;
            }
            d_taps.clear();
        } else {
            d_buffers = make_buffers(d_nrange + ref.taps.size() - 1);
            d_taps = ref.taps;
            d_spectrum.clear();
        }
        adopt(ref);
    }

    //! One row buffer per pool participant (the pool's size when the buffers are made).
    static std::vector<fftwf_complex_array> make_buffers(std::size_t n)
    {
        std::vector<fftwf_complex_array> b;
        for (int i = 0; i < cpu_threads(); ++i)
            b.push_back(fftwf_alloc(n));
        return b;
    }

    void run_fft(const cfloat* in, cfloat* out)
    {
        const std::size_t nfft = d_spectrum.size();
        parallel_rows(
            d_rows, 1, unsigned(d_buffers.size()), [&](auto r0, auto r1, auto slot) {
                cfloat* buf = d_buffers[slot].get();
                for (std::size_t r = r0; r < r1; ++r) {
                    const cfloat* x = in + r * d_nrange;
                    std::copy(x, x + d_nrange, buf);
                    std::fill(buf + d_nrange, buf + nfft, cfloat(0.0f, 0.0f));
                    d_forward->execute(buf, buf);
                    volk_32fc_x2_multiply_32fc(
                        reinterpret_cast<lv_32fc_t*>(buf),
                        reinterpret_cast<const lv_32fc_t*>(buf),
                        reinterpret_cast<const lv_32fc_t*>(d_spectrum.data()),
                        static_cast<unsigned int>(nfft));
                    d_inverse->execute(buf, buf);
                    std::copy(buf, buf + d_nrange, out + r * d_nrange);
                }
            });
    }

    void run_fir(const cfloat* in, cfloat* out)
    {
        const std::size_t ntaps = d_taps.size();
        parallel_rows(
            d_rows, 1, unsigned(d_buffers.size()), [&](auto r0, auto r1, auto slot) {
                cfloat* buf = d_buffers[slot].get();
                std::fill(buf + d_nrange, buf + d_nrange + ntaps - 1, cfloat(0.0f, 0.0f));
                for (std::size_t r = r0; r < r1; ++r) {
                    std::copy(in + r * d_nrange, in + (r + 1) * d_nrange, buf);
                    cfloat* y = out + r * d_nrange;
                    for (std::size_t d = 0; d < d_nrange; ++d)
                        volk_32fc_x2_dot_prod_32fc(
                            reinterpret_cast<lv_32fc_t*>(y + d),
                            reinterpret_cast<const lv_32fc_t*>(buf + d),
                            reinterpret_cast<const lv_32fc_t*>(d_taps.data()),
                            static_cast<unsigned int>(ntaps));
                }
            });
    }

    std::vector<cfloat> d_spectrum;             // fft: H, nfft values
    std::vector<cfloat> d_taps;                 // fir: c[k]
    std::vector<fftwf_complex_array> d_buffers; // one padded row per pool participant
    std::unique_ptr<fftwf_plan_1d> d_forward, d_inverse;
    std::size_t d_forward_length = 0;
};

} // namespace

std::unique_ptr<pulse_compression>
make_pulse_compression_cpu(std::size_t nrange,
                           std::size_t rows,
                           const std::vector<cfloat>& waveform,
                           const window_spec& window,
                           bool normalize,
                           pulse_compression::method m,
                           std::size_t fft_length,
                           sample_format input)
{
    return std::make_unique<pulse_compression_cpu>(
        nrange, rows, waveform, window, normalize, m, fft_length, input);
}

} // namespace gpuradar::kernels::detail
