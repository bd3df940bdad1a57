/* CFAR variants, edge modes and the threshold factor alpha (fp64, host only). */
#include <gpuradar/kernels/detection/cfar_common.h>
#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace gpuradar::kernels {

cfar_variant parse_cfar_variant(const std::string& name)
{
    if (name == "ca")
        return cfar_variant::ca;
    if (name == "go")
        return cfar_variant::go;
    if (name == "so")
        return cfar_variant::so;
    if (name == "os")
        return cfar_variant::os;
    throw std::invalid_argument(
        "gpuradar::cfar: variant must be one of ca, go, so, os (got '" + name + "')");
}

cfar_edge parse_cfar_edge(const std::string& name, const std::string& param)
{
    if (name == "wrap")
        return cfar_edge::wrap;
    if (name == "clip")
        return cfar_edge::clip;
    throw std::invalid_argument("gpuradar::cfar: " + param +
                                " must be one of wrap, clip (got '" + name + "')");
}

cfar_estimator parse_cfar_estimator(const std::string& name)
{
    if (name == "automatic")
        return cfar_estimator::automatic;
    if (name == "segmented")
        return cfar_estimator::segmented;
    if (name == "summed_area")
        return cfar_estimator::summed_area;
    throw std::invalid_argument("gpuradar::cfar: estimator must be one of automatic, "
                                "segmented, summed_area (got '" +
                                name + "')");
}

const char* to_string(cfar_variant v)
{
    switch (v) {
    case cfar_variant::ca:
        return "ca";
    case cfar_variant::go:
        return "go";
    case cfar_variant::so:
        return "so";
    case cfar_variant::os:
        return "os";
    }
    return "?";
}

const char* to_string(cfar_edge e) { return e == cfar_edge::wrap ? "wrap" : "clip"; }

const char* to_string(cfar_estimator e)
{
    switch (e) {
    case cfar_estimator::automatic:
        return "automatic";
    case cfar_estimator::segmented:
        return "segmented";
    case cfar_estimator::summed_area:
        return "summed_area";
    }
    return "?";
}

namespace {

double pfa_ca(int n, double alpha) { return std::pow(1.0 + alpha / n, -double(n)); }

// sum_{j=j0}^{j1-1} C(m-1+j, j) a^m b^j (j1 < 0: to infinity), the terms of a negative
// binomial law. a^m underflows for m in the hundreds while the sum does not: the terms
// run in a scaled recurrence, term_{j+1} = term_j (m+j)/(j+1) b, from 1 at j0 with the
// factor C(m-1+j0, j0) a^m b^j0 kept as a logarithm; one multiply per term.
double negative_binomial_sum(int m, long j0, long j1, double log_a, double log_b)
{
    constexpr double rescale_above = 1e200;
    constexpr double tail_rel = 1e-17; // the infinite tail is dropped below this
    const double b = std::exp(log_b);
    double log_scale = std::lgamma(double(m + j0)) - std::lgamma(double(m)) -
                       std::lgamma(double(j0 + 1)) + m * log_a + j0 * log_b;
    double term = 1, sum = 0;
    for (long j = j0; j1 < 0 || j < j1; ++j) {
        sum += term;
        const double ratio = double(m + j) / double(j + 1) * b;
        term *= ratio;
        // Past the peak the terms fall at least geometrically: the tail is below
        // term / (1 - ratio).
        if (j1 < 0 && ratio < 1 && term < tail_rel * sum * (1 - ratio))
            break;
        if (term > rescale_above) {
            term /= rescale_above;
            sum /= rescale_above;
            log_scale += std::log(rescale_above);
        }
    }
    return sum > 0 ? std::exp(std::log(sum) + log_scale) : 0.0;
}

// E[exp(-alpha * min|max(U, V))] for U, V the means of m and n unit exponentials:
// f_min = f_U P(V > z) + f_V P(U > z) integrates term by term to the finite sums, f_max
// (P(V <= z) instead) to the infinite tails. Both are sums of positive terms: no
// cancellation, even at Pfa far below 1e-10.
double pfa_halves(bool greatest, int m, int n, double alpha)
{
    const double denom = alpha + m + n;
    const double log_a = std::log(m / denom);
    const double log_b = std::log(n / denom);
    if (greatest)
        return negative_binomial_sum(m, n, -1, log_a, log_b) +
               negative_binomial_sum(n, m, -1, log_b, log_a);
    return negative_binomial_sum(m, 0, n, log_a, log_b) +
           negative_binomial_sum(n, 0, m, log_b, log_a);
}

double pfa_os(int n, int k, double alpha)
{
    double p = 1;
    for (int i = 0; i < k; ++i)
        p *= (n - i) / (n - i + alpha);
    return p;
}

std::string counts_text(cfar_counts c)
{
    std::ostringstream s;
    s << "lead " << c.lead << ", lag " << c.lag;
    return s.str();
}

} // namespace

