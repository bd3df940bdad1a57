/* CUDA front-end corrections' estimates (front_end_correction.h, "How"): the sums pass
 * takes every sum of the CPI as the framer's copy will screen it (per pulse, per range
 * sample, the I/Q second moments), either as the framer's gather (it converts and writes
 * the gates' rows as it sums them) or as a read pass of its own; one kernel turns the
 * sums into the estimates (the running DC as a parallel scan) and leaves them zeroed for
 * the next CPI; framer_copy's copy then applies the whole correction as one affine map
 * per sample as it writes the CPI out. The statistics of the corrected CPI follow from
 * the raw sums (front_end_correction_math.h), the CPU twin's maths; sums are fp64, added
 * with atomics, so both backends agree to float rounding. */
#include "common/cuda/cuda_check.h"
#include "common/cuda/dependent_launch.cuh"
#include "common/cuda/launch.h"
#include "common/cuda/sample_convert.cuh"
#include "pulse_doppler/framer_copy_screen.h"
#include "pulse_doppler/front_end_correction_backends.h"
#include "pulse_doppler/front_end_correction_gather.h"
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
// its 8 warps take every 8th pulse of the tile, each lane 4 range samples 32 apart
// (coalesced 256-byte rows), so that per pulse one warp reduction gives the pulse's
// partial sum and per range sample the lane's registers hold the partial column sum.
// Four samples a lane keep the kernel at 70 registers, three blocks per SM: it is also
// the framer's gather, which must keep up with a plain copy.
constexpr int stats_threads = 256;
constexpr int stats_warps = stats_threads / 32;
constexpr int stats_per_lane = 8;
constexpr int stats_cols = 32 * stats_per_lane; // 256
constexpr int stats_blocks_per_sm = 2;
// 64 pulses per block: each warp sums 8 pulses (4 iterations) before the block's
// epilogue (column sums through shared memory, the moments' reduction).
constexpr int stats_rows = 64;

// estimate_kernel's blocks: range_threads range samples each.
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
    const iq_terms& t, double n_g, double npulses, front_end_iq_map* out, double* sums)
{
    const iq_sums s = iq_sums_from(t, n_g, npulses);
    const iq_matrix m = iq_matrix_from(s, false); // the report's angles: on the host
    front_end_iq_map q;
    q.a = static_cast<float>(m.a);
    q.b = static_cast<float>(m.b);
    q.ok = m.ok ? 1 : 0;
    *out = q;
    sums[0] = s.ii;
    sums[1] = s.qq;
    sums[2] = s.iq;
}

template <typename In>
struct stats_args {
    const In* src;          // row i of the launch at src + i * stride
    std::size_t stride;     // samples from one row of src to the next
    float2* dst;            // the rows converted, row i at dst + i * nrange (null: none)
    std::size_t row0, rows; // the launch's rows: the CPI's pulses [row0, row0 + rows)
    std::size_t nrange;
    std::size_t gate; // range samples [0, gate) blanked (0: none)
    bool rows_on, cols, moments;
    double2* row_sum;  // [pulse]: the pulse's sum (atomics: a term per tile)
    double2* kept_sum; // [pulse]: the same over the samples not blanked (gate > 0)
    double2* col;      // [range]: the range sample's sum over the pulses
    double* mom;       // [3]: sum over not blanked samples of I^2, Q^2, IQ
};

