#include "common/param_check.h"
#include <gpuradar/kernels/detection/detection_clustering.h>
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <tuple>

namespace gpuradar::kernels {

namespace {
constexpr const char* stage = "detection_clustering";

using cell_key = std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>;

cell_key key_of(const cfar_detection& d) { return { d.map, d.range_bin, d.doppler_bin }; }

//! Union-find over the detection indices, with path halving.
struct disjoint_sets {
    std::vector<std::size_t> parent;
    explicit disjoint_sets(std::size_t n) : parent(n)
    {
        std::iota(parent.begin(), parent.end(), std::size_t{ 0 });
    }
    std::size_t find(std::size_t i)
    {
        while (parent[i] != i) {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        return i;
    }
    void join(std::size_t a, std::size_t b)
    {
        a = find(a);
        b = find(b);
        if (a != b)
            parent[std::max(a, b)] = std::min(a, b);
    }
};

//! Bin i + step in [0, n), or -1 beyond an edge that does not wrap.
long step_bin(std::uint32_t i, int step, std::size_t n, bool wrap)
{
    const long j = long(i) + step;
    if (j >= 0 && j < long(n))
        return j;
    if (!wrap || n < 3) // with fewer than 3 bins wrapping would meet the cell itself
        return -1;
    return (j + long(n)) % long(n);
}

bool valid_power(float v) { return std::isfinite(v) && v > 0.f; }
} // namespace

double gaussian_peak_offset(float prev, float peak, float next)
{
    if (!valid_power(prev) || !valid_power(peak) || !valid_power(next))
        return 0.0;
    const double lp = std::log(double(prev));
    const double l0 = std::log(double(peak));
    const double ln = std::log(double(next));
    const double curvature = lp - 2.0 * l0 + ln;
    if (!(curvature < 0.0))
        return 0.0;
    const double offset = 0.5 * (lp - ln) / curvature;
    return std::clamp(offset, -0.5, 0.5);
}

detection_clustering::detection_clustering(const params& p) : d_params(p)
{
    if (p.nrange < 1)
        detail::throw_invalid(stage, "nrange", ">= 1", p.nrange);
    if (p.ndoppler < 1)
        detail::throw_invalid(stage, "ndoppler", ">= 1", p.ndoppler);
}

std::vector<clustered_detection>
detection_clustering::cluster(const std::vector<cfar_detection>& detections) const
{
    const params& p = d_params;
    const auto by_cell = [](const cfar_detection& a, const cfar_detection& b) {
        return key_of(a) < key_of(b);
    };
    // The CFAR's list is sorted; another caller's list is sorted into a copy.
    std::vector<cfar_detection> sorted;
    if (!std::is_sorted(detections.begin(), detections.end(), by_cell)) {
        sorted = detections;
        std::sort(sorted.begin(), sorted.end(), by_cell);
    }
    const std::vector<cfar_detection>& dets = sorted.empty() ? detections : sorted;
    const std::size_t n = dets.size();
    const auto index_of = [&](const cell_key& k) -> long {
        const auto it = std::lower_bound(
            dets.begin(), dets.end(), k, [](const cfar_detection& a, const cell_key& kk) {
                return key_of(a) < kk;
            });
        return (it != dets.end() && key_of(*it) == k) ? long(it - dets.begin()) : -1;
    };

    // Of two touching cells, one is the other's (0, +1), (+1, -1), (+1, 0) or (+1, +1)
    // neighbour (across wrapped edges too): looking forward finds every pair once.
    // Without a wrap, (r, c + 1) is the next detection when it is there, and the three
    // cells of row r + 1 lie together at or after `below`, the first detection not
    // before (r + 1, max(c - 1, 0)), which only moves forward as (r, c) does: one sweep
    // instead of a binary search per neighbour. Wrapped neighbours (edge cells only)
    // are searched.
    constexpr int forward[4][2] = { { 0, 1 }, { 1, -1 }, { 1, 0 }, { 1, 1 } };
    disjoint_sets sets(n);
    std::size_t below = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const cfar_detection& d = dets[i];
        const long next_row = long(d.range_bin) + 1;
        if (next_row < long(p.nrange)) {
            const cell_key first{ d.map,
                                  std::uint32_t(next_row),
                                  d.doppler_bin > 0 ? d.doppler_bin - 1 : 0 };
            while (below < n && key_of(dets[below]) < first)
                ++below;
        }
        for (const auto& step : forward) {
            const long r = step_bin(d.range_bin, step[0], p.nrange, p.range_wrap);
            const long c = step_bin(d.doppler_bin, step[1], p.ndoppler, p.doppler_wrap);
            if (r < 0 || c < 0)
                continue;
            const cell_key k{ d.map, std::uint32_t(r), std::uint32_t(c) };
            const bool wrapped =
                r != long(d.range_bin) + step[0] || c != long(d.doppler_bin) + step[1];
            long j = -1;
            if (wrapped) {
                j = index_of(k);
            } else if (step[0] == 0) {
                j = i + 1 < n && key_of(dets[i + 1]) == k ? long(i + 1) : -1;
            } else {
                for (std::size_t q = below; q < n && q < below + 3; ++q)
                    if (key_of(dets[q]) == k)
                        j = long(q);
            }
            if (j >= 0)
                sets.join(i, std::size_t(j));
        }
    }

