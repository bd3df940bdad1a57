/*
 * The CFAR's last step on the device, a small dependent kernel after the detection
 * kernel: the counters and the detections back to the host, written straight into mapped
 * pinned memory that collect() reads (no copy-engine hand-over in the stream, and only
 * what was found crosses PCIe).
 *
 * With clustering (cfar_2d_params::cluster) one block also merges the touching
 * detections of each target before they leave: every listed cell goes into a hash table
 * of (map, row, column) in shared memory, each cell joins its four forward neighbours
 * (the other four look back at it) in a lock-free union-find whose roots are the
 * smallest index of their component, and each component keeps its strongest cell (the
 * earliest cell on equal powers, as detection_clustering does). Only each target's peak
 * and cell count cross PCIe; the host adds the sub-bin positions
 * (detection_clustering::from_peaks), so both backends interpolate with the same code.
 */
#include "detection/cuda/cfar_cuda_kernels.cuh"

namespace gpuradar::kernels::detail::cfar_cuda_kernels {
namespace {

constexpr int publish_threads = 256;
constexpr int cluster_threads = 512;
constexpr int cluster_capacity = int(cfar_device_cluster_limit);
constexpr int cells_per_thread = cluster_capacity / cluster_threads;
static_assert(cluster_capacity % cluster_threads == 0);
//! Open addressing at load factor <= 1/2: short probe runs.
constexpr int hash_slots = 2 * cluster_capacity;
static_assert((hash_slots & (hash_slots - 1)) == 0, "the slot mask needs a power of two");
constexpr unsigned long long empty_slot = ~0ull;
//! The list's index of a slot fits 16 bits.
static_assert(cluster_capacity <= 65536);

//! The run's counters into the mapped host buffer.
__device__ void copy_counters(const publish_args& a)
{
    for (int i = threadIdx.x; i < a.counter_words; i += blockDim.x)
        a.host[i] = a.results[i];
}

//! The counters, then the first min(found, capacity, head) list entries.
__device__ void copy_counters_and_head(const publish_args& a)
{
    copy_counters(a);
    const unsigned long long n = min(min(a.results[0], a.capacity), a.head);
    constexpr int words = sizeof(device_detection) / sizeof(std::uint32_t);
    const auto* src = reinterpret_cast<const std::uint32_t*>(a.list);
    auto* dst = reinterpret_cast<std::uint32_t*>(a.host_list);
    for (unsigned long long i = threadIdx.x; i < n * words; i += blockDim.x)
        dst[i] = src[i];
}

__global__ void __launch_bounds__(publish_threads) cfar_publish(publish_args a)
{
    wait_for_predecessor();
    copy_counters_and_head(a);
}

__device__ __forceinline__ unsigned long long
cell_key(const cluster_args& c, std::uint32_t map, std::uint32_t row, std::uint32_t col)
{
    return ((unsigned long long)map * unsigned(c.nrows) + row) * unsigned(c.ncols) + col;
}

__device__ __forceinline__ int slot_of(unsigned long long key)
{
    constexpr int bits = __builtin_ctz(hash_slots);
    return int((key * 0x9E3779B97F4A7C15ull) >> (64 - bits));
}

struct cluster_tables {
    unsigned long long key[hash_slots];
    unsigned short index[hash_slots];
    int parent[cluster_capacity];
    unsigned best_power[cluster_capacity];
    unsigned long long best_key[cluster_capacity];
    unsigned cells[cluster_capacity];
    unsigned clusters;
};

__device__ int find_index(const cluster_tables& t, unsigned long long key)
{
    for (int s = slot_of(key);; s = (s + 1) & (hash_slots - 1)) {
        const unsigned long long k = t.key[s];
        if (k == key)
            return t.index[s];
        if (k == empty_slot)
            return -1;
    }
}

//! The root of i: parents only ever point to smaller indices, so the walk ends.
__device__ int find_root(const volatile int* parent, int i)
{
    for (int p = parent[i]; p != i; p = parent[i])
        i = p;
    return i;
}

//! Joins the components of a and b: the larger root is hung under the smaller one by a
//! compare-and-swap that fails (and retries) when another thread moved that root first.
__device__ void join(int* parent, int a, int b)
{
    for (;;) {
        a = find_root(parent, a);
        b = find_root(parent, b);
        if (a == b)
            return;
        if (a > b) {
            const int t = a;
            a = b;
            b = t;
        }
        if (atomicCAS(&parent[b], b, a) == b)
            return;
    }
}

__global__ void __launch_bounds__(cluster_threads)
    cfar_publish_clusters(publish_args a, cluster_args c)
{
    wait_for_predecessor();
    const int n = int(min(a.results[0], a.capacity));
    if (n > cluster_capacity) {
        // More than one block's tables hold: the list goes back whole, the host clusters.
        copy_counters_and_head(a);
        if (threadIdx.x == 0)
            *c.clusters = cluster_fallback;
        return;
    }
    copy_counters(a);

    __shared__ cluster_tables t;
    for (int s = threadIdx.x; s < hash_slots; s += blockDim.x)
        t.key[s] = empty_slot;
    for (int i = threadIdx.x; i < cluster_capacity; i += blockDim.x) {
        t.parent[i] = i;
        t.best_power[i] = 0;
        t.best_key[i] = empty_slot;
        t.cells[i] = 0;
    }
    if (threadIdx.x == 0)
        t.clusters = 0;
    unsigned long long key[cells_per_thread];
    unsigned power[cells_per_thread];
#pragma unroll
    for (int k = 0; k < cells_per_thread; ++k) {
        const int i = threadIdx.x + k * cluster_threads;
        if (i < n) {
            const device_detection& d = a.list[i];
            key[k] = cell_key(c, d.map, d.row, d.col);
            // Detections are finite and above a threshold >= 0: the bits order as the
            // powers do.
            power[k] = __float_as_uint(d.power);
        }
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < cells_per_thread; ++k) {
        const int i = threadIdx.x + k * cluster_threads;
        if (i >= n)
            continue;
        for (int s = slot_of(key[k]);; s = (s + 1) & (hash_slots - 1))
            if (atomicCAS(&t.key[s], empty_slot, key[k]) == empty_slot) {
                t.index[s] = (unsigned short)i;
                break;
            }
    }
    __syncthreads();
    // Of two touching cells one is the other's (0, +1), (+1, -1), (+1, 0) or (+1, +1).
    constexpr int forward[4][2] = { { 0, 1 }, { 1, -1 }, { 1, 0 }, { 1, 1 } };
#pragma unroll
    for (int k = 0; k < cells_per_thread; ++k) {
        const int i = threadIdx.x + k * cluster_threads;
        if (i >= n)
            continue;
        const device_detection& d = a.list[i];
        for (const auto& step : forward) {
            // As detection_clustering: fewer than 3 bins never wrap (the step would
            // meet the cell itself).
            const int r =
                resolve(int(d.row) + step[0], c.nrows, c.row_wrap && c.nrows >= 3);
            const int col =
                resolve(int(d.col) + step[1], c.ncols, c.col_wrap && c.ncols >= 3);
            if (r < 0 || col < 0)
                continue;
            const int j = find_index(t, cell_key(c, d.map, unsigned(r), unsigned(col)));
            if (j >= 0)
                join(t.parent, i, j);
        }
    }
    __syncthreads();
    int root[cells_per_thread];
#pragma unroll
    for (int k = 0; k < cells_per_thread; ++k) {
        const int i = threadIdx.x + k * cluster_threads;
        if (i >= n)
            continue;
        root[k] = find_root(t.parent, i);
        atomicMax(&t.best_power[root[k]], power[k]);
        atomicAdd(&t.cells[root[k]], 1u);
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < cells_per_thread; ++k) {
        const int i = threadIdx.x + k * cluster_threads;
        if (i < n && power[k] == t.best_power[root[k]])
            atomicMin(&t.best_key[root[k]], key[k]);
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < cells_per_thread; ++k) {
        const int i = threadIdx.x + k * cluster_threads;
        if (i < n && key[k] == t.best_key[root[k]]) {
            const unsigned out = atomicAdd(&t.clusters, 1u);
            c.peaks[out] = a.list[i];
            c.cells[out] = t.cells[root[k]];
        }
    }
    __syncthreads();
    if (threadIdx.x == 0)
        *c.clusters = t.clusters;
}

} // namespace

void launch_publish(bool dependent,
                    cudaStream_t stream,
                    const char* who,
                    const publish_args& a)
{
    launch_dependent(
        dependent, cfar_publish, dim3(1), dim3(publish_threads), 0, stream, who, a);
}

void launch_publish_clusters(bool dependent,
                             cudaStream_t stream,
                             const char* who,
                             const publish_args& a,
                             const cluster_args& c)
{
    launch_dependent(dependent,
                     cfar_publish_clusters,
                     dim3(1),
                     dim3(cluster_threads),
                     0,
                     stream,
                     who,
                     a,
                     c);
}

} // namespace gpuradar::kernels::detail::cfar_cuda_kernels