// The sums pass, also the framer's gather when dst is given: each sample converted from
// the input's format as sample_convert converts it, written to dst unscreened (the copy
// screens it later), and summed screened, as the copy will write it. The sums are added
// into the accumulators with atomics (a few per pulse, per range sample and per block),
// so that rows gathered in several launches add up to the CPI's sums.
template <typename In>
__global__ void __launch_bounds__(stats_threads, stats_blocks_per_sm)
    stats_kernel(stats_args<In> a)
{
    __shared__ double2 col_smem[stats_warps][stats_cols];
    __shared__ double red[3 * 32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const std::size_t tile = blockIdx.x, chunk = blockIdx.y;
    const std::size_t c0 = tile * stats_cols + lane;
    const std::size_t i0 = chunk * stats_rows, i1 = min(a.rows, i0 + stats_rows);
    const bool tile_gated = tile * stats_cols < a.gate; // the tile meets the gate
    double2 acc[stats_per_lane];
#pragma unroll
    for (int k = 0; k < stats_per_lane; ++k)
        acc[k] = make_double2(0.0, 0.0);
    double ii = 0, qq = 0, iq = 0;
    // Two rows per iteration, all 16 loads issued before any sum: the bytes in flight
    // per warp that keep the pass near the memory's rate.
    for (std::size_t ia = i0 + warp; ia < i1; ia += 2 * stats_warps) {
        float2 v[2][stats_per_lane];
#pragma unroll
        for (int j = 0; j < 2; ++j) {
            const std::size_t i = ia + j * stats_warps;
            const In* x = a.src + i * a.stride;
#pragma unroll
            for (int k = 0; k < stats_per_lane; ++k) {
                const std::size_t c = c0 + 32 * k;
                v[j][k] = i < i1 && c < a.nrange ? sample_to_float2(x[c])
                                                 : make_float2(0.0f, 0.0f);
            }
        }
        if (a.dst) {
#pragma unroll
            for (int j = 0; j < 2; ++j) {
                const std::size_t i = ia + j * stats_warps;
                float2* y = a.dst + i * a.nrange;
#pragma unroll
                for (int k = 0; k < stats_per_lane; ++k) {
                    const std::size_t c = c0 + 32 * k;
                    if (i < i1 && c < a.nrange)
                        y[c] = v[j][k];
                }
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
            const std::size_t i = ia + j * stats_warps;
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
            if (a.rows_on && i < i1) { // i < i1: the same in every lane of the warp
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
                    const std::size_t p = a.row0 + i;
                    atomicAdd(&a.row_sum[p].x, sr);
                    atomicAdd(&a.row_sum[p].y, si);
                    if (a.gate > 0) {
                        atomicAdd(&a.kept_sum[p].x, kr);
                        atomicAdd(&a.kept_sum[p].y, ki);
                    }
                }
            }
        }
    }
    if (a.cols) {
#pragma unroll
        for (int k = 0; k < stats_per_lane; ++k)
            col_smem[warp][lane + 32 * k] = acc[k];
        __syncthreads();
        // A thread per part of a column: the real parts, then the imaginary ones.
        for (int i = threadIdx.x; i < 2 * stats_cols; i += blockDim.x) {
            const int cl = i % stats_cols;
            const bool imag = i >= stats_cols;
            double sum = 0.0;
            for (int w = 0; w < stats_warps; ++w)
                sum += imag ? col_smem[w][cl].y : col_smem[w][cl].x;
            const std::size_t c = tile * stats_cols + cl;
            if (c < a.nrange)
                atomicAdd(imag ? &a.col[c].y : &a.col[c].x, sum);
        }
    }
    if (a.moments) {
        const double v[3] = { ii, qq, iq };
        double t[3];
        block_sums(v, red, t);
        if (threadIdx.x == 0) {
            atomicAdd(a.mom + 0, t[0]);
            atomicAdd(a.mom + 1, t[1]);
            atomicAdd(a.mom + 2, t[2]);
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

// The exclusive prefix of this thread's run among the block's (threads in order, each
// owning a run of consecutive pulses): a warp scan by shuffles, the warps' totals scanned
// by warp 0. Every thread of the block calls it.
__device__ affine2 block_prefix(const affine2& run)
{
    __shared__ affine2 warp_total[32];
    const unsigned full = 0xffffffffu;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int nwarps = blockDim.x >> 5;
    const affine2 identity{ 1.0, make_double2(0.0, 0.0) };
    auto shfl_up = [&](const affine2& v, int off) {
        return affine2{ __shfl_up_sync(full, v.a, off),
                        make_double2(__shfl_up_sync(full, v.b.x, off),
                                     __shfl_up_sync(full, v.b.y, off)) };
    };
    affine2 inc = run; // inclusive over the warp's lanes
    for (int off = 1; off < 32; off *= 2) {
        const affine2 left = shfl_up(inc, off);
        if (lane >= off)
            inc = a_then_b(left, inc);
    }
    if (lane == 31)
        warp_total[warp] = inc;
    __syncthreads();
    if (warp == 0) {
        affine2 w = lane < nwarps ? warp_total[lane] : identity;
        for (int off = 1; off < 32; off *= 2) {
            const affine2 left = shfl_up(w, off);
            if (lane >= off)
                w = a_then_b(left, w);
        }
        warp_total[lane] = w; // inclusive over the warps
    }
    __syncthreads();
    affine2 before = shfl_up(inc, 1);
    if (lane == 0)
        before = identity;
    return warp > 0 ? a_then_b(warp_total[warp - 1], before) : before;
}

// iq_terms as estimate_kernel fills it, one double after another: the pulse terms (raw
// moments, DC terms, D), which every block adds itself, then the range terms (mean-pulse
// terms, Ms), which the blocks add with atomics.
static_assert(sizeof(iq_terms) == iq_terms_count * sizeof(double),
              "iq_terms: doubles only");
constexpr int pulse_term_count = 12;
constexpr int range_term_count = iq_terms_count - pulse_term_count; // 9

struct estimate_args {
    std::size_t npulses, nrange;
    bool dc, running, mean, iq;
    bool first_dc;   // running: no estimate yet, d_0 = m_0
    bool first_mean; // no mean pulse yet: M = this CPI's
    double tau, alpha;
    // stats_kernel's sums, read, then zeroed for the next CPI's atomics:
    double2* row_sum;        // per pulse: its sum
    double2* kept_sum;       // per pulse: its sum over the samples not blanked (row_sum
                             // itself when nothing is blanked)
    double2* col;            // per range sample: its sum over the pulses
    double* mom;             // [3]: the raw moments
    const double2* state_in; // running: the estimate before this CPI
    double2* state_out;      // running: the estimate after it (another buffer)
    float2* dc_f;            // per pulse: the DC subtracted
    double2* mean_d;         // M, carried across CPIs
    float2* mean_f;          // M as subtracted
    double* range_terms;  // [range_term_count]: the blocks' (atomics; zeroed after use)
    unsigned int* ticket; // blocks done (0 between CPIs)
    double n_g;           // samples per pulse not blanked
    front_end_iq_map* iq_out;
    double* sums; // the slot's corrected I/Q sums (null without I/Q)
};

// Every estimate of the CPI from its sums in one launch. Each block adds the pulse terms
// of iq_terms itself (every block the same sums in the same order: D is the same bits
// everywhere), then its range samples' mean pulse (M[r] from the column sum less D) and
// range terms; the last block to finish adds the blocks' range terms, computes the I/Q
// matrix and zeroes the sums for the next CPI.
__global__ void __launch_bounds__(range_threads) estimate_kernel(estimate_args a)
{
    __shared__ double red[pulse_term_count * 32]; // block_sums' (the larger count)
    __shared__ double pulse_terms[pulse_term_count];
    __shared__ bool last;
    wait_for_predecessor(); // the sums
    // This thread's range sample first: its loads overlap the pulse terms' (the kernel
    // is a few dependent round trips to memory, nothing else).
    const std::size_t r = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    const bool has_r = a.mean && r < a.nrange;
    const double2 c = has_r ? a.col[r] : make_double2(0.0, 0.0);
    const double2 m_before = has_r ? a.mean_d[r] : make_double2(0.0, 0.0);
    double t[pulse_term_count] = {};
    if (a.iq && threadIdx.x == 0) {
        t[0] = a.mom[0];
        t[1] = a.mom[1];
        t[2] = a.mom[2];
    }
    // The pulse terms of one pulse with DC d.
    auto add_pulse = [&](std::size_t p, double2 d) {
        if (blockIdx.x == 0)
            a.dc_f[p] = make_float2(static_cast<float>(d.x), static_cast<float>(d.y));
        const double2 rk = a.kept_sum[p];
        t[3] += d.x * rk.x;
        t[4] += d.y * rk.y;
        t[5] += d.x * rk.y;
        t[6] += d.y * rk.x;
        t[7] += d.x * d.x;
        t[8] += d.y * d.y;
        t[9] += d.x * d.y;
        t[10] += d.x;
        t[11] += d.y;
    };
    auto pulse_mean = [&](std::size_t p) {
        const double2 s = a.row_sum[p];
        return make_double2(s.x / double(a.nrange), s.y / double(a.nrange));
    };
    if (a.dc && a.running) {
        // The recurrence d_k = w d_{k-1} + m_k / tau is a composition of affine maps:
        // each thread's run of consecutive pulses as one map, the block's prefix of the
        // runs, then the run itself from the state before it.
        const double w = 1.0 - 1.0 / a.tau;
        const std::size_t per = (a.npulses + blockDim.x - 1) / blockDim.x;
        const std::size_t q0 = min(a.npulses, threadIdx.x * per);
        const std::size_t q1 = min(a.npulses, q0 + per);
        affine2 run{ 1.0, make_double2(0.0, 0.0) };
        for (std::size_t p = q0; p < q1; ++p) {
            const double2 m = pulse_mean(p);
            const affine2 step =
                a.first_dc && p == 0
                    ? affine2{ 0.0, m }
                    : affine2{ w, make_double2(m.x / a.tau, m.y / a.tau) };
            run = a_then_b(run, step);
        }
        const affine2 before = block_prefix(run);
        const double2 s0 = *a.state_in;
        double2 d =
            make_double2(before.a * s0.x + before.b.x, before.a * s0.y + before.b.y);
        for (std::size_t p = q0; p < q1; ++p) {
            const double2 m = pulse_mean(p);
            d = a.first_dc && p == 0
                    ? m
                    : make_double2(w * d.x + m.x / a.tau, w * d.y + m.y / a.tau);
            add_pulse(p, d);
        }
        if (blockIdx.x == 0 && q1 == a.npulses && q1 > q0)
            *a.state_out = d;
        __syncthreads(); // block_prefix's shared memory before red's use below
    } else if (a.dc) {
        for (std::size_t p = threadIdx.x; p < a.npulses; p += blockDim.x)
            add_pulse(p, pulse_mean(p)); // each pulse's own mean
    }
    double sum[pulse_term_count];
    block_sums(t, red, sum);
    if (threadIdx.x == 0)
        for (int i = 0; i < pulse_term_count; ++i)
            pulse_terms[i] = sum[i];
    __syncthreads();
    double u[range_term_count] = {};
    if (has_r) {
        a.col[r] = make_double2(0.0, 0.0); // for the next CPI's atomics
        const double mr = (c.x - pulse_terms[10]) / double(a.npulses),
                     mi = (c.y - pulse_terms[11]) / double(a.npulses);
        double2 m = m_before;
        if (a.first_mean) {
            m = make_double2(mr, mi);
        } else {
            m.x += a.alpha * (mr - m.x);
            m.y += a.alpha * (mi - m.y);
        }
        a.mean_d[r] = m;
        a.mean_f[r] = make_float2(static_cast<float>(m.x), static_cast<float>(m.y));
        u[0] = m.x * c.x;
        u[1] = m.y * c.y;
        u[2] = m.x * c.y;
        u[3] = m.y * c.x;
        u[4] = m.x * m.x;
        u[5] = m.y * m.y;
        u[6] = m.x * m.y;
        u[7] = m.x;
        u[8] = m.y;
    }
    __syncthreads(); // red is free again
    double range_sum[range_term_count];
    if (a.mean && a.iq)
        block_sums(u, red, range_sum);
    // The last block to finish (the usual fence and ticket: its reads see the other
    // blocks' atomics) finishes the CPI.
    if (threadIdx.x == 0) {
        if (a.mean && a.iq)
            for (int i = 0; i < range_term_count; ++i)
                atomicAdd(a.range_terms + i, range_sum[i]);
        __threadfence();
        last = atomicAdd(a.ticket, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last)
        return;
    __threadfence();
    if (threadIdx.x == 0) {
        if (a.iq) {
            iq_terms it;
            double* f = &it.raw[0];
            for (int i = 0; i < pulse_term_count; ++i)
                f[i] = pulse_terms[i];
            for (int i = 0; i < range_term_count; ++i) {
                f[pulse_term_count + i] = __ldcg(a.range_terms + i);
                a.range_terms[i] = 0.0;
            }
            finish_iq(it, a.n_g, double(a.npulses), a.iq_out, a.sums);
            a.mom[0] = a.mom[1] = a.mom[2] = 0.0;
        }
        *a.ticket = 0;
    }
    if (a.dc)
        for (std::size_t p = threadIdx.x; p < a.npulses; p += blockDim.x) {
            a.row_sum[p] = make_double2(0.0, 0.0);
            a.kept_sum[p] = make_double2(0.0, 0.0);
        }
}

class front_end_correction_cuda final : public front_end_correction
{
public:
    front_end_correction_cuda(const front_end_correction_config& cfg, stream_ref stream)
        : front_end_correction(cfg, backend::cuda),
          d_stream(stream),
          d_acc((2 * cfg.npulses + cfg.nrange) * sizeof(double2) + 4 * sizeof(double)),
          d_range_terms(range_term_count * sizeof(double)),
          d_dc(cfg.npulses * sizeof(float2)),
          d_dc_state(2 * sizeof(double2)),
          d_mean_pulse(cfg.nrange * sizeof(double2)),
          d_mean_pulse_f(cfg.nrange * sizeof(float2)),
          d_iq(sizeof(front_end_iq_map)),
          d_ticket(sizeof(unsigned int)),
          d_dependent(dependent_launch_supported(who))
    {
        if ((cfg.npulses + stats_rows - 1) / stats_rows > 65535) // the sums pass's grid.y
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
            who, cudaMemsetAsync(d_range_terms.get(), 0, d_range_terms.size(), s));
        clear_sums();
    }

    bool takes_sums() const
    {
        return d_cfg.dc != dc_removal::off ||
               d_cfg.leakage == leakage_suppression::mean_pulse || d_cfg.iq;
    }

    // framer_copy's gather of rows [row, row + rows) of the CPI into dst (row `row` of
    // the staging CPI): converted and written by the sums pass, which takes their sums on
    // the way. Row 0 starts a CPI; estimate() uses the sums when the rows gathered since
    // then are the whole CPI, in order, and it is the CPI estimated.
    template <typename In>
    void gather_rows(
        cfloat* dst, const In* src, std::size_t stride, std::size_t row, std::size_t rows)
    {
        if (rows == 0)
            return;
        if (row == 0) {
            if (d_sums_pending) // a CPI begun and never estimated (dropped)
                clear_sums();
            d_gathered_cpi = dst;
            d_gathered_rows = 0;
        }
        if (row != d_gathered_rows || d_gathered_cpi == nullptr ||
            dst != d_gathered_cpi + row * d_cfg.nrange || row + rows > d_cfg.npulses)
            d_gathered_cpi = nullptr; // not one CPI in order: estimate() reads it again
        sums_pass(src, stride, reinterpret_cast<float2*>(dst), row, rows);
        d_gathered_rows = row + rows;
    }

    void estimate(const cfloat* cpi, std::size_t slot) override
    {
        const bool gathered = cpi == d_gathered_cpi && d_gathered_rows == d_cfg.npulses;
        d_gathered_cpi = nullptr;
        d_gathered_rows = 0;
        double* sums = nullptr;
        if (d_cfg.iq) {
            if (slot >= d_slots)
                grow_slots(std::max(2 * d_slots, slot + 1));
            sums = d_slot_sums.as<double>() + 3 * slot;
            d_used = std::max(d_used, slot + 1);
        }
        if (!takes_sums())
            return; // blank alone: nothing to estimate
        if (!gathered) {
            if (d_sums_pending)
                clear_sums();
            sums_pass(reinterpret_cast<const float2*>(cpi),
                      d_cfg.nrange,
                      nullptr,
                      0,
                      d_cfg.npulses);
        }
        estimate_from_sums(sums);
        d_sums_pending = false; // the estimate kernels leave the sums zeroed
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

    // One copy of the slots used, one wait.
    void take_estimates(iq_estimate* out, std::size_t n) override
    {
        for (std::size_t i = 0; i < n; ++i)
            out[i] = iq_estimate{};
        if (!d_cfg.iq || d_used == 0)
            return;
        const auto s = native(d_stream);
        GPURADAR_CUDA_CHECK(who,
                            cudaMemcpyAsync(d_host_sums.get(),
                                            d_slot_sums.get(),
                                            d_used * 3 * sizeof(double),
                                            cudaMemcpyDeviceToHost,
                                            s));
        d_copied.record(d_stream);
        d_copied.synchronize();
        for (std::size_t i = 0; i < n && i < d_used; ++i) {
            const double* h = d_host_sums.as<double>() + 3 * i;
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
    // The accumulators stats_kernel adds into and the estimate kernels read and zero,
    // one allocation (one memset clears them): row sums, kept sums, column sums, moments.
    double2* row_sum() { return d_acc.as<double2>(); }
    double2* kept_sum() { return row_sum() + d_cfg.npulses; }
    double2* col_sum() { return kept_sum() + d_cfg.npulses; }
    double* moments() { return reinterpret_cast<double*>(col_sum() + d_cfg.nrange); }
    std::size_t gate() const
    {
        return d_cfg.leakage == leakage_suppression::blank ? d_cfg.leakage_gate : 0;
    }

    // More slots than a process() call has used so far (the first calls only): the sums
    // queued so far move to the larger array once the stream is done with them.
    void grow_slots(std::size_t slots)
    {
        const auto s = native(d_stream);
        GPURADAR_CUDA_CHECK(who, cudaStreamSynchronize(s));
        device_memory sums(slots * 3 * sizeof(double));
        if (d_slots > 0)
            GPURADAR_CUDA_CHECK(who,
                                cudaMemcpy(sums.get(),
                                           d_slot_sums.get(),
                                           d_slot_sums.size(),
                                           cudaMemcpyDeviceToDevice));
        d_slot_sums = std::move(sums);
        d_host_sums = pinned_memory(slots * 3 * sizeof(double));
        d_slots = slots;
    }

    void clear_sums()
    {
        GPURADAR_CUDA_CHECK(
            who, cudaMemsetAsync(d_acc.get(), 0, d_acc.size(), native(d_stream)));
        d_sums_pending = false;
    }

    // stats_kernel over rows [row, row + rows) of the CPI (row i of the launch at
    // src + i * stride), writing them converted to dst when given.
    template <typename In>
    void sums_pass(
        const In* src, std::size_t stride, float2* dst, std::size_t row, std::size_t rows)
    {
        const bool dc = d_cfg.dc != dc_removal::off;
        stats_args<In> sa{
            src,       stride,    dst,
            row,       rows,      d_cfg.nrange,
            gate(),    dc,        d_cfg.leakage == leakage_suppression::mean_pulse,
            d_cfg.iq,  row_sum(), kept_sum(),
            col_sum(), moments()
        };
        const dim3 grid(
            static_cast<unsigned int>((d_cfg.nrange + stats_cols - 1) / stats_cols),
            static_cast<unsigned int>((rows + stats_rows - 1) / stats_rows));
        stats_kernel<<<grid, stats_threads, 0, native(d_stream)>>>(sa);
        GPURADAR_CUDA_CHECK_LAUNCH(who, "stats_kernel");
        d_sums_pending = true;
    }

    // The estimates from the accumulated sums of the whole CPI (which they zero), the
    // slot's corrected I/Q sums into `sums` (null without I/Q).
    void estimate_from_sums(double* sums)
    {
        const auto s = native(d_stream);
        const std::size_t np = d_cfg.npulses, nr = d_cfg.nrange;
        const bool dc = d_cfg.dc != dc_removal::off;
        const bool mean = d_cfg.leakage == leakage_suppression::mean_pulse;
        // The running DC's state alternates between two buffers: every block reads
        // the one before this CPI while block 0 writes the other.
        double2* state = d_dc_state.as<double2>();
        const std::size_t in = d_state_in;
        estimate_args ea{ np,
                          nr,
                          dc,
                          d_cfg.dc == dc_removal::running,
                          mean,
                          d_cfg.iq,
                          !d_have_dc,
                          !d_have_mean,
                          d_cfg.dc_time_constant,
                          d_cfg.leakage_alpha,
                          row_sum(),
                          gate() > 0 ? kept_sum() : row_sum(),
                          col_sum(),
                          moments(),
                          state + in,
                          state + (1 - in),
                          d_dc.as<float2>(),
                          d_mean_pulse.as<double2>(),
                          d_mean_pulse_f.as<float2>(),
                          d_range_terms.as<double>(),
                          d_ticket.as<unsigned int>(),
                          double(nr - gate()),
                          d_iq.as<front_end_iq_map>(),
                          sums };
        // A block per range_threads range samples with the mean pulse, else one.
        const std::size_t blocks = mean ? (nr + range_threads - 1) / range_threads : 1;
        launch_dependent(d_dependent,
                         estimate_kernel,
                         dim3(static_cast<unsigned int>(blocks)),
                         range_threads,
                         0,
                         s,
                         who,
                         ea);
        d_have_dc = d_have_dc || dc;
        d_have_mean = d_have_mean || mean;
        if (d_cfg.dc == dc_removal::running)
            d_state_in = 1 - in;
    }

    stream_ref d_stream;
    device_memory d_acc;         // the sums pass's accumulators (row_sum() ...)
    bool d_sums_pending = false; // d_acc holds sums no estimate has consumed
    const cfloat* d_gathered_cpi = nullptr; // row 0 of the CPI gather_rows() is writing
    std::size_t d_gathered_rows = 0;        // rows [0, this) gathered in order
    device_memory d_range_terms;            // estimate_kernel's range terms
    device_memory d_dc;                     // float2 per pulse: the DC subtracted
    device_memory d_dc_state;               // double2 [2]: the running DC estimate
    std::size_t d_state_in = 0;             // the one before the next CPI
    bool d_have_dc = false;                 // d_dc_state holds an estimate
    device_memory d_mean_pulse;             // double2 per range sample: M
    device_memory d_mean_pulse_f;           // float2 per range sample: M as subtracted
    bool d_have_mean = false;
    device_memory d_iq;        // front_end_iq_map of the CPI being corrected
    device_memory d_ticket;    // estimate_kernel's blocks done
    const bool d_dependent;    // dependent launches (dependent_launch.cuh)
    std::size_t d_slots = 0;   // capacity of the two arrays below
    device_memory d_slot_sums; // double [slot][3]: sum I^2, Q^2, IQ
    pinned_memory d_host_sums; // take_estimates()'s copy of them
    std::size_t d_used = 0;    // slots run since the last take
    cuda_event d_copied;
};

} // namespace

bool gather_rows_with_sums(front_end_correction& c,
                           cfloat* dst,
                           const void* src,
                           sample_format f,
                           std::size_t stride,
                           std::size_t row,
                           std::size_t rows)
{
    auto* cuda = dynamic_cast<front_end_correction_cuda*>(&c);
    if (cuda == nullptr || !cuda->takes_sums())
        return false;
    switch (f) {
    case sample_format::sc16:
        cuda->gather_rows(dst, static_cast<const short2*>(src), stride, row, rows);
        break;
    case sample_format::sc8:
        cuda->gather_rows(dst, static_cast<const char2*>(src), stride, row, rows);
        break;
    case sample_format::fc32:
    default:
        cuda->gather_rows(dst, static_cast<const float2*>(src), stride, row, rows);
        break;
    }
    return true;
}

std::unique_ptr<front_end_correction>
make_front_end_correction_cuda(const front_end_correction_config& cfg, stream_ref stream)
{
    return std::make_unique<front_end_correction_cuda>(cfg, stream);
}

} // namespace gpuradar::kernels::detail
