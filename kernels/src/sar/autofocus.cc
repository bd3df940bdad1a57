/* Autofocus: parameter checks, the iterations of both methods (host side, double) and
 * backend dispatch. */
#include "common/factories.h"
#include "common/param_check.h"
#include "sar/autofocus_backends.h"
#include <algorithm>
#include <cmath>
#include <string>

namespace gpuradar::kernels {

namespace {

template <typename V>
[[noreturn]] void bad(const char* param, const std::string& constraint, const V& got)
{
    detail::throw_invalid("autofocus", param, constraint, got);
}

void check(std::size_t nrange, std::size_t naz, const autofocus::options& o)
{
    constexpr std::size_t max_naz = std::size_t(1) << 24;
    if (nrange < 1)
        bad("nrange", ">= 1", nrange);
    if (naz < 8 || naz > max_naz)
        bad("naz", "in [8, " + std::to_string(max_naz) + "]", naz);
    if (nrange > autofocus::max_samples / naz)
        bad("nrange",
            "<= " + std::to_string(autofocus::max_samples / naz) +
                " (nrange x naz <= 2^30 samples)",
            nrange);
    if (o.max_iterations < 1 || o.max_iterations > 1000)
        bad("max_iterations", "in [1, 1000]", o.max_iterations);
    if (!(o.tolerance_rad > 0.0) || !std::isfinite(o.tolerance_rad))
        bad("tolerance_rad", "> 0 and finite", o.tolerance_rad);
    if (!(o.tolerance_entropy > 0.0) || !std::isfinite(o.tolerance_entropy))
        bad("tolerance_entropy", "> 0 and finite", o.tolerance_entropy);
    if (o.min_window < 3 || o.min_window > naz)
        bad("min_window", "in [3, naz = " + std::to_string(naz) + "]", o.min_window);
}

double rms(const std::vector<double>& x)
{
    double s = 0.0;
    for (double v : x)
        s += v * v;
    return x.empty() ? 0.0 : std::sqrt(s / static_cast<double>(x.size()));
}

} // namespace

namespace detail {

std::size_t pga_window_width(const std::vector<double>& profile,
                             std::size_t min_window,
                             std::size_t previous)
{
    const std::size_t naz = profile.size();
    const double floor = 0.1 * *std::max_element(profile.begin(), profile.end());
    std::size_t extent = 0; // columns either side of column 0 within 10 dB
    while (extent + 1 < naz / 2 &&
           (profile[naz - extent - 1] >= floor || profile[extent + 1] >= floor))
        ++extent;
    const std::size_t width = 2 * (2 * extent + 1);
    return std::min(previous, std::max(min_window, std::min(width, naz)));
}

std::vector<double> detrended(std::vector<double> e)
{
    const std::size_t n = e.size();
    double si = 0, se = 0, sii = 0, sie = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const double x = static_cast<double>(i);
        si += x;
        se += e[i];
        sii += x * x;
        sie += x * e[i];
    }
    const double dn = static_cast<double>(n);
    const double b = (dn * sie - si * se) / (dn * sii - si * si);
    const double a = (se - b * si) / dn;
    for (std::size_t i = 0; i < n; ++i)
        e[i] -= a + b * static_cast<double>(i);
    return e;
}

std::vector<double> unwrapped_detrended(std::vector<double> e)
{
    for (std::size_t i = 1; i < e.size(); ++i)
        e[i] = e[i - 1] + std::remainder(e[i] - e[i - 1], 2.0 * detail::pi);
    return detrended(std::move(e));
}

std::vector<double> pga_phase(const std::vector<std::complex<double>>& sums)
{
    std::vector<double> e(sums.size(), 0.0);
    for (std::size_t i = 1; i < sums.size(); ++i)
        e[i] = e[i - 1] + std::arg(sums[i]);
    return detrended(std::move(e));
}

} // namespace detail

void autofocus::validate(std::size_t nrange, std::size_t naz, const options& o)
{
    check(nrange, naz, o);
}

std::unique_ptr<autofocus> autofocus::make(
    backend b, std::size_t nrange, std::size_t naz, const options& o, stream_ref stream)
{
    validate(nrange, naz, o);
    detail::require_backend(b, "autofocus");
#ifdef GPURADAR_HAVE_CUDA
    if (b == backend::cuda)
        return detail::make_autofocus_cuda(nrange, naz, o, stream);
#endif
    (void)stream;
    return detail::make_autofocus_cpu(nrange, naz, o);
}

