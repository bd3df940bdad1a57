/*
 * CPU twin of the CFAR stages.
 *
 * Threads: the rows of every map of a run (range bins for cfar_2d, whole lines for
 * cfar_1d) are shared out over the CPU pool (cpu_threads.h) in bands of consecutive rows;
 * each participant has its own workspace and its own detection list. A row's threshold
 * does not depend on which band it is in (a band re-forms the rows its first window
 * reaches), so mask and thresholds are bit for bit those of one thread. The participants'
 * lists, each in memory order, are merged in memory order and cut at max_detections:
 * the same list, counts and overflow as one thread.
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
 *    per cell: 2 Wd + 1 + 2 Wr + 1 adds, in vector lanes, plus 2 Wr rows of row sums
 *    per band; no per-call allocation once the workspaces exist.
 *  - os: per cell, the k-th smallest training cell of a padded band of rows (absent
 *    cells +Inf): a pruned comparator network over 8 adjacent cells at a time for
 *    windows of up to 1024 training cells, nth_element per cell beyond that, at clipped
 *    Doppler edges and at row tails. Exact selection either way (the same threshold);
 *    still far slower than the sums at the PD window (`gpuradar_bench cfar`).
 */
#include "common/cpu/row_pool.h"
#include "detection/cfar_plan.h"
#include "detection/cpu/cfar_cpu_rows.h"
#include <gpuradar/kernels/common/cpu_threads.h>
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

//! What one pool participant found in the rows it did during one run.
struct rows_found {
    //! In memory order (a participant takes its bands in increasing order); at most
    //! max_detections, which holds every one of them that can make the merged list.
    std::vector<cfar_detection> detections;
    std::vector<std::uint64_t> nonfinite; //!< per map of the run
    std::uint64_t found = 0;
};

//! What both engines share: shape check, the bands over the pool, the merged report.
class cfar_cpu_base : public cfar_engine
{
public:
    cfar_cpu_base(const cfar_plan& plan, std::size_t nrows, std::size_t ncols)
        : d_plan(plan),
          d_clustering(make_clustering(plan)),
          d_nrows(nrows),
          d_ncols(ncols)
    {
        d_report.nonfinite.reserve(plan.max_maps);
    }

    void
    run(const cfar_geometry& g, const float* in, std::uint8_t* mask, float* thr) override
    {
        if (g.nrows != d_nrows || g.ncols != d_ncols)
            throw std::logic_error(
                "gpuradar::cfar: CPU engine made for another map shape");
        const std::size_t participants = std::size_t(cpu_threads());
        make_workspaces(participants);
        if (d_found.size() < participants)
            d_found.resize(participants);
        for (std::size_t i = 0; i < participants; ++i) {
            // Reused, not reallocated: capacity stays from call to call.
            d_found[i].detections.clear();
            d_found[i].nonfinite.assign(g.nmaps, 0);
            d_found[i].found = 0;
        }
        // The rows of all maps, map after map: a band may end in one map and go on in
        // the next (cfar_1d's maps are one row each).
        parallel_rows(g.nmaps * d_nrows,
                      band_rows(),
                      unsigned(participants),
                      [&](std::size_t first, std::size_t last, unsigned slot) {
                          while (first < last) {
                              const std::size_t b = first / d_nrows;
                              const std::size_t r0 = first % d_nrows;
                              const std::size_t r1 = std::min(d_nrows, r0 + last - first);
                              const std::size_t off = g.map_offset(b);
                              run_rows(g,
                                       b,
                                       in + off,
                                       mask + off,
                                       thr ? thr + off : nullptr,
                                       r0,
                                       r1,
                                       slot);
                              first += r1 - r0;
                          }
                      });
        merge(g.nmaps, participants);
    }

    cfar_report collect() override
    {
        cfar_report r = d_report;
        if (d_clustering)
            d_clustering->cluster_report(r);
        return r;
    }

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
    //! Workspaces for participants 0 .. n - 1 (made once, kept).
    virtual void make_workspaces(std::size_t n) = 0;

