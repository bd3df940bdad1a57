/*
 * ECA-B, CUDA, for nsurv surveillance channels against one reference. The reference's
 * normal matrices and their factors are formed once per batch; only the right-hand
 * sides, the solves and the fits are per channel. Without Doppler taps: each batch's
 * autocorrelation and every channel's right-hand side over K lags in one pass over the
 * reference (lag_sums), the Toeplitz normal matrix from them with its edge terms
 * (toeplitz_normal), cuSOLVER's batched Cholesky (potrf), substitution for each
 * channel (cholesky_solve), the fit subtracted sample by sample (subtract_fit). With
 * Doppler taps: the columns of every batch materialised (B x L x P, column-major per
 * batch), their normal equations and the channels' right-hand sides by cuBLAS
 * strided-batched products, the same Cholesky and substitution, the fit subtracted by
 * one more batched product per channel. Single precision; sums over samples of the
 * input powers in double. Block NLMS: one thread block runs the blocks of samples in
 * order (nlms_blocks), channel after channel.
 */
#include "common/cuda/cublas_handle.h"
#include "common/cuda/cuda_check.h"
#include "common/cuda/launch.h"
#include "passive/clutter_cancel_backends.h"
#include <cuComplex.h>
#include <cusolverDn.h>
#include <algorithm>
#include <string>
#include <vector>

