/*
 * CPU twin of the CFAR stages (one thread).
 *
 *  - ca, go, so: separable sums streamed row by row. Each map row (range bin) is copied
 *    once into a padded row (sanitised; wrapped columns copied round, clipped ones zero),
 *    its row sums (full, side, lo, hi of cfar_row_sums) go into a ring of the 2 Wr + 1
 *    rows a window spans (a few hundred KiB at PD sizes: it stays in L2), and once the
 *    ring holds the window of row r, the lead/lag column sums, the thresholds and the
 *    test of row r are formed a whole row at a time (cfar_cpu_rows.h: vectorised, AVX2
 *    picked at run time). Rows beyond a clipped range edge are a shared zero row. Every
 *    cell adds the same floats in the same order as cfar_math.h, so the thresholds are
 *    bit for bit the previous per-cell code's and the CUDA segmented estimator's. Cost
 *    per cell: 2 Wd + 1 + 2 Wr + 1 adds, in vector lanes; no per-call allocation.
 *  - os: per cell, the k-th smallest training cell of a padded plane (absent cells
 *    +Inf): a pruned comparator network over 8 adjacent cells at a time for windows of
 *    up to 1024 training cells, nth_element per cell beyond that, at clipped Doppler
 *    edges and at row tails. Exact selection either way (the same threshold); still
 *    far slower than the sums at the PD window (`gpuradar_bench cfar`).
 */
#include "../cfar_plan.h"
#include "cfar_cpu_rows.h"
#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

namespace gpuradar::kernels::detail {
namespace {

long resolve(long i, long n, bool wrap)
{
    if (i >= 0 && i < n)
        return i;
    if (!wrap)
        return -1;
    return ((i % n) + n) % n;
}

//! What both engines share: shape check, the report, the detection list.
class cfar_cpu_base : public cfar_engine
{
public:
    cfar_cpu_base(const cfar_plan& plan, std::size_t nrows, std::size_t ncols)
        : d_plan(plan), d_nrows(nrows), d_ncols(ncols)
    {
        d_report.nonfinite.reserve(plan.max_maps);
    }

    void
    run(const cfar_geometry& g, const float* in, std::uint8_t* mask, float* thr) override
    {
        if (g.nrows != d_nrows || g.ncols != d_ncols)
            throw std::logic_error(
                "gpuradar::cfar: CPU engine made for another map shape");
        // Reused, not reallocated: capacity stays from call to call.
        d_report.detections.clear();
        d_report.nonfinite.assign(g.nmaps, 0);
        d_report.found = 0;
        for (std::size_t b = 0; b < g.nmaps; ++b) {
            const std::size_t off = g.map_offset(b);
            run_map(g, b, in + off, mask + off, thr ? thr + off : nullptr);
        }
    }

    cfar_report collect() override { return d_report; }

    void gather(const float* in,
                const std::vector<std::size_t>& starts,
                std::size_t count,
                std::size_t stride,
                float* out) override
    {
        for (const std::size_t start : starts)
            for (std::size_t k = 0; k < count; ++k)
                *out++ = in[start + k * stride];
    }
    //! The CPU always forms separable sums.
    cfar_estimator estimator() const override { return cfar_estimator::segmented; }

protected:
    virtual void run_map(const cfar_geometry& g,
                         std::size_t b,
                         const float* in,
                         std::uint8_t* mask,
                         float* thr) = 0;

    /*!
     * A cell found above its threshold: the local-maximum test (may clear the mask
     * cell), then the detection list. Called in memory order, so the list is sorted.
     */
    void detected(const cfar_geometry& g,
                  std::size_t b,
                  const float* in,
                  int r,
                  int c,
                  float x,
                  float t,
                  const cfar_class_entry& e,
                  std::uint8_t& mask_cell)
    {
        const auto fetch = [&](int rr, int cc) { return in[rr * g.row_stride + cc]; };
        if (d_plan.local_max) {
            if (!cfar_is_local_max(x,
                                   r,
                                   c,
                                   int(d_nrows),
                                   int(d_ncols),
                                   d_plan.row_wrap(),
                                   d_plan.col_wrap(),
                                   d_plan.local_max_rows,
                                   fetch)) {
                mask_cell = 0;
                return;
            }
        }
        if (d_report.detections.size() < d_plan.max_detections) {
            cfar_detection d{ static_cast<std::uint32_t>(b),
                              static_cast<std::uint32_t>(r),
                              static_cast<std::uint32_t>(c),
                              x,
                              t,
                              t / e.alpha };
            float nb[4];
            cfar_neighbour_powers(r,
                                  c,
                                  int(d_nrows),
                                  int(d_ncols),
                                  d_plan.row_wrap(),
                                  d_plan.col_wrap(),
                                  d_plan.local_max_rows,
                                  fetch,
                                  nb);
            set_neighbours(d, nb);
            d_report.detections.push_back(d);
        }
        ++d_report.found;
    }

