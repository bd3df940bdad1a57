/*
 * The fused chirp-scaling range stage for rows too long for two in one block's shared
 * memory (F = 16384): each row is split over a cluster of two blocks, so that an SM
 * holds two half rows (of two clusters) and one block's barriers and loads overlap the
 * other's work. The maths is csa_range_rows.cu's, with the transform split as
 *
 *   F = 4 x 4096: the first (DIF, radix 4) pass straight from global memory, each block
 *   taking half of its butterflies (n1 in [rank F/8, (rank + 1) F/8)) and sending
 *   outputs q = 0..3 (the four 4096-point sub-transforms) to block q & 1, which stores
 *   them at local position (q >> 1) 4096 + n1 through distributed shared memory;
 *   the two 4096-point sub-transforms of each block then run locally (radix-16 passes,
 *   phase 2 between the transforms) and the last inverse (DIT, radix 4) pass reads the
 *   four sub-transforms back from both blocks for the block's own n1.
 *
 * Each block's first-pass samples of the next row (two of its four slices) are copied
 * ahead with cp.async into its own part buffer, and the twiddles come from two short
 * tables in shared memory (smem_fft_split_twiddle). Cluster barriers: after the first
 * pass's stores (every sub-transform complete), before the last pass's loads (the
 * partner's inverse passes done), and between those loads and the next row's stores
 * (split into arrive and wait, so a block's next first pass overlaps the wait).
 */
#include "common/cuda/complex_math.cuh"
#include "common/cuda/cuda_check.h"
#include "common/cuda/smem_fft.cuh"
#include "sar/cuda/csa_phase.cuh"
#include "sar/cuda/csa_range_rows.cuh"
#include "sar/cuda/csa_range_rows_pair.h"
#include <cooperative_groups.h>
#include <cuda_pipeline.h>
#include <algorithm>

