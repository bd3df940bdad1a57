/* Cross-ambiguity map, CPU twin: FFTW single precision, the steps of cross_ambiguity.h.
 */
#include "common/cpu/fftw_plan.h"
#include "common/param_check.h"
#include "passive/cross_ambiguity_backends.h"
#include <algorithm>
#include <cmath>
#include <vector>

namespace gpuradar::kernels::detail {

namespace {

class cross_ambiguity_cpu final : public cross_ambiguity
{
public:
    explicit cross_ambiguity_cpu(const cross_ambiguity_params& p)
        : cross_ambiguity(p),
          d_nbatches(p.nsamples / d_batch_length),
          d_nfft(caf_fft_length(d_batch_length + p.nrange - 1)),
          d_taper(window_coefficients(
              p.window, d_method == caf_method::batched ? d_nbatches : p.nsamples)),
          d_a(fftwf_alloc(d_nfft)),
          d_u(fftwf_alloc(d_nfft)),
          d_fwd(int(d_nfft), 1, 1, int(d_nfft), FFTW_FORWARD, true, "cross_ambiguity"),
          d_inv(int(d_nfft), 1, 1, int(d_nfft), FFTW_BACKWARD, true, "cross_ambiguity")
    {
        if (d_method == caf_method::batched) {
            d_corr.assign(p.nrange * d_nbatches, cfloat());
            d_doppler = std::make_unique<fftwf_plan_1d>(int(d_nbatches),
                                                        int(p.nrange),
                                                        1,
                                                        int(d_nbatches),
                                                        FFTW_FORWARD,
                                                        true,
                                                        "cross_ambiguity");
        } else {
            d_rspec.assign(d_nfft, cfloat());
        }
    }

    void run(const cfloat* reference, const cfloat* surveillance, float* map) override
    {
        if (d_method == caf_method::batched)
            run_batched(reference, surveillance, map);
        else
            run_direct(reference, surveillance, map);
    }

private:
    //! u = r[start - (M-1) .. start + L) (0 before the CPI), zero-padded, transformed.
    void reference_spectrum(const cfloat* r, std::size_t start, cfloat* u)
    {
        const std::size_t m = d_params.nrange;
        const std::size_t len = d_batch_length + m - 1;
        for (std::size_t j = 0; j < d_nfft; ++j) {
            const std::size_t idx = start + j; // r index + (M-1)
            u[j] = (j < len && idx >= m - 1) ? r[idx - (m - 1)] : cfloat();
        }
        d_fwd.execute(u, u);
    }

    //! a holds the batch's surveillance spectrum; c[m] = sum_i a_t[i] conj(u_t[i+M-1-m])
    //! = conj(IFFT(conj(A) U)[M-1-m]) / P, written to out[m * stride].
    void correlate(cfloat* a, const cfloat* u, cfloat* out, std::size_t stride)
    {
        for (std::size_t j = 0; j < d_nfft; ++j)
            a[j] = std::conj(a[j]) * u[j];
        d_inv.execute(a, a);
        const float scale = 1.0f / static_cast<float>(d_nfft);
        const std::size_t m = d_params.nrange;
        for (std::size_t i = 0; i < m; ++i)
            out[i * stride] = std::conj(a[m - 1 - i]) * scale;
    }

    float cell(cfloat x) const
    {
        const float p = std::norm(x);
        return d_params.db ? 10.0f * std::log10(std::max(p, caf_db_floor_power)) : p;
    }

    void run_batched(const cfloat* r, const cfloat* s, float* map)
    {
        const std::size_t l = d_batch_length, m = d_params.nrange;
        cfloat* a = d_a.get();
        cfloat* u = d_u.get();
        for (std::size_t b = 0; b < d_nbatches; ++b) {
            const float w = static_cast<float>(d_taper[b]);
            for (std::size_t i = 0; i < d_nfft; ++i)
                a[i] = i < l ? s[b * l + i] * w : cfloat();
            d_fwd.execute(a, a);
            reference_spectrum(r, b * l, u);
            correlate(a, u, d_corr.data() + b, d_nbatches);
        }
        d_doppler->execute(d_corr.data(), d_corr.data());
        write_map(map, [&](std::size_t i, long k) {
            const std::size_t bin = k < 0 ? d_nbatches - std::size_t(-k) : std::size_t(k);
            return d_corr[i * d_nbatches + bin];
        });
    }

    void run_direct(const cfloat* r, const cfloat* s, float* map)
    {
        const std::size_t n = d_params.nsamples, m = d_params.nrange;
        const long kh = static_cast<long>(d_params.doppler_half);
        const std::size_t nd = ndoppler();
        cfloat* a = d_a.get();
        reference_spectrum(r, 0, d_rspec.data());
        std::vector<cfloat> col(m);
        for (long k = -kh; k <= kh; ++k) {
            // exp(-j 2 pi k n / N) from (k n mod N) in integers: exact phase at any n
            const std::size_t kk = k < 0 ? n - std::size_t(-k) : std::size_t(k);
            for (std::size_t i = 0; i < n; ++i) {
                const double turns =
                    static_cast<double>((kk * i) % n) / static_cast<double>(n);
                const double ph = -2.0 * pi * turns;
                a[i] = s[i] * static_cast<float>(d_taper[i]) *
                       cfloat(static_cast<float>(std::cos(ph)),
                              static_cast<float>(std::sin(ph)));
            }
            std::fill(a + n, a + d_nfft, cfloat());
            d_fwd.execute(a, a);
            correlate(a, d_rspec.data(), col.data(), 1);
            const std::size_t d = static_cast<std::size_t>(k + kh);
            for (std::size_t i = 0; i < m; ++i)
                map[i * nd + d] = cell(col[i]);
        }
    }

    template <typename F>
    void write_map(float* map, F value)
    {
        const long kh = static_cast<long>(d_params.doppler_half);
        const std::size_t nd = ndoppler();
        for (std::size_t i = 0; i < d_params.nrange; ++i)
            for (long k = -kh; k <= kh; ++k)
                map[i * nd + std::size_t(k + kh)] = cell(value(i, k));
    }

    std::size_t d_nbatches, d_nfft;
    std::vector<double> d_taper;
    fftwf_complex_array d_a, d_u;
    fftwf_plan_1d d_fwd, d_inv;
    std::unique_ptr<fftwf_plan_1d> d_doppler;
    std::vector<cfloat> d_corr, d_rspec;
};

} // namespace

std::unique_ptr<cross_ambiguity> make_cross_ambiguity_cpu(const cross_ambiguity_params& p)
{
    return std::make_unique<cross_ambiguity_cpu>(p);
}

} // namespace gpuradar::kernels::detail
