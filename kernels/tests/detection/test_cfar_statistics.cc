/*
 * CFAR statistics: alpha against the closed forms of the literature (written here, apart
 * from the library), then measured false-alarm and detection probabilities of the CPU
 * twin on exponential noise (the square law of complex Gaussian noise).
 *
 * Budgets (fixed seeds, so every run draws the same numbers):
 *  - Pfa at 1e-4 over >= 1e7 cells: ~1000 false alarms expected, sigma ~ 32 (3.2%) for
 *    independent cells; neighbouring cells share training cells, which widens it a
 * little. The tolerance, +-10%, is over 3 sigma.
 *  - Pfa at 1e-3 over 2e6 cells of clipped windows: 2000 expected, sigma 2.2%, +-10%.
 *  - Pd over 20000 Swerling-1 targets per SNR: sigma <= 0.0035; tolerance +-0.02.
 * Run time on a 2-core machine: a few seconds, most of it the os selection.
 */
#include "cfar_test_support.h"
#include <gpuradar/kernels/detection/cfar_1d.h>
#include <gpuradar/kernels/detection/cfar_2d.h>

namespace gpuradar::test {
namespace {

using kernels::backend;
using kernels::cfar_2d;
using kernels::cfar_2d_params;
using kernels::cfar_alpha;
using kernels::cfar_counts;
using kernels::cfar_edge;
using kernels::cfar_pfa;

double rel(double a, double b) { return std::abs(a - b) / std::abs(b); }

TEST(CfarAlpha, test_001_ca_closed_form)
{
    for (int n : { 1, 8, 16, 56, 1000 }) {
        for (double pfa : { 1e-2, 1e-4, 1e-6, 1e-9 }) {
            const double a = cfar_alpha(cfar_variant::ca, { n / 2, n - n / 2 }, 0, pfa);
            EXPECT_NEAR(a, n * (std::pow(pfa, -1.0 / n) - 1), 1e-12 * a);
            // Pfa = (1 + alpha / N)^-N (Venter 2014)
            EXPECT_LT(rel(std::pow(1 + a / n, -n), pfa), 1e-9);
        }
    }
}

/*
 * Gandhi & Kassam (1988) / Richards (2005) for halves of n = N/2 cells with the
 * threshold on the half sums, T = t * max|min(sum_lead, sum_lag): with t = alpha / n,
 *   Pfa_SO = 2 sum_{k=0}^{n-1} C(n-1+k, k) (2 + t)^-(n+k)
 *   Pfa_GO = 2 (1 + t)^-n - Pfa_SO
 */
double gk_so(int n, double alpha)
{
    const double t = alpha / n;
    double s = 0;
    for (int k = 0; k < n; ++k)
        s += std::exp(std::lgamma(n + k) - std::lgamma(n) - std::lgamma(k + 1) -
                      (n + k) * std::log(2 + t));
    return 2 * s;
}
double gk_go(int n, double alpha)
{
    return 2 * std::pow(1 + alpha / n, -n) - gk_so(n, alpha);
}

TEST(CfarAlpha, test_002_go_so_equal_halves_match_gandhi_kassam)
{
    for (int n : { 1, 4, 8, 28, 100 }) {
        for (double alpha : { 0.5, 3.0, 10.0, 25.0, 80.0 }) {
            EXPECT_LT(
                rel(cfar_pfa(cfar_variant::so, { n, n }, 0, alpha), gk_so(n, alpha)),
                1e-10)
                << n << " " << alpha;
            // The literature's GO form subtracts: at Pfa ~ 1e-17 (n = 28, alpha = 80) it
            // keeps ~8 digits, which bounds this comparison, not the library's series.
            EXPECT_LT(
                rel(cfar_pfa(cfar_variant::go, { n, n }, 0, alpha), gk_go(n, alpha)),
                1e-7)
                << n << " " << alpha;
        }
    }
}

/*
 * Unequal halves (clipped windows): Pfa = E[exp(-alpha Z)] = int_0^inf alpha e^(-alpha z)
 * F_Z(z) dz for Z = max or min of the half means U ~ Gamma(m, rate m), V ~ Gamma(n, rate
 * n); F_max = F_U F_V, F_min = 1 - (1 - F_U)(1 - F_V). Simpson's rule on a fine grid.
 */
double gamma_survival(int m, double z) // P(U > z), U the mean of m unit exponentials
{
    const double x = m * z;
    double term = std::exp(-x), s = 0;
    for (int j = 0; j < m; ++j) {
        s += term;
        term *= x / (j + 1);
    }
    return s;
}

double quadrature_pfa(bool greatest, int m, int n, double alpha)
{
    // w = alpha z: Pfa = int_0^inf e^-w F_Z(w / alpha) dw, whatever the scale of alpha.
    constexpr double w_max = 60;  // e^-60 of the weight lies beyond
    constexpr int steps = 200000; // even, for Simpson's rule
    const double h = w_max / steps;
    double s = 0;
    for (int i = 0; i <= steps; ++i) {
        const double w = i * h, z = w / alpha;
        const double su = gamma_survival(m, z), sv = gamma_survival(n, z);
        const double f = greatest ? (1 - su) * (1 - sv) : 1 - su * sv;
        const double weight = (i == 0 || i == steps) ? 1 : (i % 2 ? 4 : 2);
        s += weight * std::exp(-w) * f;
    }
    return s * h / 3;
}

TEST(CfarAlpha, test_003_go_so_unequal_halves_match_quadrature)
{
    const std::pair<int, int> halves[] = {
        { 1, 28 }, { 3, 25 }, { 10, 20 }, { 28, 28 }, { 6, 2 }
    };
    for (const auto& [m, n] : halves) {
        for (auto v : { cfar_variant::go, cfar_variant::so }) {
            const double alpha = cfar_alpha(v, { m, n }, 0, 1e-4);
            const double q = quadrature_pfa(v == cfar_variant::go, m, n, alpha);
            EXPECT_LT(rel(q, 1e-4), 1e-6) << to_string(v) << " " << m << "," << n;
        }
    }
}

TEST(CfarAlpha, test_004_round_trip_and_os)
{
    // OS with k = 1: Pfa = N / (N + alpha), alpha = N (1/Pfa - 1).
    EXPECT_LT(rel(cfar_alpha(cfar_variant::os, { 28, 28 }, 1, 1e-4), 56 * (1e4 - 1)),
              1e-10);
    // k = N: Pfa = prod_i (N - i) / (N - i + alpha), written out for N = 3.
    const double a3 = cfar_alpha(cfar_variant::os, { 1, 2 }, 3, 1e-3);
    EXPECT_LT(rel(3.0 / (3 + a3) * 2.0 / (2 + a3) * 1.0 / (1 + a3), 1e-3), 1e-9);
    struct c {
        cfar_variant v;
        cfar_counts n;
        int k;
    };
    const c cases[] = {
        { cfar_variant::go, { 28, 28 }, 0 },  { cfar_variant::so, { 1, 55 }, 0 },
        { cfar_variant::go, { 0, 16 }, 0 },   { cfar_variant::so, { 16, 0 }, 0 },
        { cfar_variant::os, { 28, 28 }, 42 }, { cfar_variant::os, { 5, 3 }, 8 },
        { cfar_variant::go, { 500, 500 }, 0 }
    };
    for (const auto& x : cases) {
        for (double pfa : { 1e-2, 1e-6, 1e-10 }) {
            const double a = cfar_alpha(x.v, x.n, x.k, pfa);
            EXPECT_LT(rel(cfar_pfa(x.v, x.n, x.k, a), pfa), 1e-9)
                << to_string(x.v) << " " << x.n.lead << "," << x.n.lag << " pfa " << pfa;
        }
    }
    // An empty half leaves cell averaging on the other.
    EXPECT_LT(rel(cfar_alpha(cfar_variant::go, { 0, 16 }, 0, 1e-5),
                  cfar_alpha(cfar_variant::ca, { 0, 16 }, 0, 1e-5)),
              1e-11);
    // The clipped os rank keeps the quantile.
    EXPECT_EQ(kernels::cfar_reduced_os_k(42, 56, 28), 21);
    EXPECT_EQ(kernels::cfar_reduced_os_k(1, 56, 10), 1);
    EXPECT_EQ(kernels::cfar_reduced_os_k(56, 56, 33), 33);
    EXPECT_EQ(kernels::cfar_default_os_k(56), 42);
    EXPECT_THROW(cfar_alpha(cfar_variant::os, { 2, 2 }, 5, 1e-3), std::invalid_argument);
    EXPECT_THROW(cfar_alpha(cfar_variant::ca, { 0, 0 }, 0, 1e-3), std::invalid_argument);
    EXPECT_THROW(cfar_alpha(cfar_variant::ca, { 4, 4 }, 0, 1.0), std::invalid_argument);
}

//! Fraction of mask cells set.
double detected_fraction(const std::vector<std::uint8_t>& mask)
{
    std::size_t n = 0;
    for (auto m : mask)
        n += m;
    return double(n) / double(mask.size());
}

//! Measured Pfa of cfar_2d (CPU) on `ncpi` CPIs of unit exponential noise.
double
measured_pfa(const cfar_2d_params& p, const std::vector<float>& noise, std::size_t ncpi)
{
    auto cfar = cfar_2d::make(backend::cpu, p);
    std::vector<std::uint8_t> mask(noise.size());
    cfar->run(noise.data(), mask.data(), nullptr, ncpi);
    return detected_fraction(mask);
}

TEST(CfarStatistics, test_010_measured_pfa_matches_design)
{
    // The PD window (guard/train range 1,5, Doppler 1,1: N = 56) with the thesis's edges;
    // 250 x 128 maps, 4 channels, 79 CPIs: 1.01e7 cells, 5% of them in clipped windows.
    cfar_2d_params p;
    p.nrange = 250;
    p.ndoppler = 128;
    p.channels = 4;
    p.max_cpi = 79;
    p.pfa = 1e-4;
    const std::size_t cells = p.max_cpi * p.nrange * p.channels * p.ndoppler;
    ASSERT_GE(cells, std::size_t(1e7));
    const auto noise = exponential_map(cells, 20240601);
    for (auto v :
         { cfar_variant::ca, cfar_variant::go, cfar_variant::so, cfar_variant::os }) {
        p.variant = v;
        p.os_k = 42;
        const double pfa = measured_pfa(p, noise, p.max_cpi);
        RecordProperty(std::string("pfa_") + to_string(v), std::to_string(pfa));
        EXPECT_NEAR(pfa, p.pfa, 0.1 * p.pfa) << to_string(v);
    }
}

TEST(CfarStatistics, test_011_clipped_windows_keep_the_design_pfa)
{
    // 13 x 8 maps with both edges clipped: every row but the middle and half the columns
    // have reduced windows, so this measures the per-class alphas (go/so with unequal and
    // empty-ish halves, os with a rescaled k). 2.0e6 cells at Pfa 1e-3.
    cfar_2d_params p;
    p.nrange = 13;
    p.ndoppler = 8;
    p.channels = 16;
    p.max_cpi = 1202;
    p.range_edge = cfar_edge::clip;
    p.doppler_edge = cfar_edge::clip;
    p.pfa = 1e-3;
    const auto noise = exponential_map(p.max_cpi * 13 * 8 * 16, 777);
    for (auto v :
         { cfar_variant::ca, cfar_variant::go, cfar_variant::so, cfar_variant::os }) {
        p.variant = v;
        p.os_k = 42;
        const double pfa = measured_pfa(p, noise, p.max_cpi);
        EXPECT_NEAR(pfa, p.pfa, 0.1 * p.pfa) << to_string(v);
    }
}

TEST(CfarStatistics, test_012_swerling1_pd_matches_ca_closed_form)
{
    // Targets on a grid 13 range x 5 Doppler bins apart, so no target sits in another's
    // window; every target window is full (N = 56). A Swerling-1 target in noise is a
    // complex Gaussian of power 1 + SNR: its square law is Exp(1 + SNR).
    cfar_2d_params p;
    p.nrange = 13 * 80;
    p.ndoppler = 128;
    p.max_cpi = 10;
    p.pfa = 1e-4;
    const int n = 56;
    const std::size_t map_cells = p.nrange * p.ndoppler;
    auto cfar = cfar_2d::make(backend::cpu, p);
    ASSERT_EQ(cfar->training_cells(), n);
    const double alpha = cfar->alpha();
    std::uint64_t seed = 31337;
    for (double snr_db : { 5.0, 10.0, 13.0, 16.0, 20.0 }) {
        const double snr = std::pow(10.0, snr_db / 10);
        auto power = exponential_map(p.max_cpi * map_cells, seed++);
        fast_rng rng(seed++);
        std::vector<std::size_t> targets;
        for (std::size_t cpi = 0; cpi < p.max_cpi; ++cpi)
            for (std::size_t r = 6; r < p.nrange; r += 13)
                for (std::size_t d = 2; d + 2 < p.ndoppler; d += 5) {
                    const std::size_t i = cpi * map_cells + r * p.ndoppler + d;
                    power[i] = float(rng.exponential(1 + snr));
                    targets.push_back(i);
                }
        ASSERT_GE(targets.size(), 20000u);
        std::vector<std::uint8_t> mask(power.size());
        cfar->run(power.data(), mask.data(), nullptr, p.max_cpi);
        std::size_t hits = 0;
        for (auto i : targets)
            hits += mask[i];
        const double pd = double(hits) / double(targets.size());
        const double want = std::pow(1 + alpha / (n * (1 + snr)), -n);
        RecordProperty("pd_" + std::to_string(int(snr_db)) + "dB", std::to_string(pd));
        EXPECT_NEAR(pd, want, 0.02) << "SNR " << snr_db << " dB";
    }
}

TEST(CfarStatistics, test_013_cfar_1d_pfa_matches_design)
{
    // Range-only, every variant, clipped edges: 2e6 cells at Pfa 1e-3.
    kernels::cfar_1d_params p;
    p.nrange = 2000;
    p.guard = 2;
    p.train = 12;
    p.max_items = 1000;
    p.pfa = 1e-3;
    const auto noise = exponential_map(p.nrange * p.max_items, 99);
    for (auto v :
         { cfar_variant::ca, cfar_variant::go, cfar_variant::so, cfar_variant::os }) {
        p.variant = v;
        p.os_k = 18;
        auto cfar = kernels::cfar_1d::make(backend::cpu, p);
        std::vector<std::uint8_t> mask(noise.size());
        cfar->run(noise.data(), mask.data(), nullptr, p.max_items);
        EXPECT_NEAR(detected_fraction(mask), p.pfa, 0.1 * p.pfa) << to_string(v);
    }
}

} // namespace
} // namespace gpuradar::test