namespace gpuradar::kernels::detail {
namespace {

constexpr const char* who = "csa";

constexpr unsigned log2F = 14, F = 1u << log2F;
constexpr int RS = 4;
constexpr unsigned sA = F / RS;  // the first pass's stride: one sub-transform
constexpr unsigned n1s = sA / 2; // first-pass butterflies per block
constexpr int threads = 256;     // two blocks per SM at 128 registers a thread
constexpr int iters = n1s / threads;
constexpr unsigned half = F / 2; // samples a block holds
constexpr unsigned padded = half + half / 16;
constexpr int part_slices = 2; // of the RS first-pass slices, copied ahead
//! The twiddles as two tables of 2^(log2F / 2) values in shared memory (the row and
//! part buffer leave the L1 cache too small for a full table: the loads stalled).
constexpr unsigned log2_split = log2F / 2, split = 1u << log2_split;
constexpr std::size_t shared_bytes =
    (padded + part_slices * n1s + 2 * split) * sizeof(float2);
static_assert(2 * shared_bytes + 2 * 1024 <= 228 * 1024, "two blocks per SM");
static_assert(iters * threads == n1s);
static_assert(sizeof(float2) == 8, "shared::cluster addresses step by 8 bytes a sample");

// Thread-block clusters and distributed shared memory need sm_90: the device code below
// is compiled for it only (csa_range_rows_pair_supported asks the device).
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900

constexpr unsigned log2RS = 2;

//! Position (in the whole row's forward order) of shared position p of block `rank`.
__device__ __forceinline__ unsigned row_position(unsigned p, unsigned rank)
{
    return ((p / sA) * 2 * sA) | (rank * sA) | (p % sA);
}

//! The local position of element n1 of sub-transform q in the block holding it (q & 1).
__device__ __forceinline__ unsigned local_position(unsigned q, unsigned n1)
{
    return smem_fft_pad((q >> 1) * sA + n1);
}

//! The shared::cluster address of `local` (this block's shared memory) in block `rank`.
__device__ __forceinline__ unsigned cluster_address(const float2* local, unsigned rank)
{
    unsigned out;
    asm("mapa.shared::cluster.u32 %0, %1, %2;"
        : "=r"(out)
        : "r"(static_cast<unsigned>(__cvta_generic_to_shared(local))), "r"(rank));
    return out;
}

__device__ __forceinline__ void store_cluster(unsigned address, float2 v)
{
    asm volatile(
        "st.shared::cluster.v2.f32 [%0], {%1, %2};" ::"r"(address), "f"(v.x), "f"(v.y)
        : "memory");
}

__device__ __forceinline__ float2 load_cluster(unsigned address)
{
    float2 v;
    asm volatile("ld.shared::cluster.v2.f32 {%0, %1}, [%2];"
                 : "=f"(v.x), "=f"(v.y)
                 : "r"(address)
                 : "memory");
    return v;
}

__device__ __forceinline__ void cluster_arrive()
{
    asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory");
}

__device__ __forceinline__ void cluster_wait()
{
    asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

//! Queues cp.async copies of this thread's first-pass samples j < part_slices of row m
//! (if any) into `part` at the places it reads them from.
__device__ __forceinline__ void
prefetch_part(const csa_range_rows_args& a, std::size_t m, float2* part, unsigned n1_0)
{
    if (m < a.naz) {
        const float2* row = a.rows + m * F;
#pragma unroll
        for (int it = 0; it < iters; ++it)
#pragma unroll
            for (int j = 0; j < part_slices; ++j)
                __pipeline_memcpy_async(part + threadIdx.x + it * threads + j * n1s,
                                        row + n1_0 + it * threads + j * sA,
                                        sizeof(float2));
    }
    __pipeline_commit();
}

__device__ __forceinline__ void cluster_sync()
{
    cooperative_groups::this_cluster().sync();
}

#endif

//! The cluster size at compile time as well as in the launch: without it the kernel
//! spilled (ptxas, 132 bytes a thread).
__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(threads, 2)
    csa_range_rows_pair_kernel(csa_range_rows_args a)
{
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
    extern __shared__ float2 smem[];
    const unsigned rank = cooperative_groups::this_cluster().block_rank();
    float2* const sm = smem;
    float2* const part = smem + padded;
    float2* const hi = part + part_slices * n1s;
    float2* const lo = hi + split;
    for (unsigned j = threadIdx.x; j < split; j += threads) {
        hi[j] = a.twiddle[j << log2_split];
        lo[j] = a.twiddle[j];
    }
    // First read after the first row's cluster wait.
    const smem_fft_split_twiddle twiddle{ hi, lo, log2_split };
    // Sub-transforms 0 and 2 lie in block 0, 1 and 3 in block 1 (shared::cluster
    // addresses of their rows).
    const unsigned even = cluster_address(sm, 0), odd = cluster_address(sm, 1);
    const unsigned n1_0 = rank * n1s + threadIdx.x; // this thread's first n1
    const std::size_t first_row = blockIdx.x / 2, row_step = gridDim.x / 2;
    prefetch_part(a, first_row, part, n1_0);
    cluster_arrive(); // matched by the first row's wait: both blocks have started
    for (std::size_t m = first_row; m < a.naz; m += row_step) {
        float2* row = a.rows + m * F;
        __pipeline_wait_prior(0); // this thread's own copies: no block barrier needed
        const float wa = a.azimuth_weight[m];
        if (wa == 0.0f) { // outside the processed Doppler band (uniform per cluster)
            prefetch_part(a, m + row_step, part, n1_0);
#pragma unroll
            for (int it = 0; it < iters; ++it)
#pragma unroll
                for (int j = 0; j < RS; ++j)
                    row[n1_0 + it * threads + j * sA] = make_float2(0.0f, 0.0f);
            continue;
        }
        // First pass: loads (part buffer, else global memory) and phase 1, then the
        // radix-4 DFTs and twiddles, their outputs stored to the blocks holding them.
        const csa_quadratic q1 = a.q1[m];
        float2 v[iters][RS];
#pragma unroll
        for (int it = 0; it < iters; ++it)
#pragma unroll
            for (int j = 0; j < RS; ++j)
                v[it][j] = j < part_slices ? part[threadIdx.x + it * threads + j * n1s]
                                           : row[n1_0 + it * threads + j * sA];
#pragma unroll
        for (int it = 0; it < iters; ++it)
#pragma unroll
            for (int j = 0; j < RS; ++j)
                v[it][j] =
                    cmul(v[it][j], csa_phasor(q1, double(n1_0 + it * threads + j * sA)));
        cluster_wait(); // the partner's last reads of the previous row are done
#pragma unroll
        for (int it = 0; it < iters; ++it) {
            const unsigned n1 = n1_0 + it * threads;
            smem_fft_reg_dft<RS>(v[it]);
            smem_fft_twiddle<RS>(v[it], twiddle, n1);
#pragma unroll
            for (int q = 0; q < RS; ++q)
                store_cluster((q & 1 ? odd : even) + 8 * local_position(q, n1), v[it][q]);
        }
        prefetch_part(a, m + row_step, part, n1_0); // the part buffer is read
        cluster_sync(); // both blocks' sub-transforms are complete
        for (unsigned log2L = log2F - log2RS; log2L > 4; log2L -= 4)
            smem_fft_pass<16, false>(sm, half, log2L, twiddle, log2F);
        csa_spectrum_pass(
            sm, half / 16, log2F, log2RS, a.q2[m], a.range_weight, [rank](unsigned p) {
                return row_position(p, rank);
            });
        __syncthreads();
        for (unsigned log2L = 8; log2L <= log2F - log2RS; log2L += 4)
            smem_fft_pass<16, true>(sm, half, log2L, twiddle, log2F);
        cluster_sync(); // both blocks' inverse passes are done
        // Last inverse pass radix 4: sample n1 + j sA of the row (conjugated).
#pragma unroll
        for (int it = 0; it < iters; ++it) {
            const unsigned n1 = n1_0 + it * threads;
#pragma unroll
            for (int q = 0; q < RS; ++q)
                v[it][q] = load_cluster((q & 1 ? odd : even) + 8 * local_position(q, n1));
            smem_fft_twiddle<RS>(v[it], twiddle, n1);
            smem_fft_reg_dft<RS>(v[it]);
        }
        const csa_quadratic q3 = a.q3[m];
        if (a.resample_first == nullptr) {
            cluster_arrive();
#pragma unroll
            for (int it = 0; it < iters; ++it)
#pragma unroll
                for (int j = 0; j < RS; ++j) {
                    const unsigned i = n1_0 + it * threads + j * sA;
                    row[i] = cmul(conj_scaled(v[it][j], wa),
                                  csa_phasor(q3, static_cast<double>(i)));
                }
            continue;
        }
        // Squint: the block's samples (slices of n1s) back into its shared memory in
        // natural order, then resampled from both blocks' slices.
        cluster_sync(); // both blocks' last-pass loads are done
#pragma unroll
        for (int it = 0; it < iters; ++it)
#pragma unroll
            for (int j = 0; j < RS; ++j)
                sm[smem_fft_pad(j * n1s + threadIdx.x + it * threads)] =
                    make_float2(v[it][j].x, -v[it][j].y);
        cluster_sync();
        // Sample e lies in slice e / n1s, held by block (slice & 1) at slice / 2.
        const auto sample = [even, odd](unsigned e) {
            const unsigned slice = e / n1s;
            return load_cluster((slice & 1u ? odd : even) +
                                8 * smem_fft_pad((slice >> 1) * n1s + e % n1s));
        };
#pragma unroll
        for (int it = 0; it < iters; ++it)
#pragma unroll
            for (int j = 0; j < RS; ++j) {
                const unsigned i = n1_0 + it * threads + j * sA;
                const float2 x = csa_resampled(a, i, sample);
                row[i] = cmul(make_float2(x.x * wa, x.y * wa),
                              csa_phasor(q3, static_cast<double>(i)));
            }
        cluster_arrive();
    }
    cluster_wait(); // the partner no longer reads this block's shared memory
#else
    __trap(); // not launched below sm_90
#endif
}

} // namespace

bool csa_range_rows_pair_supported(std::size_t nrange)
{
    if (nrange != F)
        return false;
    int device = 0, clusters = 0;
    GPURADAR_CUDA_CHECK(who, cudaGetDevice(&device));
    GPURADAR_CUDA_CHECK(
        who, cudaDeviceGetAttribute(&clusters, cudaDevAttrClusterLaunch, device));
    return clusters != 0;
}

csa_range_rows_launch csa_range_rows_pair_prepare(std::size_t naz)
{
    csa_range_rows_launch l;
    l.kernel = csa_range_rows_pair_kernel;
    l.threads = threads;
    l.shared_bytes = shared_bytes;
    l.cluster = 2;
    GPURADAR_CUDA_CHECK(who,
                        cudaFuncSetAttribute(l.kernel,
                                             cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             static_cast<int>(l.shared_bytes)));
    // A persistent grid of the clusters that fit at once (each prefetches its next row).
    l.blocks = 2 * static_cast<unsigned>(std::min<std::size_t>(naz, 65535));
    cudaLaunchAttribute cluster;
    const cudaLaunchConfig_t config = csa_range_rows_config(l, nullptr, cluster);
    int clusters = 0;
    GPURADAR_CUDA_CHECK(who,
                        cudaOccupancyMaxActiveClusters(&clusters, l.kernel, &config));
    l.blocks = 2 * static_cast<unsigned>(
                       std::min<std::size_t>(naz, std::size_t(std::max(1, clusters))));
    return l;
}

} // namespace gpuradar::kernels::detail
