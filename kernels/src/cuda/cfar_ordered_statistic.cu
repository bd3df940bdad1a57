/*
 * CUDA CFAR, ordered statistic (os): per cell, the N training cells go into registers
 * (N <= os_register_max) and a bitonic network sorts them; larger windows select the
 * k-th smallest by a radix search over the cells in shared memory (32 passes).
 */
#include "../cfar_math.h"
#include "cfar_cuda_kernels.cuh"

namespace gpuradar::kernels::detail::cfar_gpu {
namespace {

//! Ascending bitonic sort of a register array (N a power of two, fully unrolled).
template <int N>
__device__ __forceinline__ void bitonic_sort(float (&v)[N])
{
#pragma unroll
    for (int k = 2; k <= N; k <<= 1) {
#pragma unroll
        for (int j = k >> 1; j > 0; j >>= 1) {
#pragma unroll
            for (int i = 0; i < N; ++i) {
                const int l = i ^ j;
                if (l > i) {
                    const float lo = fminf(v[i], v[l]), hi = fmaxf(v[i], v[l]);
                    const bool up = (i & k) == 0;
                    v[i] = up ? lo : hi;
                    v[l] = up ? hi : lo;
                }
            }
        }
    }
}

//! Order-preserving map of floats to unsigned keys (negative values reversed).
__device__ __forceinline__ unsigned float_key(float f)
{
    const unsigned u = __float_as_uint(f);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}
__device__ __forceinline__ float key_float(unsigned k)
{
    return __uint_as_float((k & 0x80000000u) ? (k & 0x7fffffffu) : ~k);
}

//! k-th smallest (1-based) of ctr[delta[0..n)] by a most-significant-bit-first search.
__device__ float radix_select(const float* ctr, const int* delta, int n, int k)
{
    unsigned prefix = 0;
    for (int bit = 31; bit >= 0; --bit) {
        const unsigned high = bit == 31 ? 0u : (~0u << (bit + 1));
        int below = 0;
        for (int t = 0; t < n; ++t) {
            const unsigned key = float_key(ctr[delta[t]]);
            below += (key & high) == prefix && !((key >> bit) & 1u);
        }
        if (k > below) {
            prefix |= 1u << bit;
            k -= below;
        }
    }
    return key_float(prefix);
}

//! NMAX > 0: registers and a sorting network (N <= NMAX); NMAX == 0: radix select.
template <int NMAX>
__global__ void __launch_bounds__(block_threads) cfar_os_kernel(const kernel_args a)
{
    extern __shared__ float smem[];
    const int wr = a.gr + a.tr, wc = a.gc + a.tc;
    const int trh = a.tile_rows + 2 * wr, tch = tile_cols + 2 * wc;
    float* tile = smem;
    int* delta = reinterpret_cast<int*>(tile + trh * tch);

    begin_cfar_kernel(a);
    const block_place b = place_block(a);
    // Absent cells rank above everything (+Inf); a clipped window's k' <= N' present
    // cells, so its k'-th smallest is a present cell's.
    load_tile(a, b, trh, tch, INFINITY, tile);
    const int tid = threadIdx.y * blockDim.x + threadIdx.x;
    const int ndelta = a.os_n > NMAX ? a.os_n : NMAX;
    for (int t = tid; t < ndelta; t += block_threads)
        delta[t] = t < a.os_n ? a.os_delta[t] : 0;
    __syncthreads();

    // The cell loop of test_tile_cells written out: with the selection inside a lambda
    // the kernel ran a few percent slower (`gpuradar_bench cfar_2d/PD`, os).
    const int j = threadIdx.x, c = b.c0 + j;
    const int col_class = cfar_clip_class(c, a.ncols, wc, a.col_wrap);
    for (int i = threadIdx.y; i < a.tile_rows; i += block_rows) {
        const int r = b.r0 + i;
        const bool valid = r < a.nrows && c < a.ncols;
        float x = 0.f, t = 0.f, alpha = 1.f;
        if (valid) {
            const float* ctr = tile + (i + wr) * tch + j + wc;
            x = *ctr;
            const cfar_class_entry e =
                class_entry(a, cfar_clip_class(r, a.nrows, wr, a.row_wrap), col_class);
            float kth;
            if constexpr (NMAX > 0) {
                float v[NMAX];
#pragma unroll
                for (int u = 0; u < NMAX; ++u)
                    v[u] = u < a.os_n ? ctr[delta[u]] : INFINITY;
                bitonic_sort(v);
                kth = v[0];
#pragma unroll
                for (int u = 1; u < NMAX; ++u)
                    kth = u == e.k - 1 ? v[u] : kth;
            } else {
                kth = radix_select(ctr, delta, a.os_n, e.k);
            }
            t = e.scale_lead * kth;
            alpha = e.alpha;
        }
        finish_cell(a, b, r, c, valid, x, t, alpha);
    }
}

} // namespace

kernel_fn ordered_statistic_kernel(int n)
{
    return n <= 32   ? cfar_os_kernel<32>
           : n <= 64 ? cfar_os_kernel<os_register_max>
                     : cfar_os_kernel<0>;
}

} // namespace gpuradar::kernels::detail::cfar_gpu