autofocus::method autofocus::parse_method(const std::string& name)
{
    if (name == "pga")
        return method::pga;
    if (name == "entropy")
        return method::entropy;
    bad("method", "\"pga\" or \"entropy\"", "\"" + name + "\"");
}

const char* autofocus::to_string(method m)
{
    return m == method::pga ? "pga" : "entropy";
}

autofocus_result autofocus::run(const cfloat* in, cfloat* out)
{
    autofocus_result r;
    r.phase_error.assign(d_naz, 0.0);
    r.nonfinite_samples = keep_input(in);
    restore(out);
    if (r.nonfinite_samples > 0) {
        r.reason =
            std::to_string(r.nonfinite_samples) + " non-finite samples in the image";
        return r;
    }
    if (d_options.algorithm == method::pga)
        run_pga(out, r);
    else
        run_entropy(out, r);
    if (!r.converged) {
        r.reason = "did not converge after " + std::to_string(r.iterations) +
                   " iterations (" + r.reason + "): no point-like content to focus on";
        restore(out);
    }
    return r;
}

void autofocus::run_pga(cfloat* out, autofocus_result& r)
{
    std::vector<double> profile;
    std::vector<std::complex<double>> sums;
    std::size_t width = d_naz;
    for (r.iterations = 1; r.iterations <= d_options.max_iterations; ++r.iterations) {
        centre(out, profile);
        width = detail::pga_window_width(profile, d_options.min_window, width);
        phase_sums(width, sums);
        const std::vector<double> e = detail::pga_phase(sums);
        correct(out, e);
        for (std::size_t i = 0; i < d_naz; ++i)
            r.phase_error[i] += e[i];
        r.last_correction_rms = rms(e);
        if (r.last_correction_rms < d_options.tolerance_rad) {
            r.converged = true;
            return;
        }
    }
    r.iterations = d_options.max_iterations;
    r.reason = "the last correction's RMS is " + std::to_string(r.last_correction_rms) +
               " rad, tolerance " + std::to_string(d_options.tolerance_rad) + " rad";
}

void autofocus::run_entropy(cfloat* out, autofocus_result& r)
{
    constexpr double armijo = 1e-4;
    constexpr int halvings = 40;
    const double energy = keep_pulses(out);
    double h = entropy(out, energy), last_step = 0.0;
    std::vector<double> phase(d_naz, 0.0), trial(d_naz), gradient;
    for (r.iterations = 1; r.iterations <= d_options.max_iterations; ++r.iterations) {
        entropy_gradient(out, energy, gradient);
        double top = 0.0, norm2 = 0.0;
        for (double g : gradient) {
            top = std::max(top, std::abs(g));
            norm2 += g * g;
        }
        if (!(top > 0.0)) { // a stationary point
            r.converged = true;
            break;
        }
        double step = last_step > 0.0 ? 4.0 * last_step : 0.5 / top;
        bool lowered = false;
        double h_trial = h;
        for (int k = 0; k < halvings && !lowered; ++k, step *= 0.5) {
            for (std::size_t n = 0; n < d_naz; ++n)
                trial[n] = phase[n] - step * gradient[n];
            apply_phase(trial, out);
            h_trial = entropy(out, energy);
            lowered = h_trial < h - armijo * step * norm2;
            if (lowered)
                break;
        }
        if (!lowered) { // no step lowers it: a minimum
            apply_phase(phase, out);
            r.converged = true;
            break;
        }
        std::vector<double> moved(d_naz);
        for (std::size_t n = 0; n < d_naz; ++n)
            moved[n] = trial[n] - phase[n];
        r.last_correction_rms = rms(moved);
        const double drop = h - h_trial;
        phase.swap(trial);
        h = h_trial;
        last_step = step;
        if (drop < d_options.tolerance_entropy * std::abs(h)) {
            r.converged = true;
            break;
        }
    }
    if (!r.converged) {
        r.iterations = d_options.max_iterations;
        r.reason = "the entropy still falls by more than " +
                   std::to_string(d_options.tolerance_entropy) + " of itself per step";
    }
    r.phase_error = detail::unwrapped_detrended(phase);
}

} // namespace gpuradar::kernels
