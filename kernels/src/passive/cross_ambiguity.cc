/* Cross-ambiguity map: parameter checks, the method rule and backend dispatch. */
#include "common/factories.h"
#include "common/param_check.h"
#include "passive/channel_lengths.h"
#include "passive/cross_ambiguity_backends.h"
#include <algorithm>
#include <cmath>
#include <string>

namespace gpuradar::kernels {

namespace {

template <typename V>
[[noreturn]] void bad(const char* param, const std::string& constraint, const V& got)
{
    detail::throw_invalid("cross_ambiguity", param, constraint, got);
}

//! Largest CPI: cuFFT and FFTW take int lengths, and the direct method's FFT is >= N+M-1.
constexpr std::size_t max_nsamples = std::size_t(1) << 28;

//! Longest Chebyshev taper: its O(n^2) coefficients take about a second at 2^16.
constexpr std::size_t max_chebyshev_taper = std::size_t(1) << 16;

std::size_t min_batches(std::size_t k) { return std::max(4 * k, 2 * k + 1); }

} // namespace

namespace detail {

std::size_t caf_fft_length(std::size_t n)
{
    for (std::size_t m = n;; ++m) {
        std::size_t r = m;
        for (std::size_t f : { 2, 3, 5, 7 })
            while (r % f == 0)
                r /= f;
        if (r == 1)
            return m;
    }
}

} // namespace detail

void cross_ambiguity::validate(const cross_ambiguity_params& p)
{
    if (p.nsamples < 2 || p.nsamples > max_nsamples)
        bad("nsamples", "in [2, " + std::to_string(max_nsamples) + "]", p.nsamples);
    if (p.nrange < 1 || p.nrange > p.nsamples)
        bad("nrange",
            "in [1, nsamples = " + std::to_string(p.nsamples) + "] (range lags)",
            p.nrange);
    if (2 * p.doppler_half + 1 > p.nsamples)
        bad("doppler_half",
            "<= " + std::to_string((p.nsamples - 1) / 2) +
                " (2K+1 Doppler bins of 1/nsamples cycles per sample: a CPI of " +
                std::to_string(p.nsamples) + " samples resolves no more)",
            p.doppler_half);
    p.window.validate("cross_ambiguity");
    if (!(p.max_straddle_loss_db > 0.0) || !std::isfinite(p.max_straddle_loss_db))
        bad("max_straddle_loss_db", "> 0 and finite (dB)", p.max_straddle_loss_db);
    if (p.batch_length != 0) {
        if (p.nsamples % p.batch_length != 0)
            bad("batch_length",
                "0 (chosen) or a divisor of nsamples = " + std::to_string(p.nsamples),
                p.batch_length);
        const std::size_t batches = p.nsamples / p.batch_length;
        if (batches < 2 * p.doppler_half + 1)
            bad("batch_length",
                "<= " + std::to_string(p.nsamples / (2 * p.doppler_half + 1)) +
                    " (nsamples / batch_length batches must hold the 2K+1 = " +
                    std::to_string(2 * p.doppler_half + 1) +
                    " Doppler bins, or Doppler aliases)",
                p.batch_length);
    } else if (p.method == caf_method::batched && choose_batch_length(p) == 0) {
        bad("method",
            "direct or automatic: no batch length divides nsamples = " +
                std::to_string(p.nsamples) +
                " into >= " + std::to_string(min_batches(p.doppler_half)) + " batches",
            "batched");
    }
    // the taper spans the CPI (direct) or the batches (batched); Chebyshev's
    // coefficients are a direct O(n^2) DFT (window.h), minutes for a long CPI
    const std::size_t taper = choose_method(p) == caf_method::batched
                                  ? p.nsamples / choose_batch_length(p)
                                  : p.nsamples;
    if (p.window.type == window_type::chebyshev && taper > max_chebyshev_taper)
        bad("window",
            "not chebyshev over a taper of more than " +
                std::to_string(max_chebyshev_taper) + " points (this one has " +
                std::to_string(taper) +
                ": the direct method tapers the CPI); taylor gives the same sidelobe "
                "level",
            "chebyshev");
}

double
cross_ambiguity::straddle_loss_db(std::size_t nsamples, std::size_t batch_length, long k)
{
    if (k == 0 || batch_length <= 1)
        return 0.0;
    const double x = detail::pi * static_cast<double>(k) / static_cast<double>(nsamples);
    const double d = std::sin(x * static_cast<double>(batch_length)) /
                     (static_cast<double>(batch_length) * std::sin(x));
    return -20.0 * std::log10(std::abs(d));
}

std::size_t cross_ambiguity::choose_batch_length(const cross_ambiguity_params& p)
{
    if (p.batch_length != 0)
        return p.batch_length;
    // the smallest batch count B >= min_batches(K) dividing N: the longest batches
    for (std::size_t b = min_batches(p.doppler_half); b <= p.nsamples; ++b)
        if (p.nsamples % b == 0)
            return b < p.nsamples ? p.nsamples / b : 0;
    return 0;
}

caf_method cross_ambiguity::choose_method(const cross_ambiguity_params& p)
{
    if (p.method != caf_method::automatic)
        return p.method;
    const std::size_t l = choose_batch_length(p);
    if (l < 2)
        return caf_method::direct;
    const double loss =
        straddle_loss_db(p.nsamples, l, static_cast<long>(p.doppler_half));
    return loss <= p.max_straddle_loss_db ? caf_method::batched : caf_method::direct;
}

cross_ambiguity::cross_ambiguity(const cross_ambiguity_params& p)
    : d_params(p),
      d_method(choose_method(p)),
      d_batch_length(d_method == caf_method::batched ? choose_batch_length(p)
                                                     : p.nsamples)
{
}

void cross_ambiguity::run(const cfloat* reference,
                          std::size_t reference_length,
                          const cfloat* surveillance,
                          std::size_t surveillance_length,
                          float* map)
{
    detail::check_channel_lengths(
        "cross_ambiguity", d_params.nsamples, reference_length, surveillance_length);
    run(reference, surveillance, map);
}

std::unique_ptr<cross_ambiguity>
cross_ambiguity::make(backend b, const cross_ambiguity_params& p, stream_ref stream)
{
    validate(p);
    detail::require_backend(b, "cross_ambiguity");
#ifdef GPURADAR_HAVE_CUDA
    if (b == backend::cuda)
        return detail::make_cross_ambiguity_cuda(p, stream);
#endif
    (void)stream;
    return detail::make_cross_ambiguity_cpu(p);
}

} // namespace gpuradar::kernels