double cfar_pfa(cfar_variant v, cfar_counts c, int k, double alpha)
{
    if (c.lead < 0 || c.lag < 0 || c.total() < 1)
        throw std::invalid_argument("gpuradar::cfar: training cells must be >= 1 (got " +
                                    counts_text(c) + ")");
    switch (v) {
    case cfar_variant::ca:
        return pfa_ca(c.total(), alpha);
    case cfar_variant::go:
    case cfar_variant::so: {
        if (c.lead == 0 || c.lag == 0) // one half left: cell averaging on it
            return pfa_ca(c.total(), alpha);
        return pfa_halves(v == cfar_variant::go, c.lead, c.lag, alpha);
    }
    case cfar_variant::os:
        if (k < 1 || k > c.total())
            throw std::invalid_argument("gpuradar::cfar: os_k must be in [1, " +
                                        std::to_string(c.total()) + "] (got " +
                                        std::to_string(k) + ")");
        return pfa_os(c.total(), k, alpha);
    }
    return NAN;
}

double cfar_alpha(cfar_variant v, cfar_counts c, int k, double pfa)
{
    if (!(pfa > 0.0 && pfa < 1.0))
        throw std::invalid_argument("gpuradar::cfar: pfa must be in (0, 1) (got " +
                                    std::to_string(pfa) + ")");
    // Validates the counts and k for every variant.
    (void)cfar_pfa(v, c, k, 1.0);
    if (v == cfar_variant::ca)
        return c.total() * (std::pow(pfa, -1.0 / c.total()) - 1.0);

    // Pfa(alpha) falls monotonically from 1 at alpha = 0 towards 0: bracket, then bisect.
    double lo = 0, hi = 1;
    constexpr double alpha_limit = 1e300;
    while (cfar_pfa(v, c, k, hi) > pfa) {
        lo = hi;
        hi *= 2;
        if (hi > alpha_limit)
            throw std::invalid_argument("gpuradar::cfar: pfa " + std::to_string(pfa) +
                                        " is out of reach for variant " + to_string(v) +
                                        " with " + counts_text(c) + " training cells");
    }
    // 1e-12 relative: far below float's 6e-8, so alpha's rounding is float's alone.
    constexpr double rel_width = 1e-12;
    constexpr int max_steps = 200; // 2^-200 of the bracket: never the binding limit
    for (int step = 0; step < max_steps && hi - lo > rel_width * hi; ++step) {
        const double mid = 0.5 * (lo + hi);
        (cfar_pfa(v, c, k, mid) > pfa ? lo : hi) = mid;
    }
    return 0.5 * (lo + hi);
}

int cfar_reduced_os_k(int k, int n_full, int n_reduced)
{
    if (n_reduced >= n_full)
        return k;
    const long r = std::lround(double(k) * n_reduced / n_full);
    return static_cast<int>(std::clamp<long>(r, 1, n_reduced));
}

int cfar_default_os_k(int n)
{
    return std::max(1, static_cast<int>(std::lround(0.75 * n)));
}

} // namespace gpuradar::kernels
