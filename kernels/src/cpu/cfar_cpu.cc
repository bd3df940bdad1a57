/*
 * CPU twin of the CFAR stages. Per map: copy it into a padded plane (wrapped edges
 * copied round, clipped ones absent), then
 *  - ca, go, so: separable sums, the row sums of every padded row first, then per cell
 *    the column of row sums (cfar_math.h, the same arithmetic as the CUDA kernels);
 *  - os: per cell, gather the present training cells and select the k-th smallest.
 */
#include "../cfar_plan.h"
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace gpuradar::kernels::detail {
namespace {

class cfar_cpu final : public cfar_engine
{
public:
    cfar_cpu(const cfar_plan& plan, std::size_t nrows, std::size_t ncols)
        : d_plan(plan),
          d_nrows(nrows),
          d_ncols(ncols),
          d_prows(nrows + 2 * plan.wr()),
          d_pcols(ncols + 2 * plan.wc()),
          d_padded(d_prows * d_pcols)
    {
        if (plan.variant == cfar_variant::os) {
            for (const auto& [dr, dc] : plan.training_offsets())
                d_offsets.push_back(static_cast<std::ptrdiff_t>(dr) * d_pcols + dc);
            d_gather.resize(d_offsets.size());
        } else {
            d_sums.resize(d_prows * ncols);
        }
    }

    void
    run(const cfar_geometry& g, const float* in, std::uint8_t* mask, float* thr) override
    {
        if (g.nrows != d_nrows || g.ncols != d_ncols)
            throw std::logic_error(
                "gpuradar::cfar: CPU engine made for another map shape");
        d_report = cfar_report{};
        d_report.nonfinite.assign(g.nmaps, 0);
        for (std::size_t b = 0; b < g.nmaps; ++b) {
            const std::size_t off = g.map_offset(b);
            run_map(g, b, in + off, mask + off, thr ? thr + off : nullptr);
        }
    }

    cfar_report collect() override { return d_report; }
    //! The CPU always forms separable sums.
    cfar_estimator estimator() const override { return cfar_estimator::segmented; }

private:
    // Absent cells (beyond a clipped edge): zero in a sum; NaN, skipped, in an os gather
    // (inputs are sanitised, so no present cell is NaN).
    float absent() const
    {
        return d_plan.variant == cfar_variant::os
                   ? std::numeric_limits<float>::quiet_NaN()
                   : 0.f;
    }

    static long resolve(long i, long n, bool wrap)
    {
        if (i >= 0 && i < n)
            return i;
        if (!wrap)
            return -1;
        return ((i % n) + n) % n;
    }

    void pad(const cfar_geometry& g, const float* in)
    {
        const long wr = d_plan.wr(), wc = d_plan.wc();
        for (std::size_t pr = 0; pr < d_prows; ++pr) {
            const long r = resolve(long(pr) - wr, long(d_nrows), d_plan.row_wrap());
            float* out = d_padded.data() + pr * d_pcols;
            for (std::size_t pc = 0; pc < d_pcols; ++pc) {
                const long c = resolve(long(pc) - wc, long(d_ncols), d_plan.col_wrap());
                out[pc] =
                    (r < 0 || c < 0) ? absent() : cfar_sanitize(in[r * g.row_stride + c]);
            }
        }
    }

    void row_sums()
    {
        for (std::size_t pr = 0; pr < d_prows; ++pr) {
            const float* row = d_padded.data() + pr * d_pcols;
            cfar_row_sums* out = d_sums.data() + pr * d_ncols;
            for (std::size_t c = 0; c < d_ncols; ++c) {
                const float* x = row + c;
                out[c] = cfar_row_sums_of(
                    [x](int u) { return x[u]; }, d_plan.guard_cols, d_plan.train_cols);
            }
        }
    }

    template <cfar_variant V>
    float sum_threshold(std::size_t r, std::size_t c, const cfar_class_entry& e) const
    {
        // Row sums of padded row r + wr + dr, i.e. map row r + dr.
        const cfar_row_sums* s = d_sums.data() + (r + d_plan.wr()) * d_ncols + c;
        const std::ptrdiff_t step = static_cast<std::ptrdiff_t>(d_ncols);
        float lead, lag;
        cfar_halves([&](int dr) { return s[dr * step].full; },
                    [&](int dr) { return s[dr * step].side; },
                    s->lo,
                    s->hi,
                    d_plan.guard_rows,
                    d_plan.train_rows,
                    lead,
                    lag);
        return cfar_sum_threshold<V>(lead, lag, e);
    }

    float os_threshold(std::size_t r, std::size_t c, const cfar_class_entry& e)
    {
        const float* ctr =
            d_padded.data() + (r + d_plan.wr()) * d_pcols + c + d_plan.wc();
        std::size_t n = 0;
        for (const std::ptrdiff_t o : d_offsets) {
            const float v = ctr[o];
            if (!std::isnan(v))
                d_gather[n++] = v;
        }
        const auto kth = d_gather.begin() + (e.k - 1);
        std::nth_element(d_gather.begin(), kth, d_gather.begin() + n);
        return e.scale_lead * *kth;
    }

    float threshold(std::size_t r, std::size_t c, const cfar_class_entry& e)
    {
        switch (d_plan.variant) {
        case cfar_variant::ca:
            return sum_threshold<cfar_variant::ca>(r, c, e);
        case cfar_variant::go:
            return sum_threshold<cfar_variant::go>(r, c, e);
        case cfar_variant::so:
            return sum_threshold<cfar_variant::so>(r, c, e);
        case cfar_variant::os:
            return os_threshold(r, c, e);
        }
        return INFINITY;
    }

    void run_map(const cfar_geometry& g,
                 std::size_t b,
                 const float* in,
                 std::uint8_t* mask,
                 float* thr)
    {
        pad(g, in);
        if (d_plan.variant != cfar_variant::os)
            row_sums();
        const int rows = static_cast<int>(d_nrows), cols = static_cast<int>(d_ncols);
        const auto fetch = [&](int rr, int cc) { return in[rr * g.row_stride + cc]; };
        std::uint64_t& nonfinite = d_report.nonfinite[b];
        for (int r = 0; r < rows; ++r) {
            const int row_class =
                cfar_clip_class(r, rows, d_plan.wr(), d_plan.row_wrap());
            for (int c = 0; c < cols; ++c) {
                const std::size_t o = r * g.row_stride + c;
                const float x = in[o];
                const cfar_class_entry& e = d_plan.entry(
                    row_class, cfar_clip_class(c, cols, d_plan.wc(), d_plan.col_wrap()));
                const float t = threshold(r, c, e);
                const bool finite = cfar_finite(x);
                nonfinite += !finite;
                bool det = finite && x > t;
                if (det && d_plan.local_max)
                    det = cfar_is_local_max(x,
                                            r,
                                            c,
                                            rows,
                                            cols,
                                            d_plan.row_wrap(),
                                            d_plan.col_wrap(),
                                            d_plan.local_max_rows,
                                            fetch);
                mask[o] = det ? 1 : 0;
                if (thr)
                    thr[o] = t;
                if (det) {
                    if (d_report.detections.size() < d_plan.max_detections)
                        d_report.detections.push_back({ static_cast<std::uint32_t>(b),
                                                        static_cast<std::uint32_t>(r),
                                                        static_cast<std::uint32_t>(c),
                                                        x,
                                                        t,
                                                        t / e.alpha });
                    ++d_report.found;
                }
            }
        }
    }

    const cfar_plan d_plan;
    const std::size_t d_nrows, d_ncols, d_prows, d_pcols;
    std::vector<float> d_padded;
    std::vector<cfar_row_sums> d_sums;
    std::vector<std::ptrdiff_t> d_offsets;
    std::vector<float> d_gather;
    cfar_report d_report;
};

} // namespace

std::unique_ptr<cfar_engine>
make_cfar_engine_cpu(const cfar_plan& plan, std::size_t nrows, std::size_t ncols)
{
    return std::make_unique<cfar_cpu>(plan, nrows, ncols);
}

} // namespace gpuradar::kernels::detail