    /*!
     * Row r's test against its thresholds t, the non-finite count, and the detections
     * of the row in memory order; entry_of(c) is column c's class entry.
     */
    template <typename EntryOf>
    void finish_row(const cfar_geometry& g,
                    std::size_t b,
                    const float* in,
                    std::uint8_t* mask,
                    int r,
                    const float* t,
                    const EntryOf& entry_of)
    {
        const std::size_t row_off = std::size_t(r) * g.row_stride;
        const float* x = in + row_off;
        std::uint8_t* mrow = mask + row_off;
        const cfar_rows::test_counts n = cfar_rows::test(x, t, d_ncols, mrow);
        d_report.nonfinite[b] += n.nonfinite;
        if (n.detections == 0)
            return;
        for (std::size_t c = 0; c < d_ncols; ++c)
            if (mrow[c])
                detected(g, b, in, r, int(c), x[c], t[c], entry_of(int(c)), mrow[c]);
    }

    const cfar_plan d_plan;
    const std::size_t d_nrows, d_ncols;
    cfar_report d_report;
};

//! ca, go, so: streamed separable sums (see the file comment).
class cfar_cpu_sums final : public cfar_cpu_base
{
public:
    cfar_cpu_sums(const cfar_plan& plan, std::size_t nrows, std::size_t ncols)
        : cfar_cpu_base(plan, nrows, ncols),
          d_ring_rows(2 * plan.wr() + 1),
          d_ring(std::size_t(d_ring_rows) * row_arrays * ncols),
          d_slots(d_ring_rows),
          d_zero(ncols, 0.f),
          d_padded(ncols + 2 * plan.wc()),
          d_lead(ncols),
          d_lag(ncols),
          d_thr(ncols),
          d_lead_src(plan.wr() + 1),
          d_lag_src(plan.wr() + 1)
    {
    }

private:
    //! full, side, lo, hi of one row (cfar_row_sums), each ncols floats.
    static constexpr std::size_t row_arrays = 4;
    struct slot {
        const float* full;
        const float* side;
        const float* lo;
        const float* hi;
    };

    // Padded row pr (map row pr - wr) into its ring slot.
    void load_row(const cfar_geometry& g, const float* in, long pr)
    {
        const long r = resolve(pr - d_plan.wr(), long(d_nrows), d_plan.row_wrap());
        slot& s = d_slots[std::size_t(pr % d_ring_rows)];
        if (r < 0) { // beyond a clipped edge: no cells, all sums zero
            s = { d_zero.data(), d_zero.data(), d_zero.data(), d_zero.data() };
            return;
        }
        const std::size_t wc = std::size_t(d_plan.wc());
        const float* row = in + std::size_t(r) * g.row_stride;
        float* xp = d_padded.data();
        cfar_rows::sanitize(row, d_ncols, xp + wc);
        if (d_plan.col_wrap()) { // 2 wc + 1 <= ncols (checked): one turn suffices
            std::copy(xp + d_ncols, xp + d_ncols + wc, xp);
            std::copy(xp + wc, xp + 2 * wc, xp + wc + d_ncols);
        } else {
            std::fill(xp, xp + wc, 0.f);
            std::fill(xp + wc + d_ncols, xp + 2 * wc + d_ncols, 0.f);
        }
        float* base =
            d_ring.data() + std::size_t(pr % d_ring_rows) * row_arrays * d_ncols;
        float* full = base;
        float* side = base + d_ncols;
        float* lo = base + 2 * d_ncols;
        float* hi = base + 3 * d_ncols;
        cfar_rows::row_sums(
            xp, d_ncols, d_plan.guard_cols, d_plan.train_cols, full, side, lo, hi);
        s = { full, side, lo, hi };
    }