    //! Least rows per band: a band's fixed cost (the rows its first window reaches)
    //! stays small beside its own rows, and a band is worth a hand-over to a thread.
    virtual std::size_t min_band_rows() const = 0;

    //! Rows [r0, r1) of map b, on participant `slot`'s workspace and list.
    virtual void run_rows(const cfar_geometry& g,
                          std::size_t b,
                          const float* in,
                          std::uint8_t* mask,
                          float* thr,
                          std::size_t r0,
                          std::size_t r1,
                          unsigned slot) = 0;

    /*!
     * Row r's test against its thresholds t, the non-finite count, and the detections
     * of the row in memory order into participant `slot`'s list; entry_of(c) is column
     * c's class entry.
     */
    template <typename EntryOf>
    void finish_row(const cfar_geometry& g,
                    std::size_t b,
                    const float* in,
                    std::uint8_t* mask,
                    int r,
                    const float* t,
                    const EntryOf& entry_of,
                    unsigned slot)
    {
        const std::size_t row_off = std::size_t(r) * g.row_stride;
        const float* x = in + row_off;
        std::uint8_t* mrow = mask + row_off;
        const cfar_rows::test_counts n = cfar_rows::test(x, t, d_ncols, mrow);
        rows_found& f = d_found[slot];
        f.nonfinite[b] += n.nonfinite;
        if (n.detections == 0)
            return;
        for (std::size_t c = 0; c < d_ncols; ++c)
            if (mrow[c])
                detected(g, b, in, r, int(c), x[c], t[c], entry_of(int(c)), mrow[c], f);
    }

    const cfar_plan d_plan;
    const std::optional<detection_clustering> d_clustering;
    const std::size_t d_nrows, d_ncols;

private:
    std::size_t band_rows() const
    {
        // A band of at least this many cells: smaller ones cost more to hand over than
        // to compute.
        constexpr std::size_t min_band_cells = 8192;
        return std::max(min_band_rows(), (min_band_cells + d_ncols - 1) / d_ncols);
    }

    /*!
     * A cell found above its threshold: the local-maximum test (may clear the mask
     * cell), then the participant's detection list. Called in memory order, so the list
     * is sorted.
     */
    void detected(const cfar_geometry& g,
                  std::size_t b,
                  const float* in,
                  int r,
                  int c,
                  float x,
                  float t,
                  const cfar_class_entry& e,
                  std::uint8_t& mask_cell,
                  rows_found& f) const
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
        if (f.detections.size() < d_plan.max_detections) {
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
            f.detections.push_back(d);
        }
        ++f.found;
    }

    //! The participants' lists and counts into the report, as one thread makes it.
    void merge(std::size_t nmaps, std::size_t participants)
    {
        d_report.detections.clear();
        d_report.nonfinite.assign(nmaps, 0);
        d_report.found = 0;
        std::size_t lists = 0;
        for (std::size_t i = 0; i < participants; ++i) {
            const rows_found& f = d_found[i];
            d_report.detections.insert(
                d_report.detections.end(), f.detections.begin(), f.detections.end());
            for (std::size_t b = 0; b < nmaps; ++b)
                d_report.nonfinite[b] += f.nonfinite[b];
            d_report.found += f.found;
            lists += !f.detections.empty();
        }
        // Each list is sorted; bands of several participants interleave.
        if (lists > 1)
            cfar_sort_detections(d_report.detections);
        if (d_report.detections.size() > d_plan.max_detections)
            d_report.detections.resize(d_plan.max_detections);
    }

    std::vector<rows_found> d_found; //!< one per participant
    cfar_report d_report;
};

//! ca, go, so: streamed separable sums (see the file comment).
class cfar_cpu_sums final : public cfar_cpu_base
{
public:
    cfar_cpu_sums(const cfar_plan& plan, std::size_t nrows, std::size_t ncols)
        : cfar_cpu_base(plan, nrows, ncols),
          d_ring_rows(2 * plan.wr() + 1),
          d_zero(ncols, 0.f)
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

