/*
 * CPU twin of the backprojection stage.
 *
 * The CPU pool's threads (cpu_threads.h) take runs of 32 x 32-pixel tiles. Every tile is
 * computed whole by one thread into pixels no other tile touches, so the image is bit for
 * bit the same at any thread count. A tile keeps its accumulators (8 KiB) in L1 for all
 * pulses; per pulse the tile reads only the few range bins its pixels reach (the pulse's
 * window around r_ref), and pulses whose window misses the swath are skipped whole. The
 * range of each pixel is taken relative to the tile's reference range
 * (backprojection_backends.h): `fast` in float, `accurate` in double (range difference
 * and phase), both without a square root in the common case. The inner loop runs over one
 * 32-pixel tile row and is written to vectorise (gathers for the two range bins, a
 * polynomial sincos); it is compiled for AVX-512, AVX2+FMA and baseline x86-64 and the
 * best one the CPU has is picked at construction.
 */
// The inner loop's selects (bin validity, sincos quadrant, clamps) compare floats; GCC
// if-converts (and so vectorises) them only when FP comparisons may not trap. No code
// here relies on FP exceptions or errno (sqrt in the exact formula). Before every
// include: functions with other options would not be inlined.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math", "no-math-errno")
#endif

#include "common/cpu/row_pool.h"
#include "sar/backprojection_backends.h"
#include <algorithm>
#include <cmath>
#include <vector>