    // Each root gathers its cluster's strongest cell (earliest on ties: indices ascend).
    std::vector<long> strongest(n, -1);
    std::vector<std::uint32_t> cells(n, 0);
    for (std::size_t i = 0; i < n; ++i) {
        const std::size_t root = sets.find(i);
        ++cells[root];
        if (strongest[root] < 0 ||
            dets[i].power > dets[std::size_t(strongest[root])].power)
            strongest[root] = long(i);
    }
    std::vector<cfar_detection> peaks;
    std::vector<std::uint32_t> peak_cells;
    for (std::size_t root = 0; root < n; ++root)
        if (cells[root] > 0) {
            peaks.push_back(dets[std::size_t(strongest[root])]);
            peak_cells.push_back(cells[root]);
        }
    return from_peaks(peaks, peak_cells);
}

std::vector<clustered_detection>
detection_clustering::from_peaks(const std::vector<cfar_detection>& peaks,
                                 const std::vector<std::uint32_t>& cells) const
{
    if (cells.size() != peaks.size())
        detail::throw_invalid(stage,
                              "cells",
                              "one count per peak (" + std::to_string(peaks.size()) + ")",
                              cells.size());
    const params& p = d_params;
    std::vector<clustered_detection> out;
    out.reserve(peaks.size());
    for (std::size_t i = 0; i < peaks.size(); ++i) {
        clustered_detection c;
        c.peak = peaks[i];
        c.cells = cells[i];
        c.range_bin =
            c.peak.range_bin +
            gaussian_peak_offset(c.peak.range_prev, c.peak.power, c.peak.range_next);
        c.doppler_bin =
            c.peak.doppler_bin +
            gaussian_peak_offset(c.peak.doppler_prev, c.peak.power, c.peak.doppler_next);
        if (p.doppler_wrap)
            c.doppler_bin =
                std::fmod(c.doppler_bin + double(p.ndoppler), double(p.ndoppler));
        if (p.range_wrap)
            c.range_bin = std::fmod(c.range_bin + double(p.nrange), double(p.nrange));
        out.push_back(c);
    }
    std::sort(out.begin(),
              out.end(),
              [](const clustered_detection& a, const clustered_detection& b) {
                  return key_of(a.peak) < key_of(b.peak);
              });
    return out;
}

void detection_clustering::cluster_report(cfar_report& report) const
{
    report.clusters = cluster(report.detections);
    report.clustered_cells += report.detections.size();
    report.detections.clear();
}

std::vector<std::size_t>
strongest_across_beams(const std::vector<cfar_detection>& detections,
                       std::size_t beams,
                       std::size_t ndoppler,
                       bool doppler_wrap)
{
    if (beams == 0)
        detail::throw_invalid("strongest_across_beams", "beams", ">= 1", beams);
    if (ndoppler == 0)
        detail::throw_invalid("strongest_across_beams", "ndoppler", ">= 1", ndoppler);
    // The detections by cell (CPI, range bin, Doppler bin).
    using cell = std::tuple<std::uint64_t, long, long>;
    std::multimap<cell, std::size_t> by_cell;
    for (std::size_t i = 0; i < detections.size(); ++i) {
        const auto& d = detections[i];
        by_cell.emplace(cell{ d.map / beams, long(d.range_bin), long(d.doppler_bin) }, i);
    }
    const auto outshone = [&](const cfar_detection& d) {
        for (long dr = -1; dr <= 1; ++dr)
            for (long dd = -1; dd <= 1; ++dd) {
                const long r = long(d.range_bin) + dr;
                long m = long(d.doppler_bin) + dd;
                if (doppler_wrap)
                    m = (m + long(ndoppler)) % long(ndoppler);
                const auto [lo, hi] = by_cell.equal_range(cell{ d.map / beams, r, m });
                for (auto it = lo; it != hi; ++it) {
                    const auto& o = detections[it->second];
                    if (o.map != d.map &&
                        (o.power > d.power || (o.power == d.power && o.map < d.map)))
                        return true;
                }
            }
        return false;
    };
    std::vector<std::size_t> kept;
    for (std::size_t i = 0; i < detections.size(); ++i)
        if (!outshone(detections[i]))
            kept.push_back(i);
    return kept;
}

} // namespace gpuradar::kernels
