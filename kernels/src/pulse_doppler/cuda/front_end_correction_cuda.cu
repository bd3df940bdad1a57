/* CUDA front-end corrections' estimates in one read pass over the raw staged CPI,
 * whatever the options: the sums pass takes every sum of the CPI as the framer's copy
 * will screen it (per pulse, per range sample, the I/Q second moments), small kernels
 * turn them into the estimates (the running DC as a parallel scan); framer_copy's copy
 * then applies the whole correction as one affine map per sample as it writes the CPI out
 * (front_end_correction.h, "How"). The statistics of the corrected CPI follow from the
 * raw sums (front_end_correction_math.h), the CPU twin's maths; sums are fp64 and
 * written per block, then added in a fixed order (no atomics but the 9 per-block range
 * terms), so both backends agree to float rounding. */
#include "common/cuda/cuda_check.h"
#include "common/cuda/launch.h"
#include "pulse_doppler/framer_copy_screen.h"
#include "pulse_doppler/front_end_correction_backends.h"
#include "pulse_doppler/front_end_correction_math.h"
#include <cuda_runtime.h>
#include <gpuradar/kernels/pulse_doppler/framer_copy.h>
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpuradar::kernels::detail {
namespace {

constexpr const char* who = "gpuradar::pulse_framer (cuda front_end_correction)";

// The sums pass: a block covers a tile of stats_cols range samples x stats_rows pulses;
// its 8 warps take every 8th pulse of the tile, each lane 8 range samples 32 apart
// (coalesced 256-byte rows), so that per pulse one warp reduction gives the pulse's
// partial sum and per range sample the lane's registers hold the partial column sum.
constexpr int stats_threads = 256;
constexpr int stats_warps = stats_threads / 32;
constexpr int stats_per_lane = 8;
constexpr int stats_cols = 32 * stats_per_lane; // 256
// 64 pulses per block: each warp sums 8 pulses (4 iterations) before the block's
// epilogue (column sums through shared memory, the moments' reduction), and every PD
// workload still has >= 256 blocks (two per SM at this kernel's registers: one wave).
constexpr int stats_rows = 64;

// The estimate kernels: one block of est_threads for the pulses (the DC scan), blocks of
// est_threads over the range samples (the mean pulse).
constexpr int est_threads = 1024;
constexpr int range_threads = 256;

__device__ __forceinline__ double warp_sum(double v)
{
    for (int lanes = 16; lanes > 0; lanes /= 2)
        v += __shfl_down_sync(0xffffffffu, v, lanes);
    return v; // lane 0 holds the sum
}

// Sums of v[0, N) over the block into out[0, N) of thread 0 (the others' out is
// unspecified), in a fixed order; smem holds N x 32 doubles. Every thread of the block
// calls it, and no thread may still be reading smem from an earlier call.
template <int N>
__device__ void block_sums(const double (&v)[N], double* smem, double (&out)[N])
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int nwarps = blockDim.x >> 5;
#pragma unroll
    for (int i = 0; i < N; ++i) {
        const double w = warp_sum(v[i]);
        if (lane == 0)
            smem[i * 32 + warp] = w;
    }
    __syncthreads();
    // Warp 0 adds the warps' partials (a tree, not N x nwarps serial adds on thread 0:
    // this tail is on the critical path of the one-block estimate kernels).
    if (warp == 0)
        for (int i = 0; i < N; ++i) {
            const double total = warp_sum(lane < nwarps ? smem[i * 32 + lane] : 0.0);
            if (lane == 0)
                out[i] = total;
        }
}

// The I/Q matrix of the CPI from its terms, into *out, and its corrected sums into the
// slot's (one thread).
__device__ void finish_iq(
    const double* terms, double n_g, double npulses, front_end_iq_map* out, double* sums)
{
    iq_terms t;
    double* f = &t.raw[0];
    for (int i = 0; i < iq_terms_count; ++i)
        f[i] = __ldcg(terms + i); // from L2: other blocks' atomics, not a stale L1 line
    const iq_sums s = iq_sums_from(t, n_g, npulses);
    const iq_matrix m = iq_matrix_from(s);
    front_end_iq_map q;
    q.a = static_cast<float>(m.a);
    q.b = static_cast<float>(m.b);
    q.ok = m.ok ? 1 : 0;
    *out = q;
    sums[0] = s.ii;
    sums[1] = s.qq;
    sums[2] = s.iq;
}

struct stats_args {
    const float2* cpi;
    std::size_t npulses, nrange;
    std::size_t gate; // range samples [0, gate) blanked (0: none)
    bool rows, cols, moments;
    double2* row_all;  // [tile][pulse]: the pulse's sum over the tile's samples
    double2* row_kept; // [tile][pulse]: the same over the samples not blanked
    double2* col;      // [chunk][range]: the range sample's sum over the chunk's pulses
    double* mom;       // [block][3]: sum over not blanked samples of I^2, Q^2, IQ
    double2* row_sum;  // [pulse]: row_all over the tiles (rows)
    double2* kept_sum; // [pulse]: row_kept over the tiles (rows)
    unsigned int* row_ticket; // [chunk]: the chunk's tiles done (0 between CPIs)
};

// Threads per pulse of the row totals: stats_threads / stats_rows, each adding every
// row_lanes-th tile, then a shuffle tree over the row_lanes adjacent lanes.
constexpr int row_lanes = stats_threads / stats_rows;
static_assert(row_lanes >= 1 && 32 % row_lanes == 0, "a pulse's lanes in one warp");

__global__ void __launch_bounds__(stats_threads) stats_kernel(stats_args a)
{
    __shared__ double2 col_smem[stats_warps][stats_cols];
    __shared__ double red[3 * 32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const std::size_t tile = blockIdx.x, chunk = blockIdx.y;
    const std::size_t c0 = tile * stats_cols + lane;
    const std::size_t p0 = chunk * stats_rows, p1 = min(a.npulses, p0 + stats_rows);
    const bool tile_gated = tile * stats_cols < a.gate; // the tile meets the gate
    double2 acc[stats_per_lane];
#pragma unroll
    for (int k = 0; k < stats_per_lane; ++k)
        acc[k] = make_double2(0.0, 0.0);
    double ii = 0, qq = 0, iq = 0;
    // Two pulses per iteration, all 16 loads issued before any sum: the bytes in flight
    // per warp that keep the pass near the memory's rate.
    for (std::size_t pa = p0 + warp; pa < p1; pa += 2 * stats_warps) {
        float2 v[2][stats_per_lane];
#pragma unroll
        for (int j = 0; j < 2; ++j) {
            const std::size_t p = pa + j * stats_warps;
            const float2* x = a.cpi + p * a.nrange;
#pragma unroll
            for (int k = 0; k < stats_per_lane; ++k) {
                const std::size_t c = c0 + 32 * k;
                v[j][k] = p < p1 && c < a.nrange ? x[c] : make_float2(0.0f, 0.0f);
            }
        }
        // The samples as the framer's copy writes them (its counts are the copy's).
#pragma unroll
        for (int j = 0; j < 2; ++j) {
#pragma unroll
            for (int k = 0; k < stats_per_lane; ++k) {
                screen_tally ignored;
                screen_sample(
                    v[j][k].x, v[j][k].y, framer_clamp_level, INFINITY, ignored);
            }
        }
#pragma unroll
        for (int j = 0; j < 2; ++j) {
            const std::size_t p = pa + j * stats_warps;
            double sr = 0, si = 0, kr = 0, ki = 0;
#pragma unroll
            for (int k = 0; k < stats_per_lane; ++k) {
                const double re = v[j][k].x, im = v[j][k].y;
                acc[k].x += re;
                acc[k].y += im;
                sr += re;
                si += im;
                if (c0 + 32 * k >= a.gate) {
                    kr += re;
                    ki += im;
                    ii += re * re;
                    qq += im * im;
                    iq += re * im;
                }
            }
            if (a.rows && p < p1) { // p < p1: the same in every lane of the warp
                sr = warp_sum(sr);
                si = warp_sum(si);
                if (tile_gated) {
                    kr = warp_sum(kr);
                    ki = warp_sum(ki);
                } else {
                    kr = sr;
                    ki = si;
                }
                if (lane == 0) {
                    a.row_all[tile * a.npulses + p] = make_double2(sr, si);
                    if (a.gate > 0)
                        a.row_kept[tile * a.npulses + p] = make_double2(kr, ki);
                }
            }
        }
    }
    if (a.cols) {
#pragma unroll
        for (int k = 0; k < stats_per_lane; ++k)
            col_smem[warp][lane + 32 * k] = acc[k];
        __syncthreads();
        const std::size_t c = tile * stats_cols + threadIdx.x;
        double2 sum = make_double2(0.0, 0.0);
        for (int w = 0; w < stats_warps; ++w) {
            sum.x += col_smem[w][threadIdx.x].x;
            sum.y += col_smem[w][threadIdx.x].y;
        }
        if (c < a.nrange)
            a.col[chunk * a.nrange + c] = sum;
    }
    if (a.moments) {
        const std::size_t b = std::size_t(blockIdx.y) * gridDim.x + blockIdx.x;
        const double v[3] = { ii, qq, iq };
        double t[3];
        block_sums(v, red, t);
        if (threadIdx.x == 0) {
            a.mom[3 * b + 0] = t[0];
            a.mom[3 * b + 1] = t[1];
            a.mom[3 * b + 2] = t[2];
        }
    }
    if (a.rows) {
        // The last of the chunk's tiles to finish adds the tiles' partial sums of the
        // chunk's pulses (in tile order: deterministic), so that the one-block pulse
        // kernel reads one sum per pulse instead of one per tile (the usual fence and
        // ticket: its reads see the other blocks' writes).
        __shared__ bool last;
        __threadfence();
        __syncthreads();
        if (threadIdx.x == 0)
            last = atomicAdd(a.row_ticket + chunk, 1u) == gridDim.x - 1;
        __syncthreads();
        if (last) {
            __threadfence();
            const std::size_t p = p0 + threadIdx.x / row_lanes;
            const unsigned int part = threadIdx.x % row_lanes;
            double2 s = make_double2(0.0, 0.0), k = make_double2(0.0, 0.0);
            if (p < p1)
                for (std::size_t t = part; t < gridDim.x; t += row_lanes) {
                    const double2 v = __ldcg(a.row_all + t * a.npulses + p);
                    s.x += v.x;
                    s.y += v.y;
                    if (a.gate > 0) {
                        const double2 w = __ldcg(a.row_kept + t * a.npulses + p);
                        k.x += w.x;
                        k.y += w.y;
                    }
                }
            for (int lanes = row_lanes / 2; lanes > 0; lanes /= 2) {
                s.x += __shfl_down_sync(0xffffffffu, s.x, lanes);
                s.y += __shfl_down_sync(0xffffffffu, s.y, lanes);
                k.x += __shfl_down_sync(0xffffffffu, k.x, lanes);
                k.y += __shfl_down_sync(0xffffffffu, k.y, lanes);
            }
            if (part == 0 && p < p1) {
                a.row_sum[p] = s;
                a.kept_sum[p] = a.gate > 0 ? k : s;
            }
            if (threadIdx.x == 0)
                a.row_ticket[chunk] = 0; // for the next CPI (stream-ordered)
        }
    }
}

// d -> A d + B, the running mean's step over a run of pulses; a_then_b(x, y) is x
// followed by y.
struct affine2 {
    double a;
    double2 b;
};
__device__ __forceinline__ affine2 a_then_b(const affine2& x, const affine2& y)
{
    return { y.a * x.a, make_double2(y.a * x.b.x + y.b.x, y.a * x.b.y + y.b.y) };
}

struct pulse_args {
    std::size_t npulses, nrange, nblocks;
    bool dc, running, first, iq;
    double tau;
    const double2* row_sum;  // per pulse: its sum (stats_kernel's row totals)
    const double2* kept_sum; // per pulse: its sum over the samples not blanked
    const double* mom;       // null without I/Q
    double2* state;          // the running DC estimate, carried across CPIs
    double2* dc_d;           // per pulse: scratch (the pulse's mean), then its DC (fp64)
    float2* dc_f;            // per pulse: the DC subtracted
    double* terms; // iq_terms: the raw moments and the pulse terms written, the range
                   // terms zeroed for range_kernel's atomics
    bool finish;   // I/Q without mean pulse: the matrix is computed here
    double n_g;    // samples per pulse not blanked
    front_end_iq_map* iq_out;
    double* sums; // the slot's corrected I/Q sums
};

// One block: the pulses' DC (each pulse's mean, or the running mean as a scan: the
// recurrence d_k = w d_{k-1} + m_k / tau is a composition of affine maps, scanned over
// the block's threads, each thread owning a run of consecutive pulses), then the pulse
// terms of iq_terms and the sum of the raw moments over the sums pass's blocks.
__global__ void __launch_bounds__(est_threads) pulse_kernel(pulse_args a)
{
    __shared__ affine2 scan[est_threads];
    __shared__ double red[12 * 32];
    const std::size_t per = (a.npulses + est_threads - 1) / est_threads;
    const std::size_t q0 = min(a.npulses, threadIdx.x * per);
    const std::size_t q1 = min(a.npulses, q0 + per);
    const double w = 1.0 - 1.0 / a.tau;
    if (a.dc) {
        // The pulses' means, and this thread's run as one affine map.
        affine2 run{ 1.0, make_double2(0.0, 0.0) };
        for (std::size_t p = q0; p < q1; ++p) {
            const double2 s = a.row_sum[p];
            const double2 m =
                make_double2(s.x / double(a.nrange), s.y / double(a.nrange));
            a.dc_d[p] = m;
            affine2 step{ w, make_double2(m.x / a.tau, m.y / a.tau) };
            if (!a.running || (a.first && p == 0))
                step = affine2{ 0.0, m };
            run = a_then_b(run, step);
        }
        // Inclusive scan of the runs (Hillis-Steele), then each thread's starting value.
        scan[threadIdx.x] = run;
        __syncthreads();
        for (int off = 1; off < est_threads; off *= 2) {
            const affine2 left = threadIdx.x >= off ? scan[threadIdx.x - off]
                                                    : affine2{ 1.0, make_double2(0, 0) };
            __syncthreads();
            scan[threadIdx.x] = a_then_b(left, scan[threadIdx.x]);
            __syncthreads();
        }
        const double2 s0 = *a.state;
        double2 d = s0;
        if (threadIdx.x > 0) {
            const affine2 before = scan[threadIdx.x - 1];
            d = make_double2(before.a * s0.x + before.b.x, before.a * s0.y + before.b.y);
        }
        for (std::size_t p = q0; p < q1; ++p) {
            const double2 m = a.dc_d[p];
            if (!a.running || (a.first && p == 0))
                d = m;
            else
                d = make_double2(w * d.x + m.x / a.tau, w * d.y + m.y / a.tau);
            a.dc_d[p] = d;
            a.dc_f[p] = make_float2(static_cast<float>(d.x), static_cast<float>(d.y));
        }
        __syncthreads(); // every thread has read *state
        if (q1 == a.npulses && q1 > q0)
            *a.state = d;
    }
    // Every pulse term, D included (range_kernel subtracts it), written whatever the
    // options: zeros where a correction is off.
    double t[12] = {};
    for (std::size_t b = threadIdx.x; a.iq && b < a.nblocks; b += est_threads) {
        t[0] += a.mom[3 * b + 0];
        t[1] += a.mom[3 * b + 1];
        t[2] += a.mom[3 * b + 2];
    }
    if (a.dc)
        for (std::size_t p = threadIdx.x; p < a.npulses; p += est_threads) {
            const double2 rk = a.kept_sum[p];
            const double2 d = a.dc_d[p];
            t[3] += d.x * rk.x;
            t[4] += d.y * rk.y;
            t[5] += d.x * rk.y;
            t[6] += d.y * rk.x;
            t[7] += d.x * d.x;
            t[8] += d.y * d.y;
            t[9] += d.x * d.y;
            t[10] += d.x;
            t[11] += d.y;
        }
    double sum[12];
    block_sums(t, red, sum);
    if (threadIdx.x == 0) {
        for (int i = 0; i < 12; ++i)
            a.terms[i] = sum[i];
        for (int i = 12; i < iq_terms_count; ++i)
            a.terms[i] = 0.0;
        if (a.finish) // no range terms to wait for
            finish_iq(a.terms, a.n_g, double(a.npulses), a.iq_out, a.sums);
    }
}

struct range_args {
    std::size_t npulses, nrange, nchunks;
    bool first, iq;
    double alpha;
    const double2* col;
    double* terms;        // D read, the range terms added
    double2* mean;        // M, carried across CPIs
    float2* mean_f;       // M as subtracted
    unsigned int* ticket; // blocks done (0 between CPIs)
    front_end_iq_map* iq_out;
    double* sums; // the slot's corrected I/Q sums
};

// Thread r: the CPI's mean pulse at range sample r from the chunks' column sums less
// the DC subtracted from every pulse, folded into M[r]; then the range terms.
__global__ void __launch_bounds__(range_threads) range_kernel(range_args a)
{
    __shared__ double red[9 * 32];
    const std::size_t r = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    double t[9] = {};
    if (r < a.nrange) {
        double2 c = make_double2(0.0, 0.0);
#pragma unroll 8
        for (std::size_t k = 0; k < a.nchunks; ++k) {
            const double2 v = a.col[k * a.nrange + r];
            c.x += v.x;
            c.y += v.y;
        }
        const double dr = a.terms[10], di = a.terms[11];
        const double mr = (c.x - dr) / double(a.npulses),
                     mi = (c.y - di) / double(a.npulses);
        double2 m = a.mean[r];
        if (a.first) {
            m = make_double2(mr, mi);
        } else {
            m.x += a.alpha * (mr - m.x);
            m.y += a.alpha * (mi - m.y);
        }
        a.mean[r] = m;
        a.mean_f[r] = make_float2(static_cast<float>(m.x), static_cast<float>(m.y));
        t[0] = m.x * c.x;
        t[1] = m.y * c.y;
        t[2] = m.x * c.y;
        t[3] = m.y * c.x;
        t[4] = m.x * m.x;
        t[5] = m.y * m.y;
        t[6] = m.x * m.y;
        t[7] = m.x;
        t[8] = m.y;
    }
    if (!a.iq)
        return;
    double sum[9];
    block_sums(t, red, sum);
    // The last block to finish computes the matrix from every block's terms (the usual
    // fence and ticket: its reads see the other blocks' atomics).
    if (threadIdx.x == 0) {
        for (int i = 0; i < 9; ++i)
            atomicAdd(a.terms + 12 + i, sum[i]);
        __threadfence();
        if (atomicAdd(a.ticket, 1u) == gridDim.x - 1) {
            __threadfence();
            finish_iq(a.terms, double(a.nrange), double(a.npulses), a.iq_out, a.sums);
            *a.ticket = 0; // for the next CPI (stream-ordered)
        }
    }
}

class front_end_correction_cuda final : public front_end_correction
{
public:
    front_end_correction_cuda(const front_end_correction_config& cfg, stream_ref stream)
        : front_end_correction(cfg, backend::cuda),
          d_stream(stream),
          d_ntiles((cfg.nrange + stats_cols - 1) / stats_cols),
          d_nchunks((cfg.npulses + stats_rows - 1) / stats_rows),
          d_row_all(d_ntiles * cfg.npulses * sizeof(double2)),
          d_row_kept(d_ntiles * cfg.npulses * sizeof(double2)),
          d_row_sum(cfg.npulses * sizeof(double2)),
          d_kept_sum(cfg.npulses * sizeof(double2)),
          d_row_ticket(d_nchunks * sizeof(unsigned int)),
          d_col(d_nchunks * cfg.nrange * sizeof(double2)),
          d_mom(d_ntiles * d_nchunks * 3 * sizeof(double)),
          d_terms(iq_terms_count * sizeof(double)),
          d_dc_d(cfg.npulses * sizeof(double2)),
          d_dc(cfg.npulses * sizeof(float2)),
          d_dc_state(sizeof(double2)),
          d_mean_pulse(cfg.nrange * sizeof(double2)),
          d_mean_pulse_f(cfg.nrange * sizeof(float2)),
          d_iq(sizeof(front_end_iq_map)),
          d_ticket(sizeof(unsigned int))
    {
        if (d_nchunks > 65535) // the sums pass's grid.y
            throw std::invalid_argument(std::string(who) + ": npulses must be <= " +
                                        std::to_string(65535 * stats_rows) +
                                        " with the CUDA backend's corrections (got " +
                                        std::to_string(cfg.npulses) + ")");
        // The first CPI overwrites both states without using them; zeroed all the same so
        // that no kernel ever reads uninitialised memory (compute-sanitizer's initcheck).
        const auto s = native(d_stream);
        GPURADAR_CUDA_CHECK(who,
                            cudaMemsetAsync(d_dc_state.get(), 0, d_dc_state.size(), s));
        GPURADAR_CUDA_CHECK(
            who, cudaMemsetAsync(d_mean_pulse.get(), 0, d_mean_pulse.size(), s));
        GPURADAR_CUDA_CHECK(who, cudaMemsetAsync(d_ticket.get(), 0, d_ticket.size(), s));
        GPURADAR_CUDA_CHECK(
            who, cudaMemsetAsync(d_row_ticket.get(), 0, d_row_ticket.size(), s));
    }

    void estimate(const cfloat* cpi, std::size_t slot) override
    {
        const auto s = native(d_stream);
        const auto* x = reinterpret_cast<const float2*>(cpi);
        const std::size_t np = d_cfg.npulses, nr = d_cfg.nrange;
        const bool dc = d_cfg.dc != dc_removal::off;
        const bool mean = d_cfg.leakage == leakage_suppression::mean_pulse;
        const std::size_t gate =
            d_cfg.leakage == leakage_suppression::blank ? d_cfg.leakage_gate : 0;
        double* sums = nullptr;
        if (d_cfg.iq) {
            while (d_slot_sums.size() <= slot) { // new slots: the first calls only
                d_slot_sums.emplace_back(3 * sizeof(double));
                d_host_sums.emplace_back(3 * sizeof(double));
            }
            sums = d_slot_sums[slot].as<double>();
            d_used = std::max(d_used, slot + 1);
        }
        if (dc || mean || d_cfg.iq) {
            stats_args sa{ x,
                           np,
                           nr,
                           gate,
                           dc,
                           mean,
                           d_cfg.iq,
                           d_row_all.as<double2>(),
                           d_row_kept.as<double2>(),
                           d_col.as<double2>(),
                           d_mom.as<double>(),
                           d_row_sum.as<double2>(),
                           d_kept_sum.as<double2>(),
                           d_row_ticket.as<unsigned int>() };
            const dim3 grid(static_cast<unsigned int>(d_ntiles),
                            static_cast<unsigned int>(d_nchunks));
            stats_kernel<<<grid, stats_threads, 0, s>>>(sa);
            GPURADAR_CUDA_CHECK_LAUNCH(who, "stats_kernel");
            pulse_args pa{ np,
                           nr,
                           d_ntiles * d_nchunks,
                           dc,
                           d_cfg.dc == dc_removal::running,
                           !d_have_dc,
                           d_cfg.iq,
                           d_cfg.dc_time_constant,
                           d_row_sum.as<double2>(),
                           d_kept_sum.as<double2>(),
                           d_mom.as<double>(),
                           d_dc_state.as<double2>(),
                           d_dc_d.as<double2>(),
                           d_dc.as<float2>(),
                           d_terms.as<double>(),
                           d_cfg.iq && !mean,
                           double(nr - gate),
                           d_iq.as<front_end_iq_map>(),
                           sums };
            pulse_kernel<<<1, est_threads, 0, s>>>(pa);
            GPURADAR_CUDA_CHECK_LAUNCH(who, "pulse_kernel");
            d_have_dc = d_have_dc || dc;
        }
        if (mean) {
            range_args ra{ np,
                           nr,
                           d_nchunks,
                           !d_have_mean,
                           d_cfg.iq,
                           d_cfg.leakage_alpha,
                           d_col.as<double2>(),
                           d_terms.as<double>(),
                           d_mean_pulse.as<double2>(),
                           d_mean_pulse_f.as<float2>(),
                           d_ticket.as<unsigned int>(),
                           d_iq.as<front_end_iq_map>(),
                           sums };
            const auto blocks =
                static_cast<unsigned int>((nr + range_threads - 1) / range_threads);
            range_kernel<<<blocks, range_threads, 0, s>>>(ra);
            GPURADAR_CUDA_CHECK_LAUNCH(who, "range_kernel");
            d_have_mean = true;
        }
    }

    front_end_map map() const override
    {
        front_end_map m;
        m.npulses = d_cfg.npulses;
        m.nrange = d_cfg.nrange;
        m.gate = d_cfg.leakage == leakage_suppression::blank ? d_cfg.leakage_gate : 0;
        if (d_cfg.dc != dc_removal::off)
            m.dc = d_dc.as<cfloat>();
        if (d_cfg.leakage == leakage_suppression::mean_pulse)
            m.mean = d_mean_pulse_f.as<cfloat>();
        if (d_cfg.iq)
            m.iq = d_iq.as<front_end_iq_map>();
        return m;
    }

    // One small copy per slot, one wait.
    void take_estimates(iq_estimate* out, std::size_t n) override
    {
        for (std::size_t i = 0; i < n; ++i)
            out[i] = iq_estimate{};
        if (!d_cfg.iq || d_used == 0)
            return;
        const auto s = native(d_stream);
        for (std::size_t i = 0; i < d_used; ++i)
            GPURADAR_CUDA_CHECK(who,
                                cudaMemcpyAsync(d_host_sums[i].get(),
                                                d_slot_sums[i].get(),
                                                3 * sizeof(double),
                                                cudaMemcpyDeviceToHost,
                                                s));
        d_copied.record(d_stream);
        d_copied.synchronize();
        for (std::size_t i = 0; i < n && i < d_used; ++i) {
            const double* h = d_host_sums[i].as<double>();
            iq_sums sums;
            sums.ii = h[0];
            sums.qq = h[1];
            sums.iq = h[2];
            const iq_matrix m = iq_matrix_from(sums);
            out[i] = iq_estimate{ true, m.ok, m.degenerate, m.gain_db, m.phase_deg };
        }
        d_used = 0;
    }

private:
    stream_ref d_stream;
    const std::size_t d_ntiles;   // the sums pass's tiles of range samples
    const std::size_t d_nchunks;  // and chunks of pulses
    device_memory d_row_all;      // double2 [tile][pulse]
    device_memory d_row_kept;     // double2 [tile][pulse], blanked samples left out
    device_memory d_row_sum;      // double2 [pulse]: the tiles' row_all added
    device_memory d_kept_sum;     // double2 [pulse]: the tiles' row_kept added
    device_memory d_row_ticket;   // unsigned int [chunk]: stats_kernel's tiles done
    device_memory d_col;          // double2 [chunk][range sample]
    device_memory d_mom;          // double [block][3]
    device_memory d_terms;        // iq_terms of the CPI being corrected
    device_memory d_dc_d;         // double2 per pulse: the DC subtracted (fp64)
    device_memory d_dc;           // float2 per pulse: the DC subtracted
    device_memory d_dc_state;     // double2: the running DC estimate
    bool d_have_dc = false;       // d_dc_state holds an estimate
    device_memory d_mean_pulse;   // double2 per range sample: M
    device_memory d_mean_pulse_f; // float2 per range sample: M as subtracted
    bool d_have_mean = false;
    device_memory d_iq;                     // front_end_iq_map of the CPI being corrected
    device_memory d_ticket;                 // range_kernel's blocks done
    std::vector<device_memory> d_slot_sums; // per slot: sum I^2, Q^2, IQ
    std::vector<pinned_memory> d_host_sums; // take_estimates()'s copies of them
    std::size_t d_used = 0;                 // slots run since the last take
    cuda_event d_copied;
};

} // namespace

std::unique_ptr<front_end_correction>
make_front_end_correction_cuda(const front_end_correction_config& cfg, stream_ref stream)
{
    return std::make_unique<front_end_correction_cuda>(cfg, stream);
}

} // namespace gpuradar::kernels::detail