    //! One participant's ring of row sums and row buffers.
    struct workspace {
        workspace(const cfar_plan& plan, long ring_rows, std::size_t ncols)
            : ring(std::size_t(ring_rows) * row_arrays * ncols),
              slots(std::size_t(ring_rows)),
              padded(ncols + 2 * std::size_t(plan.wc())),
              lead(ncols),
              lag(ncols),
              thr(ncols),
              lead_src(std::size_t(plan.wr()) + 1),
              lag_src(std::size_t(plan.wr()) + 1)
        {
        }
        std::vector<float> ring;
        std::vector<slot> slots;
        std::vector<float> padded;
        std::vector<float> lead, lag, thr;
        std::vector<const float*> lead_src, lag_src;
    };

    void make_workspaces(std::size_t n) override
    {
        while (d_ws.size() < n)
            d_ws.emplace_back(d_plan, d_ring_rows, d_ncols);
    }

    //! A band re-forms the 2 Wr rows before its first window is full: at least four
    //! times that many rows of its own.
    std::size_t min_band_rows() const override { return std::size_t(8 * d_plan.wr()); }

    // Padded row pr (map row pr - wr) into its ring slot.
    void load_row(workspace& w, const cfar_geometry& g, const float* in, long pr) const
    {
        const long r = resolve(pr - d_plan.wr(), long(d_nrows), d_plan.row_wrap());
        slot& s = w.slots[std::size_t(pr % d_ring_rows)];
        if (r < 0) { // beyond a clipped edge: no cells, all sums zero
            s = { d_zero.data(), d_zero.data(), d_zero.data(), d_zero.data() };
            return;
        }
        const std::size_t wc = std::size_t(d_plan.wc());
        const float* row = in + std::size_t(r) * g.row_stride;
        float* xp = w.padded.data();
        cfar_rows::sanitize(row, d_ncols, xp + wc);
        if (d_plan.col_wrap()) { // 2 wc + 1 <= ncols (checked): one turn suffices
            std::copy(xp + d_ncols, xp + d_ncols + wc, xp);
            std::copy(xp + wc, xp + 2 * wc, xp + wc + d_ncols);
        } else {
            std::fill(xp, xp + wc, 0.f);
            std::fill(xp + wc + d_ncols, xp + 2 * wc + d_ncols, 0.f);
        }
        float* base =
            w.ring.data() + std::size_t(pr % d_ring_rows) * row_arrays * d_ncols;
        float* full = base;
        float* side = base + d_ncols;
        float* lo = base + 2 * d_ncols;
        float* hi = base + 3 * d_ncols;
        cfar_rows::row_sums(
            xp, d_ncols, d_plan.guard_cols, d_plan.train_cols, full, side, lo, hi);
        s = { full, side, lo, hi };
    }

