#include "common/factories.h"
#include "common/param_check.h"
#include "sar/backprojection_factorized_backends.h"
#include <gpuradar/kernels/common/device_split.h>
#include <gpuradar/kernels/common/window.h>
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace gpuradar::kernels {

namespace {

constexpr const char* stage_name = "backprojection";
//! Most merge stages: 4^30 pulses is far beyond any aperture; keeps factor^stages exact.
constexpr int max_stages = 30;

template <typename V>
[[noreturn]] void bad(const char* param, const std::string& constraint, const V& got)
{
    detail::throw_invalid(stage_name, param, constraint, got);
}

} // namespace

bp_algorithm parse_bp_algorithm(const std::string& name)
{
    if (name == "direct")
        return bp_algorithm::direct;
    if (name == "factorized")
        return bp_algorithm::factorized;
    bad("algorithm", "one of direct, factorized", "'" + name + "'");
}

const char* to_string(bp_algorithm a)
{
    return a == bp_algorithm::direct ? "direct" : "factorized";
}

void backprojection_factorized::validate(const ffbp_options& o)
{
    if (o.stages < 0 || o.stages > max_stages)
        bad("stages", "0 (auto) to " + std::to_string(max_stages), o.stages);
    if (o.factor != 2 && o.factor != 4)
        bad("factor", "2 or 4", o.factor);
    const auto check_order = [](const char* name, int v) {
        if (v < ffbp_options::min_order || v > ffbp_options::max_order || v % 2 != 0)
            bad(name, "even, 2 to 16", v);
    };
    check_order("order_range (interpolator taps)", o.order_range);
    check_order("order_angle (interpolator taps)", o.order_angle);
    const auto check_os = [](const char* name, double v) {
        if (!(v >= ffbp_options::min_oversample && v <= ffbp_options::max_oversample))
            bad(name, "1.25 to 8", v);
    };
    check_os("oversample_range", o.oversample_range);
    check_os("oversample_angle", o.oversample_angle);
}

int backprojection_factorized::stages_for(const ffbp_options& o, std::size_t npulses)
{
    const double f = o.factor;
    if (o.stages == 0) {
        int s = 0;
        while (s < max_stages &&
               std::pow(f, s + 1) * ffbp_options::auto_initial_pulses <= double(npulses))
            ++s;
        return s;
    }
    if (std::pow(f, o.stages) > double(npulses)) {
        const int most =
            npulses > 0 ? int(std::floor(std::log(double(npulses)) / std::log(f) + 1e-9))
                        : 0;
        bad("stages",
            "at most " + std::to_string(most) +
                " (factor^stages <= " + std::to_string(npulses) +
                " usable pulses, factor " + std::to_string(o.factor) + ")",
            o.stages);
    }
    return o.stages;
}

std::vector<long long> backprojection_factorized::level_samples(const image_grid& grid,
                                                                const double* geometry,
                                                                std::size_t npulses,
                                                                const ffbp_options& o)
{
    validate(o);
    const detail::bp_layout layout = detail::bp_make_layout(grid);
    const detail::bp_prepared prep = detail::bp_prepare(
        geometry, npulses, layout, backprojection::precision::accurate);
    if (prep.pulses.empty())
        return {};
    return detail::ffbp_make_plan(prep.pulses, grid, layout.z, o).level_samples;
}

std::unique_ptr<backprojection>
backprojection_factorized::make(backend b,
                                const image_grid& grid,
                                std::size_t nbins,
                                const ffbp_options& o,
                                stream_ref stream,
                                const std::vector<int>& devices)
{
    validate(o);
    backprojection::validate(grid, nbins);
    if (!grid.height.empty())
        bad("height (algorithm factorized)",
            "empty: FFBP forms flat images and volumes, not images on a height map "
            "(use algorithm direct)",
            std::to_string(grid.height.size()) + " values");
    if (b == backend::cuda && devices.size() > 1)
        bad("device (algorithm factorized)",
            "a single device: FFBP does not split an image over several GPUs (use "
            "algorithm direct)",
            std::to_string(devices.size()) + " devices");
    detail::require_backend(b, "backprojection");
#ifdef GPURADAR_HAVE_CUDA
    if (b == backend::cuda) {
        if (devices.size() == 1) {
            // As direct backprojection: the listed device is current while the object
            // (its buffers and table) is made.
            check_device_index("backprojection", devices[0], cuda_device_count());
            device_scope on(devices[0]);
            return detail::make_backprojection_factorized_cuda(grid, nbins, o, stream);
        }
        return detail::make_backprojection_factorized_cuda(grid, nbins, o, stream);
    }
#else
    (void)stream;
#endif
    return detail::make_backprojection_factorized_cpu(grid, nbins, o);
}

namespace detail {

namespace {

/*!
 * Kaiser beta for `order` taps and oversampling os: the window's main lobe half-width
 * sqrt(beta^2 + pi^2) / (pi order) set to half the guard band (1 - 1/os) / 2, so that the
 * passband |f| < 1/(2 os) stays flat and the images from |f| > 1 - 1/(2 os) fall in the
 * stop band.
 */
double kaiser_beta(int order, double os)
{
    const double a = ffbp_pi * order * (1 - 1 / os) / 2;
    return a > ffbp_pi ? std::sqrt(a * a - ffbp_pi * ffbp_pi) : 0.0;
}

void fill_kernel(float* out, int order, double os)
{
    const double beta = kaiser_beta(order, os);
    const double half = order / 2.0;
    const int n = ffbp_table_length(order);
    for (int i = 0; i < n; ++i)
        out[i] = float(kaiser_sinc(double(i) / ffbp_table_per_sample, half, beta));
}

//! Points sampled along each edge of a region's outline: the extremes of a child's range
//! and angle over a region lie on its outline, and between samples (at most 1/128 of an
//! edge apart) they move by far less than the extra sample of margin added for it.
constexpr int outline_samples = 128;

/*!
 * A region of the image plane a polar grid must cover: its outline (points) and whether
 * a given centre lies inside it (then the grid is the full circle).
 */
struct region {
    std::vector<double> x, y;
    // A rectangle (the image) or a parent's polar sector.
    bool is_rect = true;
    double x0 = 0, x1 = 0, y0 = 0, y1 = 0;
    const ffbp_polar* sector = nullptr;

    bool contains(double cx, double cy) const
    {
        if (is_rect)
            return cx >= x0 && cx <= x1 && cy >= y0 && cy <= y1;
        const ffbp_polar& g = *sector;
        const double ex = cx - g.cx, ey = cy - g.cy;
        const double rho = std::hypot(ex, ey);
        const double r_end = g.r0 + (g.nr - 1) * g.dr;
        const double rho_lo = std::sqrt(std::max(g.r0 * g.r0 - g.h2, 0.0));
        const double rho_hi = std::sqrt(std::max(r_end * r_end - g.h2, 0.0));
        if (g.wrap)
            return rho <= rho_hi;
        double rel = std::atan2(ey, ex) - g.phic;
        rel -= 2 * ffbp_pi * std::floor((rel + ffbp_pi) / (2 * ffbp_pi));
        return rho >= rho_lo && rho <= rho_hi && rel >= g.a0 &&
               rel <= g.a0 + (g.na - 1) * g.da;
    }
};

region rectangle(double x0, double x1, double y0, double y1)
{
    region reg;
    reg.x0 = x0;
    reg.x1 = x1;
    reg.y0 = y0;
    reg.y1 = y1;
    const double xs[5] = { x0, x1, x1, x0, x0 }, ys[5] = { y0, y0, y1, y1, y0 };
    for (int e = 0; e < 4; ++e)
        for (int t = 0; t < outline_samples; ++t) {
            const double f = double(t) / outline_samples;
            reg.x.push_back(xs[e] + f * (xs[e + 1] - xs[e]));
            reg.y.push_back(ys[e] + f * (ys[e + 1] - ys[e]));
        }
    return reg;
}

//! The points of polar grid g (its margins included) as a region: its outline.
region sector(const ffbp_polar& g)
{
    region reg;
    reg.is_rect = false;
    reg.sector = &g;
    const double r_end = g.r0 + (g.nr - 1) * g.dr;
    const double rho_lo = std::sqrt(std::max(g.r0 * g.r0 - g.h2, 0.0));
    const double rho_hi = std::sqrt(std::max(r_end * r_end - g.h2, 0.0));
    const double a_lo = g.phic + g.a0, a_hi = a_lo + (g.na - 1) * g.da;
    auto add = [&](double rho, double a) {
        reg.x.push_back(g.cx + rho * std::cos(a));
        reg.y.push_back(g.cy + rho * std::sin(a));
    };
    for (int t = 0; t <= outline_samples; ++t) {
        const double f = double(t) / outline_samples;
        add(rho_hi, g.wrap ? -ffbp_pi + 2 * ffbp_pi * f : a_lo + f * (a_hi - a_lo));
        if (!g.wrap) {
            add(rho_lo, a_lo + f * (a_hi - a_lo));
            add(rho_lo + f * (rho_hi - rho_lo), a_lo);
            add(rho_lo + f * (rho_hi - rho_lo), a_hi);
        }
    }
    return reg;
}

//! The polar grid of centre (cx, cy, cz) covering region `reg` on plane zp.
ffbp_polar grid_for(double cx,
                    double cy,
                    double cz,
                    const region& reg,
                    double zp,
                    double dr,
                    double da_max,
                    int margin_r,
                    int margin_a)
{
    ffbp_polar g{};
    g.cx = cx;
    g.cy = cy;
    g.cz = cz;
    g.h2 = (cz - zp) * (cz - zp);
    const bool inside = reg.contains(cx, cy);
    double mx = 0, my = 0;
    for (std::size_t i = 0; i < reg.x.size(); ++i) {
        mx += reg.x[i];
        my += reg.y[i];
    }
    const double phic =
        std::atan2(my / double(reg.x.size()) - cy, mx / double(reg.x.size()) - cx);
    double rho_min = inside ? 0.0 : INFINITY, rho_max = 0;
    double lo = INFINITY, hi = -INFINITY;
    for (std::size_t i = 0; i < reg.x.size(); ++i) {
        const double x = reg.x[i] - cx, y = reg.y[i] - cy;
        const double rho = std::hypot(x, y);
        rho_min = std::min(rho_min, rho);
        rho_max = std::max(rho_max, rho);
        double rel = std::atan2(y, x) - phic;
        rel -= 2 * ffbp_pi * std::floor((rel + ffbp_pi) / (2 * ffbp_pi));
        lo = std::min(lo, rel);
        hi = std::max(hi, rel);
    }
    // One more sample each side for the outline's sampling.
    ++margin_r;
    ++margin_a;
    const double r_lo = std::sqrt(rho_min * rho_min + g.h2);
    const double r_hi = std::sqrt(rho_max * rho_max + g.h2);
    g.dr = dr;
    g.inv_dr = 1 / dr;
    g.r0 = r_lo - margin_r * dr;
    g.nr = int(std::ceil((r_hi - r_lo) / dr)) + 1 + 2 * margin_r;
    if (inside) {
        // The region surrounds the centre: every direction.
        const double da = std::min(da_max, 2 * ffbp_pi / (2 * margin_a + 2));
        g.wrap = 1;
        g.na = int(std::ceil(2 * ffbp_pi / da));
        g.da = 2 * ffbp_pi / g.na;
        g.phic = 0;
        g.a0 = -ffbp_pi;
    } else {
        // A subaperture of one pulse has no angular bandwidth: a few samples suffice.
        const double da = std::min(da_max, std::max(hi - lo, 1e-12) / 4);
        g.wrap = 0;
        g.da = da;
        g.phic = phic;
        g.a0 = lo - margin_a * da;
        g.na = int(std::ceil((hi - lo) / da)) + 1 + 2 * margin_a;
    }
    g.inv_da = 1 / g.da;
    g.cos_phic = std::cos(g.phic);
    g.sin_phic = std::sin(g.phic);
    g.a0f = float(g.a0);
    g.inv_daf = float(g.inv_da);
    return g;
}

} // namespace

std::vector<float> ffbp_kernel_table(const ffbp_options& o)
{
    const int n = ffbp_table_length(o.order_range);
    std::vector<float> t(std::size_t(n + ffbp_table_length(o.order_angle)));
    fill_kernel(t.data(), o.order_range, o.oversample_range);
    fill_kernel(t.data() + n, o.order_angle, o.oversample_angle);
    return t;
}

long long ffbp_max_level_samples(const ffbp_plan& p)
{
    long long m = 0;
    for (long long n : p.level_samples)
        m = std::max(m, n);
    return m;
}

ffbp_plan ffbp_make_plan(const std::vector<bp_pulse>& pulses,
                         const image_grid& g,
                         double zp,
                         const ffbp_options& o)
{
    const std::size_t P = pulses.size();
    const int S = backprojection_factorized::stages_for(o, P);
    const long long f = o.factor;
    long long fs = 1;
    for (int s = 0; s < S; ++s)
        fs *= f;
    const long long L0 = (static_cast<long long>(P) + fs - 1) / fs;
    ffbp_plan plan;
    plan.zp = zp;
    plan.kt = pulses[0].kt;
    double dr_min = INFINITY, kt_band = 0;
    for (const bp_pulse& p : pulses) {
        dr_min = std::min(dr_min, p.dr);
        // 2 f_max / c: the top of the band, |f0| + c / (4 dr), in turns per metre.
        kt_band = std::max(kt_band, std::abs(p.kt) + 0.5 / p.dr);
    }
    const double dr_polar = dr_min / o.oversample_range;
    const int margin_r = o.order_range / 2 + 1, margin_a = o.order_angle / 2 + 1;

    // The tree: pulse ranges per node, level 0 up.
    struct span {
        long long first, count;   // pulses
        long long cfirst, ccount; // children
    };
    std::vector<std::vector<span>> tree(S + 1);
    const long long n0 = (static_cast<long long>(P) + L0 - 1) / L0;
    for (long long j = 0; j < n0; ++j)
        tree[0].push_back({ j * L0, std::min<long long>(L0, P - j * L0), j * L0, 0 });
    for (int s = 1; s <= S; ++s) {
        const auto& prev = tree[s - 1];
        const long long n = (static_cast<long long>(prev.size()) + f - 1) / f;
        for (long long j = 0; j < n; ++j) {
            const long long c0 = j * f;
            const long long cn = std::min<long long>(f, prev.size() - c0);
            const long long p0 = prev[c0].first;
            const long long pn = prev[c0 + cn - 1].first + prev[c0 + cn - 1].count - p0;
            tree[s].push_back({ p0, pn, c0, cn });
        }
    }
    // Grids from the top down: the last polar level's cover the image (the top merge is
    // made onto the pixels, so the polar levels stop below it), each child the points of
    // its parent's samples (margins included), so that every tap a parent reads exists;
    // the outline itself, not its bounding box, which would grow level by level.
    const int top = S > 0 ? S - 1 : 0;
    plan.levels.resize(top + 1);
    const region image = rectangle(
        g.x0, g.x0 + double(g.nx - 1) * g.dx, g.y0, g.y0 + double(g.ny - 1) * g.dy);
    for (int s = top; s >= 0; --s) {
        auto& level = plan.levels[s];
        level.resize(tree[s].size());
        long long offset = 0;
        for (std::size_t j = 0; j < tree[s].size(); ++j) {
            const span& n = tree[s][j];
            double cx = 0, cy = 0, cz = 0;
            for (long long i = n.first; i < n.first + n.count; ++i) {
                cx += pulses[i].ax;
                cy += pulses[i].ay;
                cz += pulses[i].az;
            }
            cx /= double(n.count);
            cy /= double(n.count);
            cz /= double(n.count);
            double ell = 0;
            for (long long i = n.first; i < n.first + n.count; ++i)
                ell = std::max(ell,
                               std::sqrt((pulses[i].ax - cx) * (pulses[i].ax - cx) +
                                         (pulses[i].ay - cy) * (pulses[i].ay - cy) +
                                         (pulses[i].az - cz) * (pulses[i].az - cz)));
            const double da_nyquist = ell > 0 ? 1 / (kt_band * 2 * ell)
                                              : std::numeric_limits<double>::infinity();
            const region cover =
                s == top ? image : sector(plan.levels[s + 1][j / std::size_t(f)]);
            ffbp_polar p = grid_for(cx,
                                    cy,
                                    cz,
                                    cover,
                                    zp,
                                    dr_polar,
                                    da_nyquist / o.oversample_angle,
                                    margin_r,
                                    margin_a);
            if (s == 0) {
                p.first = int(n.first);
                p.count = int(n.count);
            } else {
                p.first = int(n.cfirst);
                p.count = int(n.ccount);
            }
            p.offset = offset;
            offset += static_cast<long long>(p.na) * p.nr;
            level[j] = p;
        }
        plan.level_samples.insert(plan.level_samples.begin(), offset);
    }
    return plan;
}

} // namespace detail

} // namespace gpuradar::kernels
