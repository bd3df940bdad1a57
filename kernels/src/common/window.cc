/* Window coefficients (see window.h). Double precision, host only. */
#include "common/param_check.h"
#include <gpuradar/kernels/common/window.h>
#include <algorithm>
#include <cmath>

namespace gpuradar::kernels {

namespace {

using detail::pi;

struct named_window {
    const char* name;
    window_type type;
};
constexpr named_window window_names[] = {
    { "rectangular", window_type::rectangular },
    { "hamming", window_type::hamming },
    { "hann", window_type::hann },
    { "blackman", window_type::blackman },
    { "taylor", window_type::taylor },
    { "kaiser", window_type::kaiser },
    { "chebyshev", window_type::chebyshev },
};

// Generalised cosine window a0 - a1 cos(2 pi x) + a2 cos(4 pi x), x = k/(n-1).
std::vector<double> cosine_window(std::size_t n, double a0, double a1, double a2)
{
    std::vector<double> w(n);
    for (std::size_t k = 0; k < n; ++k) {
        const double x = static_cast<double>(k) / static_cast<double>(n - 1);
        w[k] = a0 - a1 * std::cos(2 * pi * x) + a2 * std::cos(4 * pi * x);
    }
    return w;
}

std::vector<double> kaiser_window(std::size_t n, double beta)
{
    std::vector<double> w(n);
    const double norm = bessel_i0(beta);
    for (std::size_t k = 0; k < n; ++k) {
        const double t = 2.0 * static_cast<double>(k) / static_cast<double>(n - 1) - 1.0;
        w[k] = bessel_i0(beta * std::sqrt(std::max(0.0, 1.0 - t * t))) / norm;
    }
    return w;
}

// Taylor (1955) as in Carrara et al., app. D.2: coefficients F_m of the first nbar-1
// cosine terms, then normalised so the continuous centre W((n-1)/2) is 1.
std::vector<double> taylor_window(std::size_t n, int nbar, double sll_db)
{
    const double b = std::pow(10.0, sll_db / 20.0);
    const double a = std::acosh(b) / pi;
    const double s2 = double(nbar) * nbar / (a * a + (nbar - 0.5) * (nbar - 0.5));
    std::vector<double> fm(static_cast<std::size_t>(nbar > 1 ? nbar - 1 : 0));
    for (int m = 1; m < nbar; ++m) {
        const double m2 = double(m) * m;
        double numer = (m % 2 == 1) ? 1.0 : -1.0;
        double denom = 2.0;
        for (int i = 1; i < nbar; ++i) {
            numer *= 1.0 - m2 / s2 / (a * a + (i - 0.5) * (i - 0.5));
            if (i != m)
                denom *= 1.0 - m2 / (double(i) * i);
        }
        fm[static_cast<std::size_t>(m - 1)] = numer / denom;
    }
    const double nn = static_cast<double>(n);
    auto at = [&](double k) {
        double v = 1.0;
        for (std::size_t m = 1; m <= fm.size(); ++m)
            v += 2.0 * fm[m - 1] * std::cos(2 * pi * double(m) * (k - nn / 2 + 0.5) / nn);
        return v;
    };
    const double scale = 1.0 / at((nn - 1) / 2);
    std::vector<double> w(n);
    for (std::size_t k = 0; k < n; ++k)
        w[k] = at(static_cast<double>(k)) * scale;
    return w;
}

// Dolph-Chebyshev: sample the Chebyshev polynomial response in frequency and take a
// direct inverse DFT (real and symmetric by construction), then scale to a peak of 1.
std::vector<double> chebyshev_window(std::size_t n, double sll_db)
{
    const double order = static_cast<double>(n - 1);
    const double x0 = std::cosh(std::acosh(std::pow(10.0, sll_db / 20.0)) / order);
    std::vector<double> p(n);
    for (std::size_t k = 0; k < n; ++k) {
        const double x =
            x0 * std::cos(pi * static_cast<double>(k) / static_cast<double>(n));
        if (x > 1.0)
            p[k] = std::cosh(order * std::acosh(x));
        else if (x < -1.0)
            p[k] = (n % 2 == 1 ? 1.0 : -1.0) * std::cosh(order * std::acosh(-x));
        else
            p[k] = std::cos(order * std::acos(x));
    }
    // Window sample j, at c = j - (n-1)/2 samples from the centre (a half-integer for
    // even n, which is the half-sample shift scipy applies), is sum_k p[k] cos(2 pi k
    // c/n).
    std::vector<double> w(n);
    const double centre = order / 2.0;
    double peak = 0.0;
    for (std::size_t j = 0; j < (n + 1) / 2; ++j) {
        const double c = static_cast<double>(j) - centre;
        double acc = 0.0;
        for (std::size_t k = 0; k < n; ++k) {
            // Reduce the argument modulo 2n half-turns in integers for accuracy.
            // angle = 2 pi k c / n = pi k (2j - (n-1)) / n
            const long long num =
                static_cast<long long>(k) *
                (2 * static_cast<long long>(j) - static_cast<long long>(n) + 1);
            const long long period = 2 * static_cast<long long>(n);
            const long long r = ((num % period) + period) % period;
            acc += p[k] * std::cos(pi * static_cast<double>(r) / static_cast<double>(n));
        }
        w[j] = w[n - 1 - j] = acc;
        peak = std::max(peak, std::abs(acc));
    }
    for (auto& v : w)
        v /= peak;
    return w;
}

} // namespace

window_type
parse_window_type(const std::string& name, const char* who, const std::string& prefix)
{
    for (const auto& nw : window_names)
        if (name == nw.name)
            return nw.type;
    detail::throw_invalid(
        who,
        (prefix + "window").c_str(),
        "one of rectangular, hamming, hann, blackman, taylor, kaiser, chebyshev",
        "'" + name + "'");
}

const char* to_string(window_type t)
{
    for (const auto& nw : window_names)
        if (nw.type == t)
            return nw.name;
    return "unknown";
}

void window_spec::validate(const char* who, const std::string& prefix) const
{
    const auto param = [&prefix](const char* name) { return prefix + name; };
    if (type == window_type::taylor && nbar < 1)
        detail::throw_invalid(
            who, param("nbar").c_str(), ">= 1 for the taylor window", nbar);
    if ((type == window_type::taylor || type == window_type::chebyshev) &&
        !(sll_db > 0.0 && std::isfinite(sll_db)))
        detail::throw_invalid(
            who, param("sll_db").c_str(), "> 0 (dB below the main lobe)", sll_db);
    if (type == window_type::kaiser && !(beta >= 0.0 && std::isfinite(beta)))
        detail::throw_invalid(
            who, param("beta").c_str(), ">= 0 for the kaiser window", beta);
}

window_spec window_spec::make(const std::string& name,
                              int nbar,
                              double sll_db,
                              double beta,
                              const char* who,
                              const std::string& prefix)
{
    window_spec w;
    w.type = parse_window_type(name, who, prefix);
    w.nbar = nbar;
    w.sll_db = sll_db;
    w.beta = beta;
    w.validate(who, prefix);
    return w;
}

double bessel_i0(double x)
{
    // I0(x) = sum_k ((x/2)^k / k!)^2; terms shrink once k > x/2, stop below 1e-17
    // relative.
    const double q = 0.25 * x * x;
    double term = 1.0, sum = 1.0;
    for (int k = 1; k < 1000; ++k) {
        term *= q / (double(k) * k);
        sum += term;
        if (term < 1e-17 * sum)
            break;
    }
    return sum;
}

double kaiser_sinc(double x, double half_width, double beta)
{
    if (!(std::abs(x) < half_width))
        return 0.0;
    const double sinc = std::abs(x) < 1e-12 ? 1.0 : std::sin(pi * x) / (pi * x);
    const double r = x / half_width;
    return sinc * bessel_i0(beta * std::sqrt(std::max(0.0, 1.0 - r * r))) /
           bessel_i0(beta);
}

std::vector<double> window_coefficients(const window_spec& w, std::size_t n)
{
    w.validate();
    if (n == 0)
        detail::throw_invalid("window", "n", ">= 1", n);
    if (n == 1)
        return { 1.0 };
    switch (w.type) {
    case window_type::rectangular:
        return std::vector<double>(n, 1.0);
    case window_type::hamming:
        return cosine_window(n, 0.54, 0.46, 0.0);
    case window_type::hann:
        return cosine_window(n, 0.5, 0.5, 0.0);
    case window_type::blackman:
        return cosine_window(n, 0.42, 0.5, 0.08);
    case window_type::kaiser:
        return kaiser_window(n, w.beta);
    case window_type::taylor:
        return taylor_window(n, w.nbar, w.sll_db);
    case window_type::chebyshev:
        return chebyshev_window(n, w.sll_db);
    }
    return std::vector<double>(n, 1.0);
}

double window_peak_sidelobe_db(const window_spec& w)
{
    // First sidelobe of sin(v)/v, at v = 4.4934: the continuous rectangular spectrum.
    constexpr double sinc_first_sidelobe = 0.21723362821122166;
    switch (w.type) {
    case window_type::rectangular:
        return 20.0 * std::log10(sinc_first_sidelobe);
    case window_type::hamming:
        return -42.68;
    case window_type::hann:
        return -31.47;
    case window_type::blackman:
        return -58.12;
    case window_type::kaiser:
        return w.beta == 0.0
                   ? 20.0 * std::log10(sinc_first_sidelobe)
                   : 20.0 * std::log10(sinc_first_sidelobe * w.beta / std::sinh(w.beta));
    case window_type::taylor:
    case window_type::chebyshev:
        return -w.sll_db;
    }
    return 0.0;
}

} // namespace gpuradar::kernels