namespace gpuradar::kernels::detail {
namespace {

constexpr int S = bp_tile;

struct tile_args {
    const image_grid* grid;
    const bp_layout* layout;
    const bp_pulse* pulses;
    std::size_t npulses;
    const cfloat* data;
    int nbins;
    cfloat* image;
};

/*
 * sin and cos of 2 pi f for |f| <= 1/2 turn: quadrant from round(4f), then Taylor
 * polynomials on [-pi/4, pi/4] (errors below 3e-8), branch-free so that it vectorises.
 */
[[gnu::always_inline]] inline void sincos_turns(float f, float& sn, float& cs)
{
    constexpr float two_pi = 6.28318530717958647692f;
    const float q4 = std::rint(4.0f * f);
    const float x = two_pi * (f - 0.25f * q4);
    const float x2 = x * x;
    const float s =
        x * (1.0f + x2 * (-1.0f / 6 + x2 * (1.0f / 120 +
                                            x2 * (-1.0f / 5040 + x2 * (1.0f / 362880)))));
    const float c =
        1.0f + x2 * (-0.5f + x2 * (1.0f / 24 + x2 * (-1.0f / 720 + x2 * (1.0f / 40320))));
    const int q = static_cast<int>(q4) & 3;
    const float s1 = (q & 1) ? c : s;
    const float c1 = (q & 1) ? s : c;
    sn = (q & 2) ? -s1 : s1;
    cs = ((q + 1) & 2) ? -c1 : c1;
}

/*
 * One tile, all pulses. T is the type of the range difference and phase (float: fast,
 * double: accurate); N the series order (0: exact); H whether there is a height map.
 */
template <typename T, int N, bool H>
[[gnu::always_inline]] inline void
tile_body(const tile_args& a, long long tx, long long ty, long long iz)
{
    const image_grid& g = *a.grid;
    const bp_layout& l = *a.layout;
    const long long xs = tx * S, ys = ty * S;
    const int ncols = static_cast<int>(std::min<long long>(S, g.nx - xs));
    const int nrows = static_cast<int>(std::min<long long>(S, g.ny - ys));
    const double cx = g.x0 + (double(xs) + bp_tile_centre) * g.dx;
    const double cy = g.y0 + (double(ys) + bp_tile_centre) * g.dy;
    const double cz = (H ? l.tile_z[ty * l.ntx + tx] : l.z) + double(iz) * g.dz;

    alignas(64) T dxv[S], dx2[S], dyv[S], dy2[S];
    alignas(64) T dzv[H ? S : 1][S], dz2[H ? S : 1][S];
    alignas(64) float accr[S][S], acci[S][S];
    for (int i = 0; i < S; ++i) {
        dxv[i] = T((i - bp_tile_centre) * g.dx);
        dx2[i] = dxv[i] * dxv[i];
        dyv[i] = T((i - bp_tile_centre) * g.dy);
        dy2[i] = dyv[i] * dyv[i];
    }
    if constexpr (H) {
        for (int y = 0; y < S; ++y)
            for (int x = 0; x < S; ++x) {
                // Pixels past the grid edge: at the centre height (computed, never
                // stored).
                const bool in = y < nrows && x < ncols;
                dzv[y][x] = in ? T(l.dz[(ys + y) * g.nx + xs + x]) : T(0);
                dz2[y][x] = dzv[y][x] * dzv[y][x];
            }
    }
    for (int y = 0; y < S; ++y)
        for (int x = 0; x < S; ++x)
            accr[y][x] = acci[y][x] = 0.0f;

    const int nb = a.nbins;
    // Bin offsets are clamped to this before the int conversion (far beyond any window).
    constexpr T offset_limit = T(1 << 30);
    for (std::size_t ip = 0; ip < a.npulses; ++ip) {
        const bp_pulse& p = a.pulses[ip];
        const bp_tile_ref t = bp_reference(p, cx, cy, cz);
        // No pixel of the tile reaches a bin of this pulse: nothing to add.
        if (t.nref + p.half < 0 || t.nref - p.half > nb)
            continue;
        const int nref = static_cast<int>(t.nref);
        const T u2x = T(2 * t.ux), u2y = T(2 * t.uy), u2z = T(2 * t.uz);
        const bp_range_terms<T, N> terms = bp_make_range_terms<T, N>(t, 1.0);
        const T invdr = T(p.inv_dr), kt = T(p.kt), pht = T(t.pht);
        const float* pd =
            reinterpret_cast<const float*>(a.data) +
            2 * static_cast<std::size_t>(p.index) * static_cast<std::size_t>(nb);
        for (int y = 0; y < nrows; ++y) {
            const T by = fma(dyv[y], u2y, dy2[y]);
            float* __restrict__ ar = accr[y];
            float* __restrict__ ai = acci[y];
#pragma GCC ivdep
            for (int x = 0; x < S; ++x) {
                T q = fma(dxv[x], u2x, dx2[x] + by);
                if constexpr (H)
                    q = fma(dzv[y][x], u2z, q + dz2[y][x]);
                const T dr = bp_delta_range(q, terms);
                // bin - nref = 1/2 + dR'/dr; k = floor, w = fraction
                const T bl = std::min(std::max(fma(dr, invdr, T(0.5)), -offset_limit),
                                      offset_limit);
                const T fl = std::floor(bl);
                const int i0 = static_cast<int>(fl) + nref;
                const int j = std::min(std::max(i0, 0), nb - 2);
                // j < i0 only at the last bin: w = 1 there; elsewhere w leaves [0, 1].
                const float w = static_cast<float>(bl - fl) + static_cast<float>(i0 - j);
                const bool ok = (w >= 0.0f) & (w <= 1.0f);
                const float p0r = pd[2 * j], p0i = pd[2 * j + 1];
                const float p1r = pd[2 * j + 2], p1i = pd[2 * j + 3];
                const float vr = ok ? std::fma(w, p1r - p0r, p0r) : 0.0f;
                const float vi = ok ? std::fma(w, p1i - p0i, p0i) : 0.0f;
                const T ph = fma(dr, kt, pht);
                float sn, cs;
                sincos_turns(static_cast<float>(ph - std::rint(ph)), sn, cs);
                ar[x] += vr * cs - vi * sn;
                ai[x] += vr * sn + vi * cs;
            }
        }
    }
    for (int y = 0; y < nrows; ++y) {
        cfloat* out = a.image + ((iz * g.ny + ys + y) * g.nx + xs);
        for (int x = 0; x < ncols; ++x)
            out[x] += cfloat(accr[y][x], acci[y][x]);
    }
}

using tile_fn = void (*)(const tile_args&, long long, long long, long long);

template <typename T, int N, bool H>
void tile_baseline(const tile_args& a, long long tx, long long ty, long long iz)
{
    tile_body<T, N, H>(a, tx, ty, iz);
}

#if defined(__x86_64__) && defined(__GNUC__)
#define GPURADAR_BP_X86_CLONES 1
template <typename T, int N, bool H>
[[gnu::target("avx2,fma,bmi2")]] void
tile_avx2(const tile_args& a, long long tx, long long ty, long long iz)
{
    tile_body<T, N, H>(a, tx, ty, iz);
}
template <typename T, int N, bool H>
[[gnu::target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma,bmi2")]] void
tile_avx512(const tile_args& a, long long tx, long long ty, long long iz)
{
    tile_body<T, N, H>(a, tx, ty, iz);
}
#endif

enum class isa { baseline, avx2, avx512 };

isa best_isa()
{
#ifdef GPURADAR_BP_X86_CLONES
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq"))
        return isa::avx512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return isa::avx2;
#endif
    return isa::baseline;
}

template <typename T, int N, bool H>
tile_fn pick_isa(isa i)
{
#ifdef GPURADAR_BP_X86_CLONES
    if (i == isa::avx512)
        return &tile_avx512<T, N, H>;
    if (i == isa::avx2)
        return &tile_avx2<T, N, H>;
#endif
    (void)i;
    return &tile_baseline<T, N, H>;
}

template <typename T, bool H>
tile_fn pick_terms(int terms, isa i)
{
    switch (terms) {
    case 2:
        return pick_isa<T, 2, H>(i);
    case 4:
        return pick_isa<T, 4, H>(i);
    default:
        return pick_isa<T, 0, H>(i);
    }
}

/*!
 * Counts the non-finite samples of the pulses in `prep`; when there are any, copies the
 * pulses into `scratch` with those samples zeroed and returns the copy, else `pulses`.
 */
const cfloat* zero_nonfinite(const cfloat* pulses,
                             std::size_t npulses,
                             std::size_t nbins,
                             const bp_prepared& prep,
                             std::vector<cfloat>& scratch,
                             std::size_t& count)
{
    auto finite = [](cfloat v) {
        return std::isfinite(v.real()) && std::isfinite(v.imag());
    };
    std::size_t n = 0;
    for (const bp_pulse& p : prep.pulses) {
        const cfloat* q = pulses + std::size_t(p.index) * nbins;
        for (std::size_t k = 0; k < nbins; ++k)
            n += !finite(q[k]);
    }
    count += n;
    if (n == 0)
        return pulses;
    scratch.assign(pulses, pulses + npulses * nbins);
    for (cfloat& v : scratch)
        v = finite(v) ? v : cfloat(0, 0);
    return scratch.data();
}

class backprojection_cpu final : public bp_backend
{
public:
    backprojection_cpu(const image_grid& g, std::size_t nbins, precision p)
        : bp_backend(g, nbins, p), d_isa(best_isa())
    {
    }

    void run(const cfloat* pulses,
             const double* geometry,
             std::size_t npulses,
             cfloat* image) override
    {
        bp_prepared prep;
        if (!begin_run(pulses, geometry, npulses, image, prep))
            return;
        pulses = zero_nonfinite(pulses, npulses, d_nbins, prep, d_scratch, d_nonfinite);
        const bool h = d_layout.has_height;
        const tile_fn fn =
            d_precision == precision::fast
                ? (h ? pick_terms<float, true>(prep.series_terms, d_isa)
                     : pick_terms<float, false>(prep.series_terms, d_isa))
                : (h ? pick_terms<double, true>(prep.series_terms, d_isa)
                     : pick_terms<double, false>(prep.series_terms, d_isa));
        const tile_args args{ &d_grid,
                              &d_layout,
                              prep.pulses.data(),
                              prep.pulses.size(),
                              pulses,
                              static_cast<int>(d_nbins),
                              image };
        const long long nplane = d_layout.ntx * d_layout.nty;
        const long long ntiles = nplane * d_grid.nz;
        parallel_rows(
            std::size_t(ntiles), 1, ~0u, [&](std::size_t k0, std::size_t k1, unsigned) {
                for (auto k = static_cast<long long>(k0); k < static_cast<long long>(k1);
                     ++k)
                    fn(args, k % d_layout.ntx, (k % nplane) / d_layout.ntx, k / nplane);
            });
    }

    void run_host_pulses(const cfloat* host_pulses,
                         const double* geometry,
                         std::size_t npulses,
                         cfloat* image) override
    {
        run(host_pulses, geometry, npulses, image);
    }

private:
    const isa d_isa;
    std::vector<cfloat> d_scratch; // the pulses with non-finite samples zeroed
};

} // namespace

std::unique_ptr<backprojection> make_backprojection_cpu(const image_grid& g,
                                                        std::size_t nbins,
                                                        backprojection::precision p)
{
    return std::make_unique<backprojection_cpu>(g, nbins, p);
}

} // namespace gpuradar::kernels::detail