namespace gpuradar::kernels::detail {

namespace {

constexpr const char* who = "clutter_cancel";

void check_cusolver(cusolverStatus_t r, const char* call)
{
    if (r != CUSOLVER_STATUS_SUCCESS)
        throw cuda_error(std::string(who) + ": " + call + " failed: cusolverStatus_t " +
                         std::to_string(int(r)));
}
#define ECA_CUSOLVER_CHECK(call) check_cusolver((call), #call)

//! One cuSOLVER dense handle bound to the stream.
class cusolver_handle
{
public:
    explicit cusolver_handle(cudaStream_t stream)
    {
        ECA_CUSOLVER_CHECK(cusolverDnCreate(&d_handle));
        try {
            ECA_CUSOLVER_CHECK(cusolverDnSetStream(d_handle, stream));
        } catch (...) {
            cusolverDnDestroy(d_handle);
            throw;
        }
    }
    ~cusolver_handle()
    {
        release_on(d_device, [this] { cusolverDnDestroy(d_handle); });
    }
    cusolver_handle(const cusolver_handle&) = delete;
    cusolver_handle& operator=(const cusolver_handle&) = delete;
    cusolverDnHandle_t get() const { return d_handle; }

private:
    cusolverDnHandle_t d_handle = nullptr;
    int d_device = current_device_or_0();
};

//! What the kernels accumulate for the host, one per surveillance channel and one more
//! for the reference (its non-finite count only): power before, power after (sums of
//! |x|^2 in double), the non-finite count.
struct eca_stats {
    double power_before;
    double power_after;
    unsigned long long nonfinite;
};

__device__ inline bool finite(cuFloatComplex x) { return isfinite(x.x) && isfinite(x.y); }

//! Block sum of v into *target (double atomics: sm_60 and later).
__device__ void block_add(double v, double* target)
{
    __shared__ double part[elementwise_threads];
    part[threadIdx.x] = v;
    __syncthreads();
    for (int s = elementwise_threads / 2; s > 0; s /= 2) {
        if (threadIdx.x < s)
            part[threadIdx.x] += part[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        atomicAdd(target, part[0]);
}

//! out = in with non-finite samples as 0 (counted in stats->nonfinite); with_power:
//! its power summed into stats->power_before (a surveillance channel, not the
//! reference).
__global__ void sanitise(const cuFloatComplex* __restrict__ in,
                         cuFloatComplex* __restrict__ out,
                         std::size_t n,
                         eca_stats* stats,
                         bool with_power)
{
    double power = 0.0;
    unsigned long long bad = 0;
    for (std::size_t t = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; t < n;
         t += std::size_t(gridDim.x) * blockDim.x) {
        cuFloatComplex a = in[t];
        if (!finite(a)) {
            a = make_cuFloatComplex(0.f, 0.f);
            ++bad;
        }
        out[t] = a;
        power += double(a.x) * a.x + double(a.y) * a.y;
    }
    if (bad)
        atomicAdd(&stats->nonfinite, bad);
    if (with_power) // the same in every thread: block_add synchronises the block
        block_add(power, &stats->power_before);
}

__global__ void
output_power(const cuFloatComplex* __restrict__ e, std::size_t n, eca_stats* stats)
{
    double power = 0.0;
    for (std::size_t t = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; t < n;
         t += std::size_t(gridDim.x) * blockDim.x)
        power += double(e[t].x) * e[t].x + double(e[t].y) * e[t].y;
    block_add(power, &stats->power_after);
}

//! x[b][c][i] = r[bL + i - d] exp(j 2 pi q (bL + i) / N), d = c mod K, q the column's
//! shift (r[-(K-1)..-1] the previous CPI's tail); the phase from (q n mod N) in
//! integers, as the CPU.
__global__ void build_columns(const cuFloatComplex* __restrict__ r,
                              cuFloatComplex* __restrict__ x,
                              std::size_t n,
                              std::size_t l,
                              std::size_t ncols,
                              std::size_t ntaps,
                              bool doppler_taps)
{
    const std::size_t total = n * ncols; // B batches x ncols x L
    for (std::size_t t = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; t < total;
         t += std::size_t(gridDim.x) * blockDim.x) {
        const std::size_t i = t % l, c = (t / l) % ncols, b = t / (l * ncols);
        const std::size_t sample = b * l + i, d = c % ntaps;
        cuFloatComplex v = r[static_cast<long long>(sample) - static_cast<long long>(d)];
        const int q = doppler_taps ? int(c / ntaps) - 1 : 0;
        if (q != 0) {
            long long ph = (static_cast<long long>(q) * static_cast<long long>(sample)) %
                           static_cast<long long>(n);
            if (ph < 0)
                ph += n;
            double sn, cs;
            sincospi(2.0 * double(ph) / double(n), &sn, &cs);
            const float c0 = float(cs), s0 = float(sn);
            v = make_cuFloatComplex(v.x * c0 - v.y * s0, v.x * s0 + v.y * c0);
        }
        x[t] = v;
    }
}

//! One block per batch: g_b = saved_b + (loading + (fallback[b] ? extra : 0)) * mean
//! diagonal on the diagonal (mean diagonal 1 when the trace is 0).
__global__ void load_diagonal(const cuFloatComplex* __restrict__ saved,
                              cuFloatComplex* __restrict__ g,
                              const int* __restrict__ fallback,
                              std::size_t ncols,
                              double loading,
                              double extra)
{
    const std::size_t b = blockIdx.x, sz = ncols * ncols;
    double trace = 0.0;
    for (std::size_t c = threadIdx.x; c < ncols; c += blockDim.x)
        trace += saved[b * sz + c * ncols + c].x;
    __shared__ double total;
    if (threadIdx.x == 0)
        total = 0.0;
    __syncthreads();
    atomicAdd(&total, trace);
    __syncthreads();
    const double mean = total > 0.0 ? total / double(ncols) : 1.0;
    const float delta = float((loading + (fallback && fallback[b] ? extra : 0.0)) * mean);
    for (std::size_t t = threadIdx.x; t < sz; t += blockDim.x) {
        cuFloatComplex v = saved[b * sz + t];
        if (t % (ncols + 1) == 0)
            v.x += delta;
        g[b * sz + t] = v;
    }
}

//! out[b][t] = sum_j partial[b][j][t] (j < chunks, t < size), summed in double.
__global__ void sum_chunks(const cuFloatComplex* __restrict__ partial,
                           cuFloatComplex* __restrict__ out,
                           std::size_t nbatches,
                           std::size_t chunks,
                           std::size_t size)
{
    const std::size_t total = nbatches * size;
    for (std::size_t t = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; t < total;
         t += std::size_t(gridDim.x) * blockDim.x) {
        const std::size_t b = t / size, i = t % size;
        double re = 0.0, im = 0.0;
        for (std::size_t j = 0; j < chunks; ++j) {
            const cuFloatComplex v = partial[(b * chunks + j) * size + i];
            re += v.x;
            im += v.y;
        }
        out[t] = make_cuFloatComplex(float(re), float(im));
    }
}

//! Samples one thread block of lag_sums sums: a chunk of a batch (the last one of a
//! batch shorter); partial sums of this many float products stay well within float's
//! precision before the chunks are added in double.
constexpr std::size_t lag_chunk_samples = 2048;
constexpr int warp_size = 32;

__device__ inline float warp_sum(float v)
{
    for (int o = warp_size / 2; o > 0; o /= 2)
        v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}

//! Lags one warp sums together: the chunk's r[n] and s[n] are read once for the group.
constexpr std::size_t lag_group = 4;

//! Targets one lag_sums block correlates with the reference: two, so that each delayed
//! reference sample read from shared memory feeds two sums.
constexpr std::size_t lag_targets_per_block = 2;

//! Shared memory of lag_sums: the chunk's reference with the K - 1 samples before it,
//! and the chunk of each of its targets other than the reference (one with one
//! channel, whose only block pairs it with the reference; two with more).
inline std::size_t lag_sums_shared_bytes(std::size_t ntaps, std::size_t nsurv)
{
    const std::size_t other = nsurv == 1 ? 1 : lag_targets_per_block;
    return (ntaps - 1 + (1 + other) * lag_chunk_samples) * sizeof(cuFloatComplex);
}

//! The lag sums of one block's targets: out_t[d] = sum_i conj(rt[hist + i - d]) y_t[i]
//! for its one or two (Two) targets; one warp per group of lag_group lags, lanes over
//! samples.
template <bool Two>
__device__ void lag_sums_of(const cuFloatComplex* rt,
                            const cuFloatComplex* ya,
                            const cuFloatComplex* yb,
                            cuFloatComplex* out_a,
                            cuFloatComplex* out_b,
                            std::size_t hist,
                            std::size_t len,
                            std::size_t ntaps)
{
    const unsigned lane = threadIdx.x % warp_size, warp = threadIdx.x / warp_size;
    const unsigned nwarps = blockDim.x / warp_size;
    for (std::size_t d0 = warp * lag_group; d0 < ntaps; d0 += nwarps * lag_group) {
        float ar[lag_group] = {}, ai[lag_group] = {}, yr[lag_group] = {},
              yi[lag_group] = {};
        for (std::size_t i = lane; i < len; i += warp_size) {
            const cuFloatComplex a = ya[i];
            const cuFloatComplex y = Two ? yb[i] : a;
#pragma unroll
            for (std::size_t g = 0; g < lag_group; ++g) {
                if (d0 + g >= ntaps)
                    break;
                const cuFloatComplex x = rt[hist + i - (d0 + g)];
                ar[g] += x.x * a.x + x.y * a.y;
                ai[g] += x.x * a.y - x.y * a.x;
                if (Two) {
                    yr[g] += x.x * y.x + x.y * y.y;
                    yi[g] += x.x * y.y - x.y * y.x;
                }
            }
        }
#pragma unroll
        for (std::size_t g = 0; g < lag_group; ++g) {
            const float sar = warp_sum(ar[g]), sai = warp_sum(ai[g]);
            if (lane == 0 && d0 + g < ntaps)
                out_a[d0 + g] = make_cuFloatComplex(sar, sai);
            if (Two) {
                const float syr = warp_sum(yr[g]), syi = warp_sum(yi[g]);
                if (lane == 0 && d0 + g < ntaps)
                    out_b[d0 + g] = make_cuFloatComplex(syr, syi);
            }
        }
    }
}

//! The targets are the reference itself (t = 0) and the nsurv channels (t = 1 + k, s +
//! k N): partial[((b chunks + c) (1 + nsurv) + t) K + d] = sum over chunk c of batch b
//! of conj(r[n-d]) y_t[n] (t = 0: the autocorrelation; t > 0: channel t - 1's
//! right-hand side); r[-(K-1)..-1] is the previous CPI's tail. Each block takes one
//! chunk and lag_targets_per_block targets (the last block of a chunk one when
//! 1 + nsurv is odd), the chunks in shared memory.
__global__ void lag_sums(const cuFloatComplex* __restrict__ r,
                         const cuFloatComplex* __restrict__ s,
                         cuFloatComplex* __restrict__ partial,
                         std::size_t n,
                         std::size_t l,
                         std::size_t ntaps,
                         std::size_t chunks,
                         std::size_t nsurv)
{
    extern __shared__ cuFloatComplex tile[];
    const std::size_t ntargets = 1 + nsurv;
    const std::size_t groups =
        (ntargets + lag_targets_per_block - 1) / lag_targets_per_block;
    // one-dimensional grid: batches x chunks x groups can pass 65535 either way
    const std::size_t g = blockIdx.x % groups, bc = blockIdx.x / groups;
    const std::size_t b = bc / chunks, c = bc % chunks;
    const std::size_t begin = b * l + c * lag_chunk_samples;
    const std::size_t len = min(lag_chunk_samples, (b + 1) * l - begin);
    const std::size_t hist = ntaps - 1;
    const std::size_t ta = g * lag_targets_per_block, tb = ta + 1;
    const bool two = tb < ntargets;
    cuFloatComplex* rt = tile; // rt[hist + i] = r[begin + i], i >= -(K-1)
    // the reference as a target is its own tile; the others follow it
    cuFloatComplex* const after = tile + hist + lag_chunk_samples;
    cuFloatComplex* ya = ta == 0 ? rt + hist : after;
    cuFloatComplex* yb = ta == 0 ? after : after + lag_chunk_samples;
    const long long first = static_cast<long long>(begin) - static_cast<long long>(hist);
    for (std::size_t i = threadIdx.x; i < hist + len; i += blockDim.x)
        rt[i] = r[first + static_cast<long long>(i)];
    if (ta != 0) {
        const cuFloatComplex* sa = s + (ta - 1) * n;
        for (std::size_t i = threadIdx.x; i < len; i += blockDim.x)
            ya[i] = sa[begin + i];
    }
    if (two) {
        const cuFloatComplex* sb = s + (tb - 1) * n;
        for (std::size_t i = threadIdx.x; i < len; i += blockDim.x)
            yb[i] = sb[begin + i];
    }
    __syncthreads();
    cuFloatComplex* out = partial + bc * ntargets * ntaps;
    if (two) // the same in every thread of the block
        lag_sums_of<true>(
            rt, ya, yb, out + ta * ntaps, out + tb * ntaps, hist, len, ntaps);
    else
        lag_sums_of<false>(rt, ya, nullptr, out + ta * ntaps, nullptr, hist, len, ntaps);
}

//! One thread per batch b (starting at n0 = b L) and diagonal delta of the K x K normal
//! matrix (column-major): R[j+delta][j] = A[delta] + sum_{u<j} (conj(r[n0-1-delta-u])
//! r[n0-1-u] - conj(r[n0+L-1-delta-u]) r[n0+L-1-u]) and R[j][j+delta] its conjugate, a
//! running sum down the diagonal (R[i+1][j+1] = R[i][j] + the product of the samples
//! entering before the batch - that of the ones leaving at its end), in double: the
//! diagonals are independent, and each is K sequential steps, not K^2 / 2 terms a
//! thread. The channels' right-hand sides copied from the lag sums (rhs[(b nsurv + ch)
//! K + d], lags[b][1 + ch][d]).
__global__ void toeplitz_normal(const cuFloatComplex* __restrict__ r,
                                const cuFloatComplex* __restrict__ lags,
                                cuFloatComplex* __restrict__ gram,
                                cuFloatComplex* __restrict__ rhs,
                                std::size_t nbatches,
                                std::size_t l,
                                std::size_t ntaps,
                                std::size_t nsurv)
{
    const std::size_t t = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x, k = ntaps;
    if (t >= nbatches * k)
        return;
    const std::size_t b = t / k, delta = t % k;
    const long long n0 = static_cast<long long>(b * l), ll = static_cast<long long>(l);
    const long long dl = static_cast<long long>(delta);
    const cuFloatComplex* a = lags + b * (1 + nsurv) * k;
    cuFloatComplex* g = gram + b * k * k;
    double re = a[delta].x, im = a[delta].y;
    for (std::size_t j = 0; j + delta < k; ++j) {
        const std::size_t i = j + delta;
        g[i + j * k] = make_cuFloatComplex(float(re), float(im));
        g[j + i * k] = make_cuFloatComplex(float(re), float(-im));
        if (i + 1 == k)
            break;
        // the term u = j of the next entry: delta + u <= K - 2, so p1 >= -(K-1), inside
        // the history; q1 >= n0 (K <= L)
        const long long u = static_cast<long long>(j);
        const long long p1 = n0 - 1 - dl - u, q1 = n0 + ll - 1 - dl - u;
        const cuFloatComplex x = r[p1], y = r[n0 - 1 - u];
        re += double(x.x) * y.x + double(x.y) * y.y;
        im += double(x.x) * y.y - double(x.y) * y.x;
        const cuFloatComplex v = r[q1], w = r[n0 + ll - 1 - u];
        re -= double(v.x) * w.x + double(v.y) * w.y;
        im -= double(v.x) * w.y - double(v.y) * w.x;
    }
    for (std::size_t ch = 0; ch < nsurv; ++ch)
        rhs[(b * nsurv + ch) * k + delta] = a[(1 + ch) * k + delta];
}

//! y = (L_b L_b^H)^{-1} y for each channel's right-hand side of batch b, one block per
//! batch and channel (rhs[(b nsurv + ch) K], the factor the batch's): forward
//! substitution with L, then back substitution with L^H, in shared memory; L lower,
//! column-major (K x K), as cuSOLVER's potrf leaves it (real positive diagonal). It
//! replaces cuSOLVER's batched potrs, whose single-right-hand-side triangular solves ran
//! one warp per system. A factor with a diagonal entry not positive (potrf refused the
//! system even loaded) fits nothing: y = 0, never NaN.
__global__ void cholesky_solve(const cuFloatComplex* __restrict__ factor,
                               cuFloatComplex* __restrict__ rhs,
                               std::size_t k,
                               std::size_t nsurv)
{
    __shared__ cuFloatComplex y[eca_max_columns];
    const cuFloatComplex* lb = factor + (blockIdx.x / nsurv) * k * k;
    cuFloatComplex* out = rhs + blockIdx.x * k;
    for (std::size_t i = threadIdx.x; i < k; i += blockDim.x)
        y[i] = out[i];
    bool refused = false; // the same in every thread: each reads every diagonal entry
    for (std::size_t j = 0; j < k; ++j) { // L z = y
        __syncthreads();                  // y[j] final
        const float d = lb[j + j * k].x;
        refused = refused || !(d > 0.f && isfinite(d));
        const cuFloatComplex zj = make_cuFloatComplex(y[j].x / d, y[j].y / d);
        for (std::size_t i = j + 1 + threadIdx.x; i < k; i += blockDim.x)
            y[i] = cuCsubf(y[i], cuCmulf(lb[i + j * k], zj));
        __syncthreads(); // every thread has read y[j]
        if (threadIdx.x == 0)
            y[j] = zj;
    }
    for (std::size_t jj = k; jj-- > 0;) { // L^H x = z: (L^H)[i][j] = conj(L[j][i])
        __syncthreads();
        const float d = lb[jj + jj * k].x;
        const cuFloatComplex xj = make_cuFloatComplex(y[jj].x / d, y[jj].y / d);
        for (std::size_t i = threadIdx.x; i < jj; i += blockDim.x)
            y[i] = cuCsubf(y[i], cuCmulf(cuConjf(lb[jj + i * k]), xj));
        __syncthreads();
        if (threadIdx.x == 0)
            y[jj] = xj;
    }
    __syncthreads();
    for (std::size_t i = threadIdx.x; i < k; i += blockDim.x)
        out[i] = refused ? make_cuFloatComplex(0.f, 0.f) : y[i];
}

//! e[n] = s[n] - sum_d a_b[d] r[n-d], b = n / L, a_b = coef + b stride (r[-(K-1)..-1]
//! the previous CPI's).
__global__ void subtract_fit(const cuFloatComplex* __restrict__ r,
                             const cuFloatComplex* __restrict__ s,
                             const cuFloatComplex* __restrict__ coef,
                             cuFloatComplex* __restrict__ e,
                             std::size_t n,
                             std::size_t l,
                             std::size_t ntaps,
                             std::size_t stride)
{
    for (std::size_t t = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; t < n;
         t += std::size_t(gridDim.x) * blockDim.x) {
        const cuFloatComplex* a = coef + (t / l) * stride;
        float er = s[t].x, ei = s[t].y;
        for (std::size_t d = 0; d < ntaps; ++d) {
            const cuFloatComplex x =
                r[static_cast<long long>(t) - static_cast<long long>(d)];
            const cuFloatComplex w = a[d];
            er -= w.x * x.x - w.y * x.y;
            ei -= w.x * x.y + w.y * x.x;
        }
        e[t] = make_cuFloatComplex(er, ei);
    }
}

//! Threads of the one thread block running block NLMS.
constexpr int nlms_threads = 256;

//! Block NLMS over the CPI, the blocks of P samples in order (the header's equations):
//! ext[K - 1 + n] = r[n] (the first K - 1 the previous CPI's tail), w the K weights,
//! carried between launches. Phase 1 forms e over the block with w held and sums the
//! reference power; phase 2 updates each w_d from its correlation with e.
__global__ void nlms_blocks(const cuFloatComplex* __restrict__ ext,
                            const cuFloatComplex* __restrict__ s,
                            cuFloatComplex* w,
                            cuFloatComplex* e,
                            std::size_t n,
                            std::size_t ntaps,
                            std::size_t block,
                            float mu)
{
    __shared__ float part[nlms_threads];
    const std::size_t k = ntaps;
    for (std::size_t n0 = 0; n0 < n; n0 += block) {
        float norm = 0.f;
        for (std::size_t i = threadIdx.x; i < block; i += blockDim.x) {
            const cuFloatComplex* x = ext + n0 + i; // x[K-1-d] = r[n0 + i - d]
            float fr = 0.f, fi = 0.f;
            for (std::size_t d = 0; d < k; ++d) {
                const cuFloatComplex v = x[k - 1 - d], wd = w[d];
                fr += wd.x * v.x - wd.y * v.y;
                fi += wd.x * v.y + wd.y * v.x;
                norm += v.x * v.x + v.y * v.y;
            }
            e[n0 + i] = make_cuFloatComplex(s[n0 + i].x - fr, s[n0 + i].y - fi);
        }
        part[threadIdx.x] = norm;
        __syncthreads(); // e and part written
        for (int h = nlms_threads / 2; h > 0; h /= 2) {
            if (int(threadIdx.x) < h)
                part[threadIdx.x] += part[threadIdx.x + h];
            __syncthreads();
        }
        const float total = part[0];
        if (total > 0.f) { // a silent reference teaches nothing
            const float step = mu / total;
            for (std::size_t d = threadIdx.x; d < k; d += blockDim.x) {
                const cuFloatComplex* x = ext + n0 + k - 1 - d; // r[n0 + i - d]
                float gr = 0.f, gi = 0.f;
                for (std::size_t i = 0; i < block; ++i) {
                    const cuFloatComplex v = x[i], ei = e[n0 + i];
                    gr += v.x * ei.x + v.y * ei.y;
                    gi += v.x * ei.y - v.y * ei.x;
                }
                w[d] = make_cuFloatComplex(w[d].x + step * gr, w[d].y + step * gi);
            }
        }
        __syncthreads(); // w updated and part[0] read before the next block
    }
}

//! The chunks a batch's L samples are summed in (L / chunks samples each, at most
//! max_chunk_samples): the smallest divisor of L that short; 1 when only chunks of
//! fewer than min_chunk_samples would do (a product that short is overhead).
constexpr std::size_t max_chunk_samples = 2048, min_chunk_samples = 256;
std::size_t gram_chunks(std::size_t l)
{
    for (std::size_t c = (l + max_chunk_samples - 1) / max_chunk_samples; c <= l; ++c)
        if (l % c == 0)
            return l / c >= min_chunk_samples ? c : 1;
    return 1;
}

//! Waits for the stream, then each channel's report from stats[ch] and the reference's
//! non-finite count at stats[nsurv].
void read_results(const eca_stats* stats,
                  const clutter_cancel_params& p,
                  std::size_t loaded,
                  stream_ref stream,
                  clutter_cancel_result* results)
{
    const std::size_t ns = p.nsurv, n = p.nsamples;
    std::vector<eca_stats> h(ns + 1);
    copy_async(h.data(),
               stats,
               h.size() * sizeof(eca_stats),
               copy_kind::device_to_host,
               stream,
               who);
    synchronize(stream, who);
    for (std::size_t ch = 0; ch < ns; ++ch) {
        clutter_cancel_result& res = results[ch];
        res = clutter_cancel_result();
        res.power_before = h[ch].power_before / double(n);
        res.power_after = h[ch].power_after / double(n);
        res.cancellation_db = res.power_after > 0
                                  ? 10.0 * std::log10(res.power_before / res.power_after)
                                  : 0.0;
        res.loaded_batches = loaded;
        res.nonfinite_samples = std::size_t(h[ch].nonfinite + h[ns].nonfinite);
    }
}

class clutter_cancel_cuda final : public clutter_cancel
{
public:
    clutter_cancel_cuda(const clutter_cancel_params& p, stream_ref s)
        : clutter_cancel(p),
          d_stream(s),
          d_ncols(columns(p)),
          d_l(p.nsamples / p.nbatches),
          d_chunks(gram_chunks(d_l)),
          d_blas(native(s), who),
          d_solver(native(s)),
          d_r((p.nsamples + p.ntaps - 1) * sizeof(cuFloatComplex)),
          d_s(p.nsurv * p.nsamples * sizeof(cuFloatComplex)),
          d_x(p.doppler_taps ? p.nsamples * d_ncols * sizeof(cuFloatComplex) : 0),
          d_gram(p.nbatches * d_ncols * d_ncols * sizeof(cuFloatComplex)),
          d_factor(p.nbatches * d_ncols * d_ncols * sizeof(cuFloatComplex)),
          d_rhs(p.nbatches * p.nsurv * d_ncols * sizeof(cuFloatComplex)),
          d_partial_gram(p.doppler_taps ? p.nbatches * d_chunks * d_ncols * d_ncols *
                                              sizeof(cuFloatComplex)
                                        : 0),
          d_partial_rhs(p.doppler_taps ? p.nbatches * d_chunks * p.nsurv * d_ncols *
                                             sizeof(cuFloatComplex)
                                       : 0),
          d_lag_chunks((d_l + lag_chunk_samples - 1) / lag_chunk_samples),
          d_partial_lags(p.doppler_taps ? 0
                                        : p.nbatches * d_lag_chunks * (1 + p.nsurv) *
                                              p.ntaps * sizeof(cuFloatComplex)),
          d_lags(p.doppler_taps
                     ? 0
                     : p.nbatches * (1 + p.nsurv) * p.ntaps * sizeof(cuFloatComplex)),
          d_pointers(p.nbatches * sizeof(void*)),
          d_info(p.nbatches * sizeof(int)),
          d_fallback(p.nbatches * sizeof(int)),
          d_stats((p.nsurv + 1) * sizeof(eca_stats))
    {
        std::vector<void*> ptrs(p.nbatches);
        for (std::size_t b = 0; b < p.nbatches; ++b)
            ptrs[b] = d_factor.as<cuFloatComplex>() + b * d_ncols * d_ncols;
        copy_async(d_pointers.get(),
                   ptrs.data(),
                   ptrs.size() * sizeof(void*),
                   copy_kind::host_to_device,
                   d_stream,
                   who);
        // Up to 80 KiB at 4096 taps, beyond the default 48 KiB. The attribute is the
        // kernel's, shared by every canceller in the process: set to what the largest
        // needs, so that a smaller one made later cannot lower it under a larger one.
        if (!p.doppler_taps)
            GPURADAR_CUDA_CHECK(
                who,
                cudaFuncSetAttribute(lag_sums,
                                     cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     int(lag_sums_shared_bytes(
                                         eca_max_columns, clutter_cancel::max_nsurv))));
        reset();
        synchronize(d_stream, who); // before `ptrs` goes
    }

    void reset() override
    {
        GPURADAR_CUDA_CHECK(who,
                            cudaMemsetAsync(d_r.get(),
                                            0,
                                            (d_params.ntaps - 1) * sizeof(cuFloatComplex),
                                            native(d_stream)));
    }

    void run_channels(const cfloat* reference,
                      const cfloat* const* surveillance,
                      cfloat* const* out,
                      clutter_cancel_result* results) override
    {
        const cudaStream_t st = native(d_stream);
        const std::size_t n = d_params.nsamples, nb = d_params.nbatches, m = d_ncols;
        const std::size_t ns = d_params.nsurv;
        const int im = int(m), il = int(d_l), ib = int(nb);
        const long long xs = static_cast<long long>(d_l) * im;
        const cuFloatComplex one = make_cuFloatComplex(1.f, 0.f);
        const cuFloatComplex minus_one = make_cuFloatComplex(-1.f, 0.f);
        auto* s = d_s.as<cuFloatComplex>();
        auto* stats = d_stats.as<eca_stats>(); // [ch], then the reference's at [ns]
        GPURADAR_CUDA_CHECK(who,
                            cudaMemsetAsync(stats, 0, (ns + 1) * sizeof(eca_stats), st));
        sanitise<<<elementwise_blocks(n), elementwise_threads, 0, st>>>(
            reinterpret_cast<const cuFloatComplex*>(reference),
            ref_start(),
            n,
            stats + ns,
            false);
        GPURADAR_CUDA_CHECK_LAUNCH(who, "sanitise");
        for (std::size_t ch = 0; ch < ns; ++ch) {
            sanitise<<<elementwise_blocks(n), elementwise_threads, 0, st>>>(
                reinterpret_cast<const cuFloatComplex*>(surveillance[ch]),
                s + ch * n,
                n,
                stats + ch,
                true);
            GPURADAR_CUDA_CHECK_LAUNCH(who, "sanitise");
        }
        if (d_params.doppler_taps)
            materialised_normal_equations();
        else
            toeplitz_normal_equations();
        // Cholesky with the user's loading; singular batches again with the fallback's
        std::size_t loaded = 0;
        factor(nullptr);
        std::vector<int> info(nb);
        copy_async(info.data(),
                   d_info.get(),
                   nb * sizeof(int),
                   copy_kind::device_to_host,
                   d_stream,
                   who);
        synchronize(d_stream, who);
        for (int& v : info) {
            v = v != 0 ? 1 : 0;
            loaded += std::size_t(v);
        }
        if (loaded) {
            copy_async(d_fallback.get(),
                       info.data(),
                       nb * sizeof(int),
                       copy_kind::host_to_device,
                       d_stream,
                       who);
            factor(d_fallback.as<int>());
            synchronize(d_stream, who); // `info` is read by the copy above
        }
        cholesky_solve<<<unsigned(nb * ns), elementwise_threads, 0, st>>>(
            d_factor.as<cuFloatComplex>(), d_rhs.as<cuFloatComplex>(), m, ns);
        GPURADAR_CUDA_CHECK_LAUNCH(who, "cholesky_solve");
        for (std::size_t ch = 0; ch < ns; ++ch) {
            // e_b = s_b - X_b a_b, from the sanitised copy: also right when out[ch] is
            // surveillance[ch]
            auto* e = reinterpret_cast<cuFloatComplex*>(out[ch]);
            const cuFloatComplex* sc = s + ch * n;
            cuFloatComplex* a = d_rhs.as<cuFloatComplex>() + ch * m; // batch stride ns m
            if (d_params.doppler_taps) {
                GPURADAR_CUDA_CHECK(
                    who,
                    cudaMemcpyAsync(
                        e, sc, n * sizeof(cuFloatComplex), cudaMemcpyDeviceToDevice, st));
                GPURADAR_CUBLAS_CHECK(
                    who,
                    cublasCgemmStridedBatched(d_blas.get(),
                                              CUBLAS_OP_N,
                                              CUBLAS_OP_N,
                                              il,
                                              1,
                                              im,
                                              &minus_one,
                                              d_x.as<cuFloatComplex>(),
                                              il,
                                              xs,
                                              a,
                                              im,
                                              static_cast<long long>(ns) * im,
                                              &one,
                                              e,
                                              il,
                                              il,
                                              ib));
            } else {
                subtract_fit<<<elementwise_blocks(n), elementwise_threads, 0, st>>>(
                    ref_start(), sc, a, e, n, d_l, d_params.ntaps, ns * m);
                GPURADAR_CUDA_CHECK_LAUNCH(who, "subtract_fit");
            }
            output_power<<<elementwise_blocks(n), elementwise_threads, 0, st>>>(
                e, n, stats + ch);
            GPURADAR_CUDA_CHECK_LAUNCH(who, "output_power");
        }
        // the next CPI's echoes of this one's last K - 1 samples (n >= K: no overlap)
        if (d_params.ntaps > 1)
            GPURADAR_CUDA_CHECK(
                who,
                cudaMemcpyAsync(d_r.get(),
                                ref_start() + (n - (d_params.ntaps - 1)),
                                (d_params.ntaps - 1) * sizeof(cuFloatComplex),
                                cudaMemcpyDeviceToDevice,
                                st));
        // the reference's systems: every channel's loaded batches
        read_results(stats, d_params, loaded, d_stream, results);
    }

private:
    //! r[0] in d_r, after the previous CPI's last K - 1 samples
    cuFloatComplex* ref_start() const
    {
        return d_r.as<cuFloatComplex>() + (d_params.ntaps - 1);
    }

    //! d_gram, d_rhs from the autocorrelation and the edge terms (no Doppler taps).
    void toeplitz_normal_equations()
    {
        const cudaStream_t st = native(d_stream);
        const std::size_t nb = d_params.nbatches, k = d_params.ntaps;
        const std::size_t ns = d_params.nsurv, targets = 1 + ns;
        const std::size_t groups =
            (targets + lag_targets_per_block - 1) / lag_targets_per_block;
        lag_sums<<<unsigned(nb * d_lag_chunks * groups),
                   elementwise_threads,
                   lag_sums_shared_bytes(k, ns),
                   st>>>(ref_start(),
                         d_s.as<cuFloatComplex>(),
                         d_partial_lags.as<cuFloatComplex>(),
                         d_params.nsamples,
                         d_l,
                         k,
                         d_lag_chunks,
                         ns);
        GPURADAR_CUDA_CHECK_LAUNCH(who, "lag_sums");
        sum_chunks<<<elementwise_blocks(nb * targets * k), elementwise_threads, 0, st>>>(
            d_partial_lags.as<cuFloatComplex>(),
            d_lags.as<cuFloatComplex>(),
            nb,
            d_lag_chunks,
            targets * k);
        GPURADAR_CUDA_CHECK_LAUNCH(who, "sum_chunks");
        toeplitz_normal<<<elementwise_blocks(nb * k), elementwise_threads, 0, st>>>(
            ref_start(),
            d_lags.as<cuFloatComplex>(),
            d_gram.as<cuFloatComplex>(),
            d_rhs.as<cuFloatComplex>(),
            nb,
            d_l,
            k,
            ns);
        GPURADAR_CUDA_CHECK_LAUNCH(who, "toeplitz_normal");
    }

    //! d_x the columns, d_gram = X_b^H X_b, d_rhs[b][ch] = X_b^H s_ch,b (Doppler taps).
    void materialised_normal_equations()
    {
        const cudaStream_t st = native(d_stream);
        const std::size_t n = d_params.nsamples, nb = d_params.nbatches, m = d_ncols;
        const std::size_t ns = d_params.nsurv;
        const int im = int(m), il = int(d_l), in = int(n), ins = int(ns);
        auto* x = d_x.as<cuFloatComplex>();
        auto* s = d_s.as<cuFloatComplex>();
        build_columns<<<elementwise_blocks(n * m), elementwise_threads, 0, st>>>(
            ref_start(), x, n, d_l, m, d_params.ntaps, d_params.doppler_taps);
        GPURADAR_CUDA_CHECK_LAUNCH(who, "build_columns");
        const cuFloatComplex one = make_cuFloatComplex(1.f, 0.f);
        const cuFloatComplex zero = make_cuFloatComplex(0.f, 0.f);
        // G_b = X_b^H X_b (m x m), Y_b = X_b^H [s_0,b .. s_ns-1,b] (m x ns: the channels
        // are columns N apart in d_s), as sums over d_chunks chunks of each batch's
        // samples: a product of m x L by L x m for ten batches would keep few of the
        // device's multiprocessors busy
        const int ic = int(d_chunks), kc = int(d_l / d_chunks);
        const long long m2 = static_cast<long long>(m) * im;
        const long long m2_rhs = static_cast<long long>(m) * ins;
        auto* pg = d_partial_gram.as<cuFloatComplex>();
        auto* py = d_partial_rhs.as<cuFloatComplex>();
        for (std::size_t b = 0; b < nb; ++b) {
            const cuFloatComplex* xb = x + b * d_l * m;
            GPURADAR_CUBLAS_CHECK(who,
                                  cublasCgemmStridedBatched(d_blas.get(),
                                                            CUBLAS_OP_C,
                                                            CUBLAS_OP_N,
                                                            im,
                                                            im,
                                                            kc,
                                                            &one,
                                                            xb,
                                                            il,
                                                            kc,
                                                            xb,
                                                            il,
                                                            kc,
                                                            &zero,
                                                            pg + b * d_chunks * m * m,
                                                            im,
                                                            m2,
                                                            ic));
            GPURADAR_CUBLAS_CHECK(who,
                                  cublasCgemmStridedBatched(d_blas.get(),
                                                            CUBLAS_OP_C,
                                                            CUBLAS_OP_N,
                                                            im,
                                                            ins,
                                                            kc,
                                                            &one,
                                                            xb,
                                                            il,
                                                            kc,
                                                            s + b * d_l,
                                                            in,
                                                            kc,
                                                            &zero,
                                                            py + b * d_chunks * m * ns,
                                                            im,
                                                            m2_rhs,
                                                            ic));
        }
        sum_chunks<<<elementwise_blocks(nb * m * m), elementwise_threads, 0, st>>>(
            pg, d_gram.as<cuFloatComplex>(), nb, d_chunks, m * m);
        GPURADAR_CUDA_CHECK_LAUNCH(who, "sum_chunks");
        sum_chunks<<<elementwise_blocks(nb * ns * m), elementwise_threads, 0, st>>>(
            py, d_rhs.as<cuFloatComplex>(), nb, d_chunks, ns * m);
        GPURADAR_CUDA_CHECK_LAUNCH(who, "sum_chunks");
    }

    //! factor_b = gram_b + loading, then potrf (lower) of every batch into d_info.
    void factor(const int* fallback)
    {
        const cudaStream_t st = native(d_stream);
        const std::size_t nb = d_params.nbatches;
        load_diagonal<<<unsigned(nb), elementwise_threads, 0, st>>>(
            d_gram.as<cuFloatComplex>(),
            d_factor.as<cuFloatComplex>(),
            fallback,
            d_ncols,
            d_params.diagonal_loading,
            eca_fallback_loading);
        GPURADAR_CUDA_CHECK_LAUNCH(who, "load_diagonal");
        ECA_CUSOLVER_CHECK(cusolverDnCpotrfBatched(d_solver.get(),
                                                   CUBLAS_FILL_MODE_LOWER,
                                                   int(d_ncols),
                                                   d_pointers.as<cuFloatComplex*>(),
                                                   int(d_ncols),
                                                   d_info.as<int>(),
                                                   int(nb)));
    }

    stream_ref d_stream;
    std::size_t d_ncols, d_l, d_chunks;
    cublas_handle d_blas;
    cusolver_handle d_solver;
    device_memory d_r; //!< K - 1 samples of the previous CPI, then this one's reference
    device_memory d_s, d_x, d_gram, d_factor, d_rhs, d_partial_gram, d_partial_rhs;
    std::size_t d_lag_chunks; //!< chunks of lag_chunk_samples per batch
    device_memory d_partial_lags, d_lags, d_pointers, d_info, d_fallback, d_stats;
};

//! Block NLMS on the device: the sanitised reference after the last CPI's K - 1
//! samples, the weights in device memory between runs, nlms_blocks in one thread block.
class clutter_nlms_cuda final : public clutter_cancel
{
public:
    clutter_nlms_cuda(const clutter_cancel_params& p, stream_ref s)
        : clutter_cancel(p),
          d_stream(s),
          d_ext((p.nsamples + p.ntaps - 1) * sizeof(cuFloatComplex)),
          d_s(p.nsamples * sizeof(cuFloatComplex)),
          d_w(p.nsurv * p.ntaps * sizeof(cuFloatComplex)),
          d_stats((p.nsurv + 1) * sizeof(eca_stats))
    {
        reset();
        synchronize(d_stream, who); // zeros in place before the first run
    }

    void reset() override
    {
        const cudaStream_t st = native(d_stream);
        GPURADAR_CUDA_CHECK(who, cudaMemsetAsync(d_ext.get(), 0, d_ext.size(), st));
        GPURADAR_CUDA_CHECK(who, cudaMemsetAsync(d_w.get(), 0, d_w.size(), st));
    }

    void run_channels(const cfloat* reference,
                      const cfloat* const* surveillance,
                      cfloat* const* out,
                      clutter_cancel_result* results) override
    {
        const cudaStream_t st = native(d_stream);
        const std::size_t n = d_params.nsamples, k = d_params.ntaps;
        const std::size_t ns = d_params.nsurv;
        auto* ext = d_ext.as<cuFloatComplex>();
        auto* stats = d_stats.as<eca_stats>(); // [ch], then the reference's at [ns]
        GPURADAR_CUDA_CHECK(who,
                            cudaMemsetAsync(stats, 0, (ns + 1) * sizeof(eca_stats), st));
        // the last CPI's K - 1 reference samples first (n >= K: no overlap)
        if (k > 1)
            GPURADAR_CUDA_CHECK(who,
                                cudaMemcpyAsync(ext,
                                                ext + n,
                                                (k - 1) * sizeof(cuFloatComplex),
                                                cudaMemcpyDeviceToDevice,
                                                st));
        sanitise<<<elementwise_blocks(n), elementwise_threads, 0, st>>>(
            reinterpret_cast<const cuFloatComplex*>(reference),
            ext + (k - 1),
            n,
            stats + ns,
            false);
        GPURADAR_CUDA_CHECK_LAUNCH(who, "sanitise");
        // the channels in turn, each with its own weights; d_s is reused in stream order
        for (std::size_t ch = 0; ch < ns; ++ch) {
            auto* e = reinterpret_cast<cuFloatComplex*>(out[ch]);
            sanitise<<<elementwise_blocks(n), elementwise_threads, 0, st>>>(
                reinterpret_cast<const cuFloatComplex*>(surveillance[ch]),
                d_s.as<cuFloatComplex>(),
                n,
                stats + ch,
                true);
            GPURADAR_CUDA_CHECK_LAUNCH(who, "sanitise");
            nlms_blocks<<<1, nlms_threads, 0, st>>>(ext,
                                                    d_s.as<cuFloatComplex>(),
                                                    d_w.as<cuFloatComplex>() + ch * k,
                                                    e,
                                                    n,
                                                    k,
                                                    d_params.nlms_block,
                                                    float(d_params.nlms_step));
            GPURADAR_CUDA_CHECK_LAUNCH(who, "nlms_blocks");
            output_power<<<elementwise_blocks(n), elementwise_threads, 0, st>>>(
                e, n, stats + ch);
            GPURADAR_CUDA_CHECK_LAUNCH(who, "output_power");
        }
        read_results(stats, d_params, 0, d_stream, results);
    }

private:
    stream_ref d_stream;
    device_memory d_ext, d_s, d_w, d_stats;
};

} // namespace

std::unique_ptr<clutter_cancel> make_clutter_cancel_cuda(const clutter_cancel_params& p,
                                                         stream_ref s)
{
    if (p.method == cancel_method::nlms)
        return std::make_unique<clutter_nlms_cuda>(p, s);
    return std::make_unique<clutter_cancel_cuda>(p, s);
}

} // namespace gpuradar::kernels::detail