    // Row r of the map, its window's rows in the ring.
    void emit_row(const cfar_geometry& g,
                  std::size_t b,
                  const float* in,
                  std::uint8_t* mask,
                  float* thr,
                  int r)
    {
        const int wr = d_plan.wr(), gr = d_plan.guard_rows;
        const auto at = [&](int dr) -> const slot& {
            return d_slots[std::size_t((r + wr + dr) % d_ring_rows)];
        };
        // cfar_halves' order: lead = 0 + full(-wr..-gr-1) + side(-gr..-1) + lo(0);
        // lag = hi(0) + side(1..gr) + full(gr+1..wr).
        int na = 0, nb = 0;
        for (int dr = -wr; dr < -gr; ++dr)
            d_lead_src[na++] = at(dr).full;
        for (int dr = -gr; dr < 0; ++dr)
            d_lead_src[na++] = at(dr).side;
        d_lead_src[na++] = at(0).lo;
        d_lag_src[nb++] = at(0).hi;
        for (int dr = 1; dr <= gr; ++dr)
            d_lag_src[nb++] = at(dr).side;
        for (int dr = gr + 1; dr <= wr; ++dr)
            d_lag_src[nb++] = at(dr).full;
        cfar_rows::column_sums(d_ncols,
                               d_lead_src.data(),
                               na,
                               d_lag_src.data(),
                               nb,
                               d_lead.data(),
                               d_lag.data());

        const int rows = int(d_nrows), cols = int(d_ncols), wc = d_plan.wc();
        const int row_class = cfar_clip_class(r, rows, wr, d_plan.row_wrap());
        const auto entry_of = [&](int c) -> const cfar_class_entry& {
            return d_plan.entry(row_class,
                                cfar_clip_class(c, cols, wc, d_plan.col_wrap()));
        };
        const std::size_t row_off = std::size_t(r) * g.row_stride;
        float* t = thr ? thr + row_off : d_thr.data();
        // Interior columns share one class; with clipped Doppler the wc columns at
        // either end have their own (2 wc + 1 <= ncols, checked).
        const std::size_t c0 = d_plan.col_wrap() ? 0 : std::size_t(wc);
        const std::size_t c1 = d_ncols - c0;
        cfar_rows::thresholds(
            d_plan.variant, d_lead.data(), d_lag.data(), c0, c1, entry_of(wc), t);
        for (std::size_t c = 0; c < c0; ++c) {
            cfar_rows::thresholds(d_plan.variant,
                                  d_lead.data(),
                                  d_lag.data(),
                                  c,
                                  c + 1,
                                  entry_of(int(c)),
                                  t);
            const std::size_t m = d_ncols - 1 - c;
            cfar_rows::thresholds(d_plan.variant,
                                  d_lead.data(),
                                  d_lag.data(),
                                  m,
                                  m + 1,
                                  entry_of(int(m)),
                                  t);
        }

        finish_row(g, b, in, mask, r, t, entry_of);
    }

    void run_map(const cfar_geometry& g,
                 std::size_t b,
                 const float* in,
                 std::uint8_t* mask,
                 float* thr) override
    {
        const long wr = d_plan.wr();
        const long prows = long(d_nrows) + 2 * wr;
        for (long pr = 0; pr < prows; ++pr) {
            load_row(g, in, pr);
            if (pr >= 2 * wr)
                emit_row(g, b, in, mask, thr, int(pr - 2 * wr));
        }
    }

    const long d_ring_rows;
    std::vector<float> d_ring;
    std::vector<slot> d_slots;
    std::vector<float> d_zero;
    std::vector<float> d_padded;
    std::vector<float> d_lead, d_lag, d_thr;
    std::vector<const float*> d_lead_src, d_lag_src;
};

/*!
 * os: per cell, the k-th smallest of the training cells of a padded plane. Windows of at
 * most os_network_max_cells training cells: a pruned selection network (cfar_cpu_rows.h)
 * over a vector of adjacent cells at a time; larger ones, the edge columns of a clipped
 * Doppler dimension and the row's tail: nth_element per cell. Both select exactly, so
 * the threshold is the same float either way.
 */
class cfar_cpu_os final : public cfar_cpu_base
{
public:
    cfar_cpu_os(const cfar_plan& plan, std::size_t nrows, std::size_t ncols)
        : cfar_cpu_base(plan, nrows, ncols),
          d_prows(nrows + 2 * plan.wr()),
          d_pcols(ncols + 2 * plan.wc()),
          d_padded(d_prows * d_pcols),
          d_thr(ncols)
    {
        for (const auto& [dr, dc] : plan.training_offsets())
            d_offsets.push_back(static_cast<std::ptrdiff_t>(dr) * d_pcols + dc);
        d_gather.resize(d_offsets.size());
        const int n = int(d_offsets.size());
        if (n <= os_network_max_cells) {
            d_work.resize(d_offsets.size() * cfar_rows::os_lanes);
            // Only the interior columns' classes use the network (one per row class).
            for (int rc = 0; rc <= 2 * plan.wr(); ++rc) {
                const int k = plan.entry(rc, plan.wc()).k;
                if (d_networks.find(k) == d_networks.end())
                    d_networks.emplace(k, cfar_rows::selection_network(n, k));
            }
        }
    }

private:
    /*!
     * Largest window (training cells) for the selection network. The network costs
     * ~n log^2 n / 4 comparators per vector of 8 cells against nth_element's O(n) per
     * cell, and stays several times faster than nth_element well past 2000 cells
     * (AVX2 clone, 512 x 1024 map, thread CPU time). The bound is memory, not speed: one
     * network per row clip class of the interior columns (up to 2 Wr + 1 of them), each
     * ~n log^2 n / 4 pairs of 4 bytes: at 1024 cells ~100 KiB per class.
     */
    static constexpr int os_network_max_cells = 1024;

