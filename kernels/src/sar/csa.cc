/* csa: parameter checks, the phase tables (double precision) and backend dispatch. */
#include "common/factories.h"
#include "common/param_check.h"
#include "sar/csa_backends.h"
#include <gpuradar/kernels/common/constants.h>
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

namespace gpuradar::kernels {

namespace {
using detail::csa_quadratic;
using detail::pi;

template <typename V>
[[noreturn]] void bad(const char* param, const std::string& constraint, const V& got)
{
    detail::throw_invalid("csa", param, constraint, got);
}

//! The numbers every phase function is built from (see csa_backends.h).
struct csa_geometry {
    double lambda, fc, K, fs, prf, v, near, dr, f_dc, d_ref, r_ref;
    std::size_t naz, nr;

    explicit csa_geometry(const stripmap_params& p, std::size_t n, const csa::options& o)
        : lambda(p.wavelength_m()),
          fc(p.fc_hz),
          K(p.chirp_rate_hz_per_s()),
          fs(p.fs_hz),
          prf(p.prf_hz),
          v(o.effective_velocity_mps > 0 ? o.effective_velocity_mps : p.velocity_mps),
          near(p.near_range_m),
          dr(p.range_spacing_m()),
          f_dc(p.doppler_centroid_hz()),
          d_ref(migration(f_dc)),
          r_ref(o.reference_range_m > 0 ? o.reference_range_m
                                        : d_ref * p.centre_range_m()),
          naz(n),
          nr(p.nrange)
    {
    }

