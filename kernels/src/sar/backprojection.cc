#include "common/factories.h"
#include "common/param_check.h"
#include "sar/backprojection_backends.h"
#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>

namespace gpuradar::kernels {

namespace {

template <typename V>
[[noreturn]] void bad(const char* param, const char* constraint, const V& got)
{
    detail::throw_invalid("backprojection", param, constraint, got);
}

constexpr double gib = double(1LL << 30);

//! "at most <limit> <unit> (<GiB> GiB); this <what> would be <n> <unit>, <GiB> GiB".
std::string size_limit(double limit, double n, const char* unit, double bytes_per_unit)
{
    std::ostringstream s;
    s << "at most " << limit << " " << unit << " (" << limit * bytes_per_unit / gib
      << " GiB); it would be " << n << " " << unit << ", " << n * bytes_per_unit / gib
      << " GiB";
    return s.str();
}

void validate_sizes(const image_grid& g, std::size_t nbins)
{
    if (g.nx < 1)
        bad("nx", ">= 1", g.nx);
    if (g.ny < 1)
        bad("ny", ">= 1", g.ny);
    if (g.nz < 1 || g.nz > backprojection::max_slices)
        bad("nz (volume slices)", "1 to 65535", g.nz);
    // Overflow-safe: each factor is checked against the limit before multiplying.
    constexpr long long lim = backprojection::max_voxels;
    if (g.nx > lim / g.ny || g.nx * g.ny > lim / g.nz) {
        const double n = double(g.nx) * double(g.ny) * double(g.nz);
        throw std::invalid_argument(
            "gpuradar::backprojection: nx*ny*nz (image size) must be " +
            size_limit(double(lim), n, "voxels", sizeof(cfloat)) + " of complex float");
    }
    if (nbins < 2)
        bad("nbins", ">= 2", nbins);
    if (nbins > backprojection::max_bins)
        throw std::invalid_argument(
            "gpuradar::backprojection: nbins must be " +
            size_limit(
                double(backprojection::max_bins), double(nbins), "bins", sizeof(cfloat)) +
            " per pulse");
}

} // namespace

void backprojection::validate(const image_grid& g, std::size_t nbins)
{
    validate_sizes(g, nbins);
    if (!(std::isfinite(g.dx) && g.dx > 0))
        bad("dx (pixel spacing)", "> 0 and finite", g.dx);
    if (!(std::isfinite(g.dy) && g.dy > 0))
        bad("dy (pixel spacing)", "> 0 and finite", g.dy);
    if (!(std::isfinite(g.dz) && g.dz > 0))
        bad("dz (slice spacing)", "> 0 and finite", g.dz);
    if (!std::isfinite(g.x0))
        bad("x0", "finite", g.x0);
    if (!std::isfinite(g.y0))
        bad("y0", "finite", g.y0);
    if (!std::isfinite(g.z))
        bad("z", "finite", g.z);
    if (!g.height.empty()) {
        if (g.height.size() != static_cast<std::size_t>(g.nx * g.ny))
            bad("height (map size)", "0 or nx*ny", g.height.size());
        for (std::size_t i = 0; i < g.height.size(); ++i)
            if (!std::isfinite(g.height[i]))
                bad("height", "finite everywhere", g.height[i]);
    }
}

backprojection::precision backprojection::parse_precision(const std::string& name)
{
    if (name == "fast")
        return precision::fast;
    if (name == "accurate")
        return precision::accurate;
    throw std::invalid_argument(
        "gpuradar::backprojection: precision must be one of fast, accurate (got '" +
        name + "')");
}

const char* backprojection::to_string(precision p)
{
    return p == precision::fast ? "fast" : "accurate";
}

std::unique_ptr<backprojection> backprojection::make(backend b,
                                                     const image_grid& grid,
                                                     std::size_t nbins,
                                                     precision p,
                                                     stream_ref stream,
                                                     const std::vector<int>& devices)
{
    validate(grid, nbins);
    detail::require_backend(b, "backprojection");
#ifdef GPURADAR_HAVE_CUDA
    if (b == backend::cuda && !devices.empty())
        return detail::make_backprojection_on_devices(grid, nbins, p, stream, devices);
    if (b == backend::cuda)
        return detail::make_backprojection_cuda(grid, nbins, p, stream);
#else
    (void)stream;
    (void)devices;
#endif
    return detail::make_backprojection_cpu(grid, nbins, p);
}

namespace detail {

bp_layout bp_make_layout(const image_grid& g)
{
    bp_layout l;
    l.ntx = (g.nx + bp_tile - 1) / bp_tile;
    l.nty = (g.ny + bp_tile - 1) / bp_tile;
    // A DEM of one height everywhere is the flat grid at that height: the flat kernels,
    // bit for bit the same image, and faster.
    const bool flat_dem =
        !g.height.empty() && std::all_of(g.height.begin(), g.height.end(), [&](double h) {
            return h == g.height[0];
        });
    l.has_height = !g.height.empty() && !flat_dem;
    l.z = flat_dem ? g.height[0] : g.z;
    l.cx_min = g.x0 + bp_tile_centre * g.dx;
    l.cx_max = g.x0 + (double(bp_tile) * double(l.ntx - 1) + bp_tile_centre) * g.dx;
    l.cy_min = g.y0 + bp_tile_centre * g.dy;
    l.cy_max = g.y0 + (double(bp_tile) * double(l.nty - 1) + bp_tile_centre) * g.dy;
    double dz_half = 0;
    if (!l.has_height) {
        l.cz_min = l.cz_max = l.z;
    } else {
        l.tile_z.resize(static_cast<std::size_t>(l.ntx * l.nty));
        l.dz.resize(g.height.size());
        l.cz_min = std::numeric_limits<double>::infinity();
        l.cz_max = -l.cz_min;
        for (long long ty = 0; ty < l.nty; ++ty)
            for (long long tx = 0; tx < l.ntx; ++tx) {
                const long long x1 = std::min(g.nx, (tx + 1) * bp_tile);
                const long long y1 = std::min(g.ny, (ty + 1) * bp_tile);
                double lo = std::numeric_limits<double>::infinity(), hi = -lo;
                for (long long y = ty * bp_tile; y < y1; ++y)
                    for (long long x = tx * bp_tile; x < x1; ++x) {
                        lo = std::min(lo, g.height[y * g.nx + x]);
                        hi = std::max(hi, g.height[y * g.nx + x]);
                    }
                // Centred between the extremes: the smallest bound on |dz| in the tile.
                const double c = 0.5 * (lo + hi);
                l.tile_z[ty * l.ntx + tx] = c;
                dz_half = std::max(dz_half, 0.5 * (hi - lo));
                l.cz_min = std::min(l.cz_min, c);
                l.cz_max = std::max(l.cz_max, c);
                for (long long y = ty * bp_tile; y < y1; ++y)
                    for (long long x = tx * bp_tile; x < x1; ++x)
                        l.dz[y * g.nx + x] = g.height[y * g.nx + x] - c;
            }
    }
    // Slice iz lies iz*dz above slice 0: the box of tile centres spans all slices.
    l.cz_max += double(g.nz - 1) * g.dz;
    l.hx = bp_tile_centre * std::abs(g.dx);
    l.hy = bp_tile_centre * std::abs(g.dy);
    l.hz = dz_half;
    l.hd = std::sqrt(l.hx * l.hx + l.hy * l.hy + l.hz * l.hz);
    return l;
}

void bp_check_pointers(const void* pulses,
                       const double* geometry,
                       std::size_t npulses,
                       const void* image)
{
    if (npulses == 0)
        return;
    if (!pulses)
        bad("pulses", "non-null", "nullptr");
    if (!geometry)
        bad("geometry", "non-null", "nullptr");
    if (!image)
        bad("image", "non-null", "nullptr");
}

namespace {

//! Distance (m) from point a to the farthest point of the box of tile centres, + hd.
double farthest_range(const double* a, const bp_layout& l)
{
    const double ex = std::max(std::abs(l.cx_min - a[0]), std::abs(l.cx_max - a[0]));
    const double ey = std::max(std::abs(l.cy_min - a[1]), std::abs(l.cy_max - a[1]));
    const double ez = std::max(std::abs(l.cz_min - a[2]), std::abs(l.cz_max - a[2]));
    return std::sqrt(ex * ex + ey * ey + ez * ez) + l.hd;
}

} // namespace

bool bp_carried(const double* g, const bp_layout& l)
{
    const double r = farthest_range(g, l);
    const double kt = std::abs(2.0 * g[5] / backprojection::speed_of_light);
    const double dr = g[4];
    return r <= bp_max_range_m && (r + std::abs(g[3])) / dr <= bp_max_range_bins &&
           kt * (l.hd + dr) <= bp_max_tile_turns && kt * r <= bp_max_reference_turns;
}

bp_prepared bp_prepare(const double* geometry,
                       std::size_t npulses,
                       const bp_layout& l,
                       backprojection::precision p)
{
    constexpr std::size_t n6 = backprojection::geometry_length;
    // Validate everything first: a throw leaves the image untouched.
    for (std::size_t i = 0; i < npulses; ++i) {
        const double* g = geometry + i * n6;
        const double dr = g[4];
        if (std::isfinite(dr) && dr <= 0)
            throw_invalid("backprojection",
                          "geometry dr",
                          "> 0",
                          std::to_string(dr) + " at pulse " + std::to_string(i));
    }
    bp_prepared out;
    out.pulses.reserve(npulses);
    double sigma_max = 0;
    // Margin for float rounding of dR'/dr (relative ~1e-7 of the tile's half-diagonal).
    constexpr double window_rounding_margin = 1e-5;
    for (std::size_t i = 0; i < npulses; ++i) {
        const double* g = geometry + i * n6;
        bool finite = true;
        for (std::size_t k = 0; k < n6; ++k)
            finite = finite && std::isfinite(g[k]);
        if (!finite) {
            ++out.skipped;
            continue;
        }
        if (!bp_carried(g, l)) {
            ++out.skipped;
            continue;
        }
        bp_pulse q{};
        q.ax = g[0];
        q.ay = g[1];
        q.az = g[2];
        q.r0 = g[3];
        q.dr = g[4];
        q.inv_dr = 1.0 / g[4];
        q.kt = 2.0 * g[5] / backprojection::speed_of_light;
        q.index = static_cast<int>(i);
        // Closest tile centre to this antenna bounds sigma = q/(4 r^2) <= hd/(2r) +
        // hd^2/(4r^2).
        const double ex = std::max({ l.cx_min - q.ax, 0.0, q.ax - l.cx_max });
        const double ey = std::max({ l.cy_min - q.ay, 0.0, q.ay - l.cy_max });
        const double ez = std::max({ l.cz_min - q.az, 0.0, q.az - l.cz_max });
        const double rmin = std::sqrt(ex * ex + ey * ey + ez * ez);
        // |dR'| <= dr/2 + |R - r|, |R - r| <= |d| <= hd and <= |u.d|/r + |d|^2/(2(r -
        // |d|)) (entry_window), with |u_x|/r at most the farthest centre's |u_x| over
        // r_min (likewise y, z); one more bin for rounding of the bin and the margin.
        double reach = l.hd;
        if (rmin > 2 * l.hd) {
            const double fx =
                std::max(std::abs(l.cx_min - q.ax), std::abs(l.cx_max - q.ax));
            const double fy =
                std::max(std::abs(l.cy_min - q.ay), std::abs(l.cy_max - q.ay));
            const double fz =
                std::max(std::abs(l.cz_min - q.az), std::abs(l.cz_max - q.az));
            const double across = std::min(1.0, fx / rmin) * l.hx +
                                  std::min(1.0, fy / rmin) * l.hy +
                                  std::min(1.0, fz / rmin) * l.hz;
            reach = std::min(reach, across + l.hd * l.hd / (2 * (rmin - l.hd)));
        }
        const double half =
            std::ceil(reach * (1 + window_rounding_margin) / q.dr + 0.5) + 1;
        q.half = half < 1e9 ? static_cast<int>(half) : 1000000000;
        out.max_half = std::max(out.max_half, q.half);
        const double s =
            rmin > 0 ? l.hd / (2 * rmin) + l.hd * l.hd / (4 * rmin * rmin) : INFINITY;
        sigma_max = std::max(sigma_max, s);
        out.bend_turns =
            std::max(out.bend_turns,
                     rmin > 0 ? 2 * std::abs(q.kt) * l.hd * l.hd / rmin : INFINITY);
        out.pulses.push_back(q);
    }
    const double tol = p == backprojection::precision::fast
                           ? bp_series_tol_fast
                           : bp_series_tol_accurate_m / std::max(l.hd, 1e-300);
    // The series converges for sigma < 1/4; C_{N+1} sigma^{N+1} is its truncation.
    out.series_terms = 0;
    if (sigma_max < 0.2) {
        for (int n : { 2, 4 })
            if (std::abs(bp_catalan_signed(n + 1)) * std::pow(sigma_max, n + 1) <= tol) {
                out.series_terms = n;
                break;
            }
    }
    return out;
}

bp_backend::bp_backend(const image_grid& g,
                       std::size_t nbins,
                       backprojection::precision p)
    : backprojection(g, nbins, p), d_layout(bp_make_layout(g))
{
}

bool bp_backend::begin_run(const void* pulses,
                           const double* geometry,
                           std::size_t npulses,
                           const void* image,
                           bp_prepared& prep)
{
    bp_check_pointers(pulses, geometry, npulses, image);
    prep = bp_prepare(geometry, npulses, d_layout, d_precision);
    d_skipped += prep.skipped;
    return !prep.pulses.empty();
}

} // namespace detail

} // namespace gpuradar::kernels
