/* The CPU CFAR's row kernels (see cfar_cpu_rows.h). */
#include "detection/cpu/cfar_cpu_rows.h"
#include <algorithm>
#include <cstring>

// Run-time dispatch between the baseline x86-64 build and an AVX2 one (GCC's
// target_clones, resolved once at load time like VOLK's dispatcher): no -march flag in
// the build. Elsewhere the baseline build alone.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define GPURADAR_CFAR_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define GPURADAR_CFAR_CLONES
#endif

namespace gpuradar::kernels::detail::cfar_rows {
namespace {

/*!
 * Eight floats: GCC/Clang vector extension, one AVX register in the AVX2 clone, two SSE
 * registers in the baseline one. Accumulators of this type stay in registers across the
 * window's rows, which plain arrays indexed in a loop with a run-time trip count do not
 * (row sums several times slower that way).
 */
typedef float vf __attribute__((vector_size(32), aligned(alignof(float)), may_alias));
constexpr std::size_t lanes = sizeof(vf) / sizeof(float);
//! Cells per chunk: two vectors, so two independent add chains hide the add latency.
constexpr std::size_t chunk = 2 * lanes;

// Unaligned vector access (the type's alignment is a float's; may_alias: it reads and
// writes float arrays). Macros, not functions: a vector passed by value to a function
// built for the baseline ISA would change the calling convention between the clones.
#define GPURADAR_CFAR_LOAD(p) (*reinterpret_cast<const vf*>(p))
#define GPURADAR_CFAR_STORE(p, v) (*reinterpret_cast<vf*>(p) = (v))

//! Exponent bits of a float: all ones for NaN and +-Inf.
constexpr std::uint32_t exponent_mask = 0x7f800000u;

inline bool finite_bits(float v)
{
    std::uint32_t u;
    std::memcpy(&u, &v, sizeof u);
    return (u & exponent_mask) != exponent_mask;
}

template <cfar_variant V>
inline void thresholds_of(const float* lead,
                          const float* lag,
                          std::size_t c0,
                          std::size_t c1,
                          const cfar_class_entry& e,
                          float* t)
{
    // One class: the branches of cfar_sum_threshold on e are taken once, outside the
    // loop; the arithmetic per cell is cfar_sum_threshold's.
    if (V == cfar_variant::ca) {
        const float s = e.scale_lead;
        for (std::size_t c = c0; c < c1; ++c)
            t[c] = (lead[c] + lag[c]) * s;
    } else if (e.scale_lead < 0.f) {
        const float s = e.scale_lag;
        for (std::size_t c = c0; c < c1; ++c)
            t[c] = lag[c] * s;
    } else if (e.scale_lag < 0.f) {
        const float s = e.scale_lead;
        for (std::size_t c = c0; c < c1; ++c)
            t[c] = lead[c] * s;
    } else {
        const float sl = e.scale_lead, sg = e.scale_lag;
        for (std::size_t c = c0; c < c1; ++c) {
            const float zl = lead[c] * sl;
            const float zg = lag[c] * sg;
            if (V == cfar_variant::go)
                t[c] = zl > zg ? zl : zg;
            else
                t[c] = zl < zg ? zl : zg;
        }
    }
}

} // namespace

GPURADAR_CFAR_CLONES
void sanitize(const float* in, std::size_t n, float* out)
{
    for (std::size_t i = 0; i < n; ++i) {
        const float v = in[i];
        const float capped = v < cfar_max_training_power ? v : cfar_max_training_power;
        out[i] = finite_bits(v) ? capped : INFINITY;
    }
}

GPURADAR_CFAR_CLONES
void row_sums(const float* xp,
              std::size_t ncols,
              int gc,
              int tc,
              float* full,
              float* side,
              float* lo,
              float* hi)
{
    const int guard_end = tc + 2 * gc; // last column of the guard band
    const int window = 2 * (tc + gc);  // last column of the window
    std::size_t c0 = 0;
    for (; c0 + chunk <= ncols; c0 += chunk) {
        const float* x = xp + c0;
        vf l0 = {}, l1 = {}, g0 = {}, g1 = {}, h0 = {}, h1 = {};
        int u = 0;
        for (; u < tc; ++u) {
            l0 += GPURADAR_CFAR_LOAD(x + u);
            l1 += GPURADAR_CFAR_LOAD(x + u + lanes);
        }
        for (; u <= guard_end; ++u) {
            g0 += GPURADAR_CFAR_LOAD(x + u);
            g1 += GPURADAR_CFAR_LOAD(x + u + lanes);
        }
        for (; u <= window; ++u) {
            h0 += GPURADAR_CFAR_LOAD(x + u);
            h1 += GPURADAR_CFAR_LOAD(x + u + lanes);
        }
        GPURADAR_CFAR_STORE(full + c0, (l0 + g0) + h0);
        GPURADAR_CFAR_STORE(full + c0 + lanes, (l1 + g1) + h1);
        GPURADAR_CFAR_STORE(side + c0, l0 + h0);
        GPURADAR_CFAR_STORE(side + c0 + lanes, l1 + h1);
        GPURADAR_CFAR_STORE(lo + c0, l0);
        GPURADAR_CFAR_STORE(lo + c0 + lanes, l1);
        GPURADAR_CFAR_STORE(hi + c0, h0);
        GPURADAR_CFAR_STORE(hi + c0 + lanes, h1);
    }
    for (std::size_t c = c0; c < ncols; ++c) {
        const float* x = xp + c;
        const cfar_row_sums s = cfar_row_sums_of([x](int u) { return x[u]; }, gc, tc);
        full[c] = s.full;
        side[c] = s.side;
        lo[c] = s.lo;
        hi[c] = s.hi;
    }
}

GPURADAR_CFAR_CLONES
void column_sums(std::size_t ncols,
                 const float* const* a,
                 int nlead,
                 const float* const* b,
                 int nlag,
                 float* lead,
                 float* lag)
{
    std::size_t c0 = 0;
    for (; c0 + chunk <= ncols; c0 += chunk) {
        vf s0 = {}, s1 = {};
        for (int k = 0; k < nlead; ++k) {
            s0 += GPURADAR_CFAR_LOAD(a[k] + c0);
            s1 += GPURADAR_CFAR_LOAD(a[k] + c0 + lanes);
        }
        GPURADAR_CFAR_STORE(lead + c0, s0);
        GPURADAR_CFAR_STORE(lead + c0 + lanes, s1);
        s0 = GPURADAR_CFAR_LOAD(b[0] + c0);
        s1 = GPURADAR_CFAR_LOAD(b[0] + c0 + lanes);
        for (int k = 1; k < nlag; ++k) {
            s0 += GPURADAR_CFAR_LOAD(b[k] + c0);
            s1 += GPURADAR_CFAR_LOAD(b[k] + c0 + lanes);
        }
        GPURADAR_CFAR_STORE(lag + c0, s0);
        GPURADAR_CFAR_STORE(lag + c0 + lanes, s1);
    }
    for (std::size_t c = c0; c < ncols; ++c) {
        float s = 0.f;
        for (int k = 0; k < nlead; ++k)
            s += a[k][c];
        lead[c] = s;
        s = b[0][c];
        for (int k = 1; k < nlag; ++k)
            s += b[k][c];
        lag[c] = s;
    }
}

GPURADAR_CFAR_CLONES
void thresholds(cfar_variant v,
                const float* lead,
                const float* lag,
                std::size_t c0,
                std::size_t c1,
                const cfar_class_entry& e,
                float* t)
{
    switch (v) {
    case cfar_variant::ca:
        thresholds_of<cfar_variant::ca>(lead, lag, c0, c1, e, t);
        return;
    case cfar_variant::go:
        thresholds_of<cfar_variant::go>(lead, lag, c0, c1, e, t);
        return;
    case cfar_variant::so:
    case cfar_variant::os: // never asked: os selects, it does not sum
        thresholds_of<cfar_variant::so>(lead, lag, c0, c1, e, t);
        return;
    }
}

GPURADAR_CFAR_CLONES
test_counts test(const float* x, const float* t, std::size_t n, std::uint8_t* mask)
{
    std::size_t det = 0, nonfinite = 0;
    for (std::size_t c = 0; c < n; ++c) {
        const float v = x[c];
        const bool finite = finite_bits(v);
        const bool d = finite & (v > t[c]);
        mask[c] = d ? 1 : 0;
        det += d;
        nonfinite += !finite;
    }
    return { det, nonfinite };
}

std::vector<std::pair<std::uint16_t, std::uint16_t>> selection_network(int n, int k)
{
    std::vector<std::pair<std::uint16_t, std::uint16_t>> all;
    int size = 1;
    while (size < n)
        size *= 2;
    // Batcher's odd-even merge sort, iterative form (Knuth, TAOCP vol. 3, 5.3.4).
    for (int p = 1; p < size; p *= 2)
        for (int q = p; q >= 1; q /= 2)
            for (int j = q % p; j + q < size; j += 2 * q)
                for (int i = 0; i < std::min(q, size - j - q); ++i)
                    if ((i + j) / (2 * p) == (i + j + q) / (2 * p) && i + j + q < n)
                        all.emplace_back(std::uint16_t(i + j), std::uint16_t(i + j + q));
    // Backwards from the output position: keep a comparator when it writes a position
    // that a kept comparator (or the output) reads later.
    std::vector<char> needed(std::size_t(n), 0);
    needed[std::size_t(k - 1)] = 1;
    std::vector<std::pair<std::uint16_t, std::uint16_t>> kept;
    for (auto it = all.rbegin(); it != all.rend(); ++it)
        if (needed[it->first] || needed[it->second]) {
            needed[it->first] = needed[it->second] = 1;
            kept.push_back(*it);
        }
    std::reverse(kept.begin(), kept.end());
    return kept;
}

GPURADAR_CFAR_CLONES
std::size_t os_thresholds(const float* ctr,
                          const std::ptrdiff_t* offsets,
                          int n,
                          const std::pair<std::uint16_t, std::uint16_t>* net,
                          std::size_t ncomparators,
                          int k,
                          float scale,
                          std::size_t ncells,
                          float* work,
                          float* t)
{
    static_assert(os_lanes == lanes, "os_lanes is the vector width");
    std::size_t c = 0;
    for (; c + lanes <= ncells; c += lanes) {
        for (int i = 0; i < n; ++i)
            GPURADAR_CFAR_STORE(work + i * lanes,
                                GPURADAR_CFAR_LOAD(ctr + c + offsets[i]));
        for (std::size_t m = 0; m < ncomparators; ++m) {
            float* pa = work + net[m].first * lanes;
            float* pb = work + net[m].second * lanes;
            const vf a = GPURADAR_CFAR_LOAD(pa);
            const vf b = GPURADAR_CFAR_LOAD(pb);
            GPURADAR_CFAR_STORE(pa, b < a ? b : a);
            GPURADAR_CFAR_STORE(pb, b < a ? a : b);
        }
        GPURADAR_CFAR_STORE(t + c, GPURADAR_CFAR_LOAD(work + (k - 1) * lanes) * scale);
    }
    return c;
}

} // namespace gpuradar::kernels::detail::cfar_rows