    //! D(f) = sqrt(1 - (lambda f / 2V)^2); NaN where f is beyond the velocity's reach.
    double migration(double f) const
    {
        const double s = lambda * f / (2.0 * v);
        return std::sqrt(1.0 - s * s);
    }
    //! Offset of azimuth bin m's frequency from the centroid, in [-PRF/2, PRF/2).
    double doppler_offset(std::size_t m) const
    {
        const double x = static_cast<double>(m) * prf / static_cast<double>(naz) - f_dc;
        return x - prf * std::floor((x + 0.5 * prf) / prf);
    }
    //! K_m / K denominator: 1 - K c R_ref f^2 / (2 V^2 fc^3 D^3).
    double src_denominator(double f) const
    {
        const double d = migration(f);
        return 1.0 - K * speed_of_light * r_ref * f * f /
                         (2.0 * v * v * fc * fc * fc * d * d * d);
    }
};

double wrap_turns(double x) { return x - std::rint(x); }

csa_quadratic reduced(double a, double b, double c)
{
    return { wrap_turns(a), wrap_turns(b), wrap_turns(c) };
}

void validate(const stripmap_params& p, std::size_t naz, const csa::options& o)
{
    p.validate("csa");
    if (p.nrange < static_cast<std::size_t>(detail::csa_resample_taps))
        bad("nrange", ">= " + std::to_string(detail::csa_resample_taps), p.nrange);
    if (!(std::isfinite(o.reference_range_m) && o.reference_range_m >= 0))
        bad("reference_range_m",
            ">= 0 and finite (0: the window's centre)",
            o.reference_range_m);
    if (!(std::isfinite(o.effective_velocity_mps) && o.effective_velocity_mps >= 0))
        bad("effective_velocity_mps",
            ">= 0 and finite (0: the platform's)",
            o.effective_velocity_mps);
    o.range_window.validate("csa");
    o.azimuth_window.validate("csa");
    if (naz < 2 || naz > static_cast<std::size_t>(std::numeric_limits<int>::max()))
        bad("naz", "in [2, 2^31)", naz);
    const double far = p.near_range_m + double(p.nrange - 1) * p.range_spacing_m();
    const double aperture = std::ceil(p.aperture_pulses(far));
    if (static_cast<double>(naz) < aperture)
        bad("naz",
            ">= the synthetic aperture at the far range, " +
                std::to_string(static_cast<long long>(aperture)) + " pulses",
            naz);
    const csa_geometry g(p, naz, o);
    // Every processed Doppler frequency must be reachable (D real) and keep the
    // secondary-range-compression rate finite.
    const double f_edge = std::abs(g.f_dc) + 0.5 * g.prf;
    if (!(g.lambda * f_edge / (2.0 * g.v) < 1.0))
        bad("prf_hz",
            "< 2 (2 v / lambda - |Doppler centroid|) = " +
                std::to_string(2.0 * (2.0 * g.v / g.lambda - std::abs(g.f_dc))) +
                " Hz (Doppler beyond the platform's reach)",
            p.prf_hz);
    for (double f : { g.f_dc - 0.5 * g.prf, g.f_dc + 0.5 * g.prf, 0.0 })
        if (!(g.src_denominator(f) > 0.1))
            bad("bandwidth_hz",
                "small enough for secondary range compression at the edge of the "
                "Doppler band (K c R f^2 / (2 V^2 fc^3 D^3) < 0.9)",
                p.bandwidth_hz);
}

//! Window coefficients laid onto the bins `order` lists (ascending frequency).
void lay_window(const window_spec& w,
                const std::vector<std::size_t>& order,
                double scale,
                std::vector<float>& out)
{
    const auto coef = window_coefficients(w, order.size());
    for (std::size_t i = 0; i < order.size(); ++i)
        out[order[i]] = static_cast<float>(coef[i] * scale);
}

std::vector<float> range_weights(const stripmap_params& p, const window_spec& w)
{
    const long long nr = static_cast<long long>(p.nrange);
    const double df = p.fs_hz / double(nr);
    const double half_band = 0.5 * p.bandwidth_hz;
    std::vector<std::size_t> order;
    for (long long x = -nr / 2; x < nr - nr / 2; ++x)
        if (std::abs(double(x) * df) <= half_band)
            order.push_back(static_cast<std::size_t>((x + nr) % nr));
    std::vector<float> out(p.nrange, 0.0f);
    lay_window(w, order, 1.0, out);
    return out;
}

std::vector<float>
azimuth_weights(const csa_geometry& g, const stripmap_params& p, const window_spec& w)
{
    const double half_band = 0.5 * p.doppler_bandwidth_hz();
    std::vector<std::pair<double, std::size_t>> band;
    for (std::size_t m = 0; m < g.naz; ++m) {
        const double y = g.doppler_offset(m);
        if (std::abs(y) <= half_band)
            band.emplace_back(y, m);
    }
    std::sort(band.begin(), band.end());
    std::vector<std::size_t> order;
    for (const auto& b : band)
        order.push_back(b.second);
    std::vector<float> out(g.naz, 0.0f);
    lay_window(w, order, 1.0 / (double(g.naz) * double(g.nr)), out);
    return out;
}

//! Kaiser-windowed sinc taps from the range at D_ref onto the zero-Doppler grid.
void resampler(const csa_geometry& g, detail::csa_tables& t)
{
    constexpr int T = detail::csa_resample_taps;
    constexpr double beta = 9.0;
    const double half = 0.5 * T;
    const long long nr = static_cast<long long>(g.nr);
    t.resample_first.resize(g.nr);
    t.resample_taps.assign(g.nr * T, 0.0f);
    const auto kernel = [&](double u) { return kaiser_sinc(u, half, beta); };
    for (long long j = 0; j < nr; ++j) {
        const double pos = ((g.near + double(j) * g.dr) / g.d_ref - g.near) / g.dr;
        const long long f0 = static_cast<long long>(std::floor(pos)) - T / 2 + 1;
        double sum = 0;
        for (int k = 0; k < T; ++k)
            sum += kernel(pos - double(f0 + k));
        const long long first = std::clamp(f0, 0LL, nr - T);
        t.resample_first[j] = static_cast<int>(first);
        for (int k = 0; k < T; ++k)
            t.resample_taps[j * T + k] =
                static_cast<float>(kernel(pos - double(first + k)) / sum);
    }
}

} // namespace

namespace detail {

csa_tables
csa_make_tables(const stripmap_params& p, std::size_t naz, const csa::options& o)
{
    const csa_geometry g(p, naz, o);
    csa_tables t;
    t.naz = naz;
    t.nrange = p.nrange;
    t.phase1.resize(naz);
    t.phase2.resize(naz);
    t.phase3.resize(naz);
    const double c = speed_of_light;
    const double df = g.fs / double(g.nr);
    for (std::size_t m = 0; m < naz; ++m) {
        const double f = g.f_dc + g.doppler_offset(m);
        const double d = g.migration(f);
        const double km = g.K / g.src_denominator(f);
        const double alpha = g.d_ref / d - 1.0;
        const double u0 = 2.0 * g.near / c - 2.0 * g.r_ref / (c * d);
        t.phase1[m] = reduced(0.5 * km * alpha * u0 * u0,
                              km * alpha * u0 / g.fs,
                              0.5 * km * alpha / (g.fs * g.fs));
        t.phase2[m] = reduced(0.0,
                              2.0 * g.r_ref / c * (1.0 / d - 1.0 / g.d_ref) * df,
                              0.5 * d / (km * g.d_ref) * df * df);
        const double q = 2.0 * km * (1.0 - d / g.d_ref) / (c * d * c * d);
        const double off = g.near - g.r_ref;
        t.phase3[m] = reduced(2.0 * g.fc * d * g.near / c - q * off * off,
                              2.0 * g.fc * d * g.dr / c - 2.0 * q * off * g.dr,
                              -q * g.dr * g.dr);
    }
    t.range_weight = range_weights(p, o.range_window);
    t.azimuth_weight = azimuth_weights(g, p, o.azimuth_window);
    t.resample = g.d_ref < 1.0;
    if (t.resample)
        resampler(g, t);
    return t;
}

} // namespace detail

std::unique_ptr<csa> csa::make(backend b,
                               const stripmap_params& p,
                               std::size_t naz,
                               const options& o,
                               stream_ref stream)
{
    validate(p, naz, o);
    detail::require_backend(b, "csa");
#ifdef GPURADAR_HAVE_CUDA
    if (b == backend::cuda)
        return detail::make_csa_cuda(p, naz, o, stream);
#else
    (void)stream;
#endif
    return detail::make_csa_cpu(p, naz, o);
}

} // namespace gpuradar::kernels