    // Row r of the map, its window's rows in the ring.
    void emit_row(workspace& w,
                  const cfar_geometry& g,
                  std::size_t b,
                  const float* in,
                  std::uint8_t* mask,
                  float* thr,
                  int r,
                  unsigned participant)
    {
        const int wr = d_plan.wr(), gr = d_plan.guard_rows;
        const auto at = [&](int dr) -> const slot& {
            return w.slots[std::size_t((r + wr + dr) % d_ring_rows)];
        };
        // cfar_halves' order: lead = 0 + full(-wr..-gr-1) + side(-gr..-1) + lo(0);
        // lag = hi(0) + side(1..gr) + full(gr+1..wr).
        int na = 0, nb = 0;
        for (int dr = -wr; dr < -gr; ++dr)
            w.lead_src[na++] = at(dr).full;
        for (int dr = -gr; dr < 0; ++dr)
            w.lead_src[na++] = at(dr).side;
        w.lead_src[na++] = at(0).lo;
        w.lag_src[nb++] = at(0).hi;
        for (int dr = 1; dr <= gr; ++dr)
            w.lag_src[nb++] = at(dr).side;
        for (int dr = gr + 1; dr <= wr; ++dr)
            w.lag_src[nb++] = at(dr).full;
        cfar_rows::column_sums(d_ncols,
                               w.lead_src.data(),
                               na,
                               w.lag_src.data(),
                               nb,
                               w.lead.data(),
                               w.lag.data());

        const int rows = int(d_nrows), cols = int(d_ncols), wc = d_plan.wc();
        const int row_class = cfar_clip_class(r, rows, wr, d_plan.row_wrap());
        const auto entry_of = [&](int c) -> const cfar_class_entry& {
            return d_plan.entry(row_class,
                                cfar_clip_class(c, cols, wc, d_plan.col_wrap()));
        };
        const std::size_t row_off = std::size_t(r) * g.row_stride;
        float* t = thr ? thr + row_off : w.thr.data();
        // Interior columns share one class; with clipped Doppler the wc columns at
        // either end have their own (2 wc + 1 <= ncols, checked).
        const std::size_t c0 = d_plan.col_wrap() ? 0 : std::size_t(wc);
        const std::size_t c1 = d_ncols - c0;
        cfar_rows::thresholds(
            d_plan.variant, w.lead.data(), w.lag.data(), c0, c1, entry_of(wc), t);
        for (std::size_t c = 0; c < c0; ++c) {
            cfar_rows::thresholds(d_plan.variant,
                                  w.lead.data(),
                                  w.lag.data(),
                                  c,
                                  c + 1,
                                  entry_of(int(c)),
                                  t);
            const std::size_t m = d_ncols - 1 - c;
            cfar_rows::thresholds(d_plan.variant,
                                  w.lead.data(),
                                  w.lag.data(),
                                  m,
                                  m + 1,
                                  entry_of(int(m)),
                                  t);
        }

        finish_row(g, b, in, mask, r, t, entry_of, participant);
    }

    void run_rows(const cfar_geometry& g,
                  std::size_t b,
                  const float* in,
                  std::uint8_t* mask,
                  float* thr,
                  std::size_t r0,
                  std::size_t r1,
                  unsigned participant) override
    {
        // Row r's window is padded rows r .. r + 2 wr.
        workspace& w = d_ws[participant];
        const long wr = d_plan.wr();
        for (long pr = long(r0); pr < long(r1) + 2 * wr; ++pr) {
            load_row(w, g, in, pr);
            if (pr >= long(r0) + 2 * wr)
                emit_row(w, g, b, in, mask, thr, int(pr - 2 * wr), participant);
        }
    }

    const long d_ring_rows;
    const std::vector<float> d_zero;
    std::vector<workspace> d_ws; //!< one per participant
};

/*!
 * os: per cell, the k-th smallest of the training cells of a padded band of rows.
 * Windows of at most os_network_max_cells training cells: a pruned selection network
 * (cfar_cpu_rows.h) over a vector of adjacent cells at a time; larger ones, the edge
 * columns of a clipped Doppler dimension and the row's tail: nth_element per cell. Both
 * select exactly, so the threshold is the same float either way.
 */
