/*
 * CFAR test helpers: exponential-noise maps, the fp64 direct reference (written here
 * from the definitions in cfar_common.h / cfar_2d.h, sharing no code with the stages
 * except cfar_alpha, which test_cfar_statistics checks against the literature), and the
 * mask comparison with its near-threshold exemption.
 */
#ifndef INCLUDED_GPURADAR_CFAR_TEST_SUPPORT_H
#define INCLUDED_GPURADAR_CFAR_TEST_SUPPORT_H

#include "test_support.h"
#include <gpuradar/kernels/detection/cfar_common.h>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

namespace gpuradar::test {

using kernels::cfar_variant;

//! splitmix64: a fast, well-mixed generator; statistical tests draw ~1e7 values.
class fast_rng
{
public:
    explicit fast_rng(std::uint64_t seed) : d_state(seed) {}
    std::uint64_t next()
    {
        std::uint64_t z = (d_state += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    //! Uniform in (0, 1]: 53 random bits, never 0 (so -log is finite).
    double uniform() { return (double(next() >> 11) + 1.0) * 0x1.0p-53; }
    //! Exp(mean): the square law of complex Gaussian noise of that power.
    double exponential(double mean = 1.0) { return -mean * std::log(uniform()); }

private:
    std::uint64_t d_state;
};

//! n exponential values of mean 1.
inline std::vector<float> exponential_map(std::size_t n, std::uint64_t seed)
{
    fast_rng rng(seed);
    std::vector<float> v(n);
    for (auto& x : v)
        x = static_cast<float>(rng.exponential());
    return v;
}

//! One map as the reference sees it: rows x cols, rows `row_stride` apart.
struct ref_window {
    int gr = 0, tr = 0, gc = 0, tc = 0;
    bool row_wrap = false, col_wrap = true;
    cfar_variant variant = cfar_variant::ca;
    int k = 0; // os rank of the full window
    double pfa = 1e-3;
    bool local_max = false;
    int lm_rows = 1;
};

struct ref_map_result {
    std::vector<double> threshold; // per cell, row-major rows x cols
    std::vector<std::uint8_t> mask;
};

/*!
 * Direct fp64 CFAR on one map: for every cell, walk its window, collect the training
 * cells present (non-finite ones as +Inf), split them lead/lag, get alpha for the
 * counts, and form T from the definition of the variant.
 */
inline ref_map_result reference_cfar(
    const float* map, std::size_t row_stride, int rows, int cols, const ref_window& w)
{
    const int wr = w.gr + w.tr, wc = w.gc + w.tc;
    const int n_full = (2 * wr + 1) * (2 * wc + 1) - (2 * w.gr + 1) * (2 * w.gc + 1);
    std::map<std::tuple<int, int, int>, double> alphas;
    auto at = [&](int r, int c) { return map[std::size_t(r) * row_stride + c]; };
    auto place = [](int i, int n, bool wrap) {
        if (i >= 0 && i < n)
            return i;
        return wrap ? (i % n + n) % n : -1;
    };
    ref_map_result out;
    out.threshold.resize(std::size_t(rows) * cols);
    out.mask.resize(std::size_t(rows) * cols);
    std::vector<double> lead, lag, all;
    for (int r = 0; r < rows; ++r) {
        for (int c = 0; c < cols; ++c) {
            lead.clear();
            lag.clear();
            for (int dr = -wr; dr <= wr; ++dr) {
                for (int dc = -wc; dc <= wc; ++dc) {
                    if (std::abs(dr) <= w.gr && std::abs(dc) <= w.gc)
                        continue;
                    const int rr = place(r + dr, rows, w.row_wrap);
                    const int cc = place(c + dc, cols, w.col_wrap);
                    if (rr < 0 || cc < 0)
                        continue;
                    const float v = at(rr, cc);
                    // cfar_common.h: a finite training cell counts at most the cap.
                    const double d =
                        std::isfinite(v)
                            ? std::min(double(v),
                                       double(kernels::cfar_max_training_power))
                            : INFINITY;
                    (dr < 0 || (dr == 0 && dc < 0) ? lead : lag).push_back(d);
                }
            }
            const int n = int(lead.size() + lag.size());
            int k = 0;
            if (w.variant == cfar_variant::os) {
                k = w.k;
                if (n < n_full)
                    k = std::clamp(int(std::lround(double(w.k) * n / n_full)), 1, n);
            }
            const bool halves =
                w.variant == cfar_variant::go || w.variant == cfar_variant::so;
            const auto key = halves
                                 ? std::make_tuple(int(lead.size()), int(lag.size()), 0)
                                 : std::make_tuple(n, 0, k);
            auto it = alphas.find(key);
            if (it == alphas.end()) {
                const kernels::cfar_counts counts{ int(lead.size()), int(lag.size()) };
                it = alphas.emplace(key, kernels::cfar_alpha(w.variant, counts, k, w.pfa))
                         .first;
            }
            const double alpha = it->second;
            auto mean = [](const std::vector<double>& v) {
                double s = 0;
                for (double x : v)
                    s += x;
                return s / double(v.size());
            };
            double z = 0;
            switch (w.variant) {
            case cfar_variant::ca:
                all = lead;
                all.insert(all.end(), lag.begin(), lag.end());
                z = mean(all);
                break;
            case cfar_variant::go:
            case cfar_variant::so:
                if (lead.empty())
                    z = mean(lag);
                else if (lag.empty())
                    z = mean(lead);
                else
                    z = w.variant == cfar_variant::go ? std::max(mean(lead), mean(lag))
                                                      : std::min(mean(lead), mean(lag));
                break;
            case cfar_variant::os:
                all = lead;
                all.insert(all.end(), lag.begin(), lag.end());
                std::sort(all.begin(), all.end());
                z = all[k - 1];
                break;
            }
            const double t = alpha * z;
            const float x = at(r, c);
            bool det = std::isfinite(x) && double(x) > t;
            if (det && w.local_max) {
                for (int dr = -w.lm_rows; dr <= w.lm_rows && det; ++dr) {
                    for (int dc = -1; dc <= 1 && det; ++dc) {
                        const int rr = place(r + dr, rows, w.row_wrap);
                        const int cc = place(c + dc, cols, w.col_wrap);
                        if (rr < 0 || cc < 0 || (rr == r && cc == c))
                            continue;
                        const float nb = at(rr, cc);
                        if (!std::isfinite(nb))
                            continue;
                        const bool earlier = rr < r || (rr == r && cc < c);
                        if (nb > x || (nb == x && earlier))
                            det = false;
                    }
                }
            }
            out.threshold[std::size_t(r) * cols + c] = t;
            out.mask[std::size_t(r) * cols + c] = det;
        }
    }
    return out;
}

//! |x - T| <= 1e-6 T: the band where float and fp64 may disagree on a mask bit.
inline bool near_threshold(double x, double t)
{
    constexpr double rel_band = 1e-6;
    return std::isfinite(t) && std::abs(x - t) <= rel_band * std::abs(t);
}

/*!
 * Two backends' masks may differ at x only where x lies between their thresholds t_a and
 * t_b (the rounding of their sums legitimately flips the test), widened by the band.
 */
inline bool may_differ(double x, double t_a, double t_b)
{
    const double lo = std::min(t_a, t_b), hi = std::max(t_a, t_b);
    return near_threshold(x, lo) || near_threshold(x, hi) || (x > lo && x <= hi);
}

//! Relative threshold difference, with two equal infinities counting as equal.
inline double threshold_rel_diff(double got, double want)
{
    if (std::isinf(got) || std::isinf(want))
        return got == want ? 0.0 : INFINITY;
    if (std::isnan(got) || std::isnan(want))
        return INFINITY;
    const double scale = std::max(std::abs(want), 1e-30);
    return std::abs(got - want) / scale;
}

} // namespace gpuradar::test

#endif
