/* CFAR plan: training-cell counts and alpha of every clip class (host, fp64). */
#include "common/param_check.h"
#include "detection/cfar_plan.h"
#include <algorithm>
#include <cstdlib>
#include <limits>
#include <map>
#include <tuple>

namespace gpuradar::kernels::detail {

void cfar_check_extent(const char* stage, const char* param, std::size_t value)
{
    if (value < 1 || value > std::size_t(std::numeric_limits<int>::max()))
        throw_invalid(stage, param, "in [1, 2^31 - 1]", value);
}

void cfar_check_count(const char* stage, const char* param, int value)
{
    if (value < 0)
        throw_invalid(stage, param, ">= 0", value);
}

void cfar_check_fits(const char* stage,
                     const char* guard_name,
                     int guard,
                     const char* train_name,
                     int train,
                     const char* n_name,
                     std::size_t n,
                     const char* edge_name,
                     cfar_edge edge)
{
    const long width = 2L * (long(guard) + train) + 1;
    if (std::size_t(width) <= n)
        return;
    const std::string why =
        edge == cfar_edge::clip
            ? std::string(" so that the window fits the map with ") + edge_name + "=clip"
            : std::string(" so that a wrapped window never meets itself with ") +
                  edge_name + "=wrap";
    const std::string param =
        "2 * (" + std::string(guard_name) + " + " + train_name + ") + 1";
    throw_invalid(stage,
                  param.c_str(),
                  "<= " + std::string(n_name) + " = " + std::to_string(n) + why,
                  width);
}

void cfar_check_window_cells(const char* stage, int wr, int wc)
{
    const long cells = (2L * wr + 1) * (2L * wc + 1);
    if (cells > cfar_max_window_cells)
        throw_invalid(stage,
                      "the window (2 (guard + train) + 1 per dimension)",
                      "at most " + std::to_string(cfar_max_window_cells) + " cells",
                      std::to_string(cells) + " cells");
}

void cfar_check_pfa(const char* stage, double pfa)
{
    if (!(pfa > 0.0 && pfa < 1.0))
        throw_invalid(stage, "pfa", "in (0, 1)", pfa);
}

void cfar_check_os_k(const char* stage, int k, int n)
{
    if (k < 1 || k > n)
        throw_invalid(stage,
                      "os_k",
                      "in [1, " + std::to_string(n) +
                          "], the number of training cells (round(3N/4) = " +
                          std::to_string(cfar_default_os_k(n)) + " is usual)",
                      k);
}

void cfar_check_sizes(const char* stage,
                      std::initializer_list<size_factor> map_factors,
                      std::size_t max_detections)
{
    cfar_check_extent(stage, "max_detections", max_detections);
    check_buffer_size(stage,
                      { { "max_detections", max_detections } },
                      sizeof(cfar_detection),
                      "the detection list");
    check_buffer_size(
        stage, map_factors, sizeof(float), "the power and threshold maps of one run()");
}

void cfar_check_run(const char* stage,
                    const float* power,
                    const std::uint8_t* mask,
                    const char* count_name,
                    std::size_t count,
                    const char* max_name,
                    std::size_t max)
{
    if (count > max)
        throw_invalid(stage,
                      count_name,
                      "<= " + std::string(max_name) + " = " + std::to_string(max),
                      count);
    if (count > 0 && !power)
        throw_invalid(stage, "power", "a non-null pointer", "null");
    if (count > 0 && !mask)
        throw_invalid(stage, "mask", "a non-null pointer", "null");
}

std::vector<std::pair<int, int>> cfar_plan::training_offsets() const
{
    std::vector<std::pair<int, int>> out;
    for (int dr = -wr(); dr <= wr(); ++dr)
        for (int dc = -wc(); dc <= wc(); ++dc)
            if (std::abs(dr) > guard_rows || std::abs(dc) > guard_cols)
                out.emplace_back(dr, dc);
    return out;
}

namespace {

// Cells of the rectangle [r0, r1] x [c0, c1] (window offsets), split by the lead/lag
// rule: lead = dr < 0, or dr == 0 and dc < 0. Empty when r0 > r1 or c0 > c1.
cfar_counts rect_counts(int r0, int r1, int c0, int c1)
{
    cfar_counts c;
    if (r0 > r1 || c0 > c1)
        return c;
    const int width = c1 - c0 + 1;
    const int total = (r1 - r0 + 1) * width;
    c.lead = std::max(0, std::min(r1, -1) - r0 + 1) * width;
    if (r0 <= 0 && 0 <= r1)
        c.lead += std::max(0, std::min(c1, -1) - c0 + 1);
    c.lag = total - c.lead;
    return c;
}

// Lead and lag training counts of a window of clip classes (row_class, col_class): rows
// below -wr + lost_below (and above wr - lost_above) are missing, likewise columns.
// Training cells = the present part of the window minus the present part of the guard.
cfar_counts window_counts(const cfar_plan& p, int row_class, int col_class)
{
    const int r0 = -p.wr() + std::max(0, row_class - p.wr());
    const int r1 = p.wr() - std::max(0, p.wr() - row_class);
    const int c0 = -p.wc() + std::max(0, col_class - p.wc());
    const int c1 = p.wc() - std::max(0, p.wc() - col_class);
    const cfar_counts outer = rect_counts(r0, r1, c0, c1);
    const cfar_counts guard = rect_counts(std::max(r0, -p.guard_rows),
                                          std::min(r1, p.guard_rows),
                                          std::max(c0, -p.guard_cols),
                                          std::min(c1, p.guard_cols));
    return { outer.lead - guard.lead, outer.lag - guard.lag };
}

} // namespace

cfar_plan make_cfar_plan(const cfar_plan_request& request)
{
    cfar_plan p;
    static_cast<cfar_plan_request&>(p) = request;
    const cfar_counts full = window_counts(p, p.wr(), p.wc());
    p.n_full = full.total();
    p.alpha_full = cfar_alpha(p.variant, full, p.os_k, p.pfa);
    // automatic: segmented (measured faster at every window size, cfar_plan.h).
    p.resolved =
        p.variant != cfar_variant::os && p.estimator == cfar_estimator::summed_area
            ? cfar_estimator::summed_area
            : cfar_estimator::segmented;

    // Clip classes only exist in clipped dimensions; a wrapped one has its interior
    // class.
    const int row_classes = 2 * p.wr() + 1;
    const int col_classes = 2 * p.wc() + 1;
    p.classes.resize(std::size_t(row_classes) * col_classes);
    std::map<std::tuple<int, int, int>, double> alpha_cache; // (lead, lag, k) -> alpha
    for (int rc = 0; rc < row_classes; ++rc) {
        for (int cc = 0; cc < col_classes; ++cc) {
            const cfar_counts n =
                window_counts(p, p.row_wrap() ? p.wr() : rc, p.col_wrap() ? p.wc() : cc);
            const int k = p.variant == cfar_variant::os
                              ? cfar_reduced_os_k(p.os_k, p.n_full, n.total())
                              : 0;
            // ca and os depend on the total only; go and so on both halves.
            const bool halves =
                p.variant == cfar_variant::go || p.variant == cfar_variant::so;
            const auto key =
                std::make_tuple(halves ? n.lead : n.total(), halves ? n.lag : 0, k);
            auto it = alpha_cache.find(key);
            if (it == alpha_cache.end())
                it = alpha_cache.emplace(key, cfar_alpha(p.variant, n, k, p.pfa)).first;
            const double alpha = it->second;
            cfar_class_entry e{};
            e.alpha = static_cast<float>(alpha);
            e.k = k;
            switch (p.variant) {
            case cfar_variant::ca:
                e.scale_lead = e.scale_lag = static_cast<float>(alpha / n.total());
                break;
            case cfar_variant::go:
            case cfar_variant::so:
                e.scale_lead = n.lead > 0 ? static_cast<float>(alpha / n.lead) : -1.f;
                e.scale_lag = n.lag > 0 ? static_cast<float>(alpha / n.lag) : -1.f;
                break;
            case cfar_variant::os:
                e.scale_lead = e.scale_lag = e.alpha;
                break;
            }
            p.classes[std::size_t(rc) * col_classes + cc] = e;
        }
    }
    return p;
}

std::unique_ptr<cfar_engine> make_cfar_engine(backend b,
                                              const cfar_plan& plan,
                                              std::size_t nrows,
                                              std::size_t ncols,
                                              stream_ref stream)
{
#ifdef GPURADAR_HAVE_CUDA
    if (b == backend::cuda)
        return make_cfar_engine_cuda(plan, stream);
#else
    (void)b;
    (void)stream;
#endif
    return make_cfar_engine_cpu(plan, nrows, ncols);
}

std::optional<detection_clustering> make_clustering(const cfar_plan& plan)
{
    if (!plan.clustering)
        return std::nullopt;
    return std::optional<detection_clustering>(std::in_place, *plan.clustering);
}

void cfar_sort_detections(std::vector<cfar_detection>& d)
{
    std::sort(d.begin(), d.end(), [](const cfar_detection& a, const cfar_detection& b) {
        return std::tie(a.map, a.range_bin, a.doppler_bin) <
               std::tie(b.map, b.range_bin, b.doppler_bin);
    });
}

} // namespace gpuradar::kernels::detail