class cfar_cpu_os final : public cfar_cpu_base
{
public:
    cfar_cpu_os(const cfar_plan& plan, std::size_t nrows, std::size_t ncols)
        : cfar_cpu_base(plan, nrows, ncols), d_pcols(ncols + 2 * plan.wc())
    {
        for (const auto& [dr, dc] : plan.training_offsets())
            d_offsets.push_back(static_cast<std::ptrdiff_t>(dr) * d_pcols + dc);
        const int n = int(d_offsets.size());
        if (n <= os_network_max_cells) {
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

    //! One participant's padded band and selection buffers.
    struct workspace {
        std::vector<float> padded; //!< grows to the largest band, then stays
        std::vector<float> thr;
        std::vector<float> gather;
        std::vector<float> work;
    };

    void make_workspaces(std::size_t n) override
    {
        while (d_ws.size() < n) {
            workspace w;
            w.thr.resize(d_ncols);
            w.gather.resize(d_offsets.size());
            if (!d_networks.empty())
                w.work.resize(d_offsets.size() * cfar_rows::os_lanes);
            d_ws.push_back(std::move(w));
        }
    }

    //! A band pads the 2 Wr rows around it, cheap beside the selection: no minimum.
    std::size_t min_band_rows() const override { return 1; }

    // Padded rows [pr0, pr1) (map rows pr - wr) into the band. Beyond a clipped edge:
    // +Inf, ranked above every present cell; the class's k never exceeds its present
    // count, so the k-th smallest is a present cell's value.
    void pad(std::vector<float>& band,
             const cfar_geometry& g,
             const float* in,
             std::size_t pr0,
             std::size_t pr1) const
    {
        const long wr = d_plan.wr(), wc = d_plan.wc();
        if (band.size() < (pr1 - pr0) * d_pcols)
            band.resize((pr1 - pr0) * d_pcols);
        for (std::size_t pr = pr0; pr < pr1; ++pr) {
            const long r = resolve(long(pr) - wr, long(d_nrows), d_plan.row_wrap());
            float* out = band.data() + (pr - pr0) * d_pcols;
            for (std::size_t pc = 0; pc < d_pcols; ++pc) {
                const long c = resolve(long(pc) - wc, long(d_ncols), d_plan.col_wrap());
                out[pc] =
                    (r < 0 || c < 0) ? INFINITY : cfar_sanitize(in[r * g.row_stride + c]);
            }
        }
    }

    //! ctr: the cell's place in the padded band.
    float threshold(workspace& w, const float* ctr, const cfar_class_entry& e) const
    {
        std::size_t n = 0;
        for (const std::ptrdiff_t o : d_offsets)
            w.gather[n++] = ctr[o];
        const auto kth = w.gather.begin() + (e.k - 1);
        std::nth_element(w.gather.begin(), kth, w.gather.begin() + n);
        return e.scale_lead * *kth;
    }

    void run_rows(const cfar_geometry& g,
                  std::size_t b,
                  const float* in,
                  std::uint8_t* mask,
                  float* thr,
                  std::size_t r0,
                  std::size_t r1,
                  unsigned participant) override
    {
        // Row r's window is padded rows r .. r + 2 wr.
        workspace& w = d_ws[participant];
        const std::size_t wr = std::size_t(d_plan.wr());
        pad(w.padded, g, in, r0, r1 + 2 * wr);
        const int rows = static_cast<int>(d_nrows), cols = static_cast<int>(d_ncols);
        const int wc = d_plan.wc();
        for (std::size_t r = r0; r < r1; ++r) {
            const int row_class =
                cfar_clip_class(int(r), rows, d_plan.wr(), d_plan.row_wrap());
            const auto entry_of = [&](int c) -> const cfar_class_entry& {
                return d_plan.entry(row_class,
                                    cfar_clip_class(c, cols, wc, d_plan.col_wrap()));
            };
            float* t = thr ? thr + r * g.row_stride : w.thr.data();
            // Cell c of row r is ctr[c] in the band.
            const float* ctr = w.padded.data() + (r - r0 + wr) * d_pcols + wc;
            // Interior columns share one class (and one k).
            const std::size_t c0 = d_plan.col_wrap() ? 0 : std::size_t(wc);
            const std::size_t c1 = d_ncols - c0;
            std::size_t done = c0;
            const cfar_class_entry& e = entry_of(wc);
            const auto net = d_networks.find(e.k);
            if (net != d_networks.end())
                done += cfar_rows::os_thresholds(ctr + c0,
                                                 d_offsets.data(),
                                                 int(d_offsets.size()),
                                                 net->second.data(),
                                                 net->second.size(),
                                                 e.k,
                                                 e.scale_lead,
                                                 c1 - c0,
                                                 w.work.data(),
                                                 t + c0);
            for (std::size_t c = 0; c < c0; ++c)
                t[c] = threshold(w, ctr + c, entry_of(int(c)));
            for (std::size_t c = done; c < d_ncols; ++c)
                t[c] = threshold(w, ctr + c, entry_of(int(c)));
            finish_row(g, b, in, mask, int(r), t, entry_of, participant);
        }
    }

    const std::size_t d_pcols;
    std::vector<std::ptrdiff_t> d_offsets;
    //! Selection network per distinct k of the plan's classes.
    std::map<int, std::vector<std::pair<std::uint16_t, std::uint16_t>>> d_networks;
    std::vector<workspace> d_ws; //!< one per participant
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