    // Beyond a clipped edge: +Inf, ranked above every present cell; the class's k never
    // exceeds its present count, so the k-th smallest is a present cell's value.
    void pad(const cfar_geometry& g, const float* in)
    {
        const long wr = d_plan.wr(), wc = d_plan.wc();
        for (std::size_t pr = 0; pr < d_prows; ++pr) {
            const long r = resolve(long(pr) - wr, long(d_nrows), d_plan.row_wrap());
            float* out = d_padded.data() + pr * d_pcols;
            for (std::size_t pc = 0; pc < d_pcols; ++pc) {
                const long c = resolve(long(pc) - wc, long(d_ncols), d_plan.col_wrap());
                out[pc] =
                    (r < 0 || c < 0) ? INFINITY : cfar_sanitize(in[r * g.row_stride + c]);
            }
        }
    }

    float threshold(std::size_t r, std::size_t c, const cfar_class_entry& e)
    {
        const float* ctr =
            d_padded.data() + (r + d_plan.wr()) * d_pcols + c + d_plan.wc();
        std::size_t n = 0;
        for (const std::ptrdiff_t o : d_offsets)
            d_gather[n++] = ctr[o];
        const auto kth = d_gather.begin() + (e.k - 1);
        std::nth_element(d_gather.begin(), kth, d_gather.begin() + n);
        return e.scale_lead * *kth;
    }

    void run_map(const cfar_geometry& g,
                 std::size_t b,
                 const float* in,
                 std::uint8_t* mask,
                 float* thr) override
    {
        pad(g, in);
        const int rows = static_cast<int>(d_nrows), cols = static_cast<int>(d_ncols);
        const int wc = d_plan.wc();
        for (int r = 0; r < rows; ++r) {
            const int row_class =
                cfar_clip_class(r, rows, d_plan.wr(), d_plan.row_wrap());
            const auto entry_of = [&](int c) -> const cfar_class_entry& {
                return d_plan.entry(row_class,
                                    cfar_clip_class(c, cols, wc, d_plan.col_wrap()));
            };
            float* t = thr ? thr + std::size_t(r) * g.row_stride : d_thr.data();
            // Interior columns share one class (and one k).
            const std::size_t c0 = d_plan.col_wrap() ? 0 : std::size_t(wc);
            const std::size_t c1 = d_ncols - c0;
            std::size_t done = c0;
            const cfar_class_entry& e = entry_of(wc);
            const auto net = d_networks.find(e.k);
            if (net != d_networks.end())
                done += cfar_rows::os_thresholds(
                    d_padded.data() + (r + d_plan.wr()) * d_pcols + c0 + wc,
                    d_offsets.data(),
                    int(d_offsets.size()),
                    net->second.data(),
                    net->second.size(),
                    e.k,
                    e.scale_lead,
                    c1 - c0,
                    d_work.data(),
                    t + c0);
            for (std::size_t c = 0; c < c0; ++c)
                t[c] = threshold(r, c, entry_of(int(c)));
            for (std::size_t c = done; c < d_ncols; ++c)
                t[c] = threshold(r, c, entry_of(int(c)));
            finish_row(g, b, in, mask, r, t, entry_of);
        }
    }

    const std::size_t d_prows, d_pcols;
    std::vector<float> d_padded;
    std::vector<float> d_thr;
    std::vector<std::ptrdiff_t> d_offsets;
    std::vector<float> d_gather;
    std::vector<float> d_work;
    //! Selection network per distinct k of the plan's classes.
    std::map<int, std::vector<std::pair<std::uint16_t, std::uint16_t>>> d_networks;
};

} // namespace

std::unique_ptr<cfar_engine>
make_cfar_engine_cpu(const cfar_plan& plan, std::size_t nrows, std::size_t ncols)
{
    if (plan.variant == cfar_variant::os)
        return std::make_unique<cfar_cpu_os>(plan, nrows, ncols);
    return std::make_unique<cfar_cpu_sums>(plan, nrows, ncols);
}

} // namespace gpuradar::kernels::detail
