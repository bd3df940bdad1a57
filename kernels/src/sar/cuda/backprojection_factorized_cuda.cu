/*
 * CUDA fast factorized backprojection: the plan is made on the host
 * (backprojection_factorized.cc) and uploaded with the usable pulses' records; three
 * kernels then run one thread per sample, each computing exactly what the CPU twin's
 * loop computes (the per-sample functions of backprojection_factorized_backends.h):
 * stage 0 (direct sums onto the first polar grids), one launch per merge stage, and the
 * final merge of the last level's polar images onto the Cartesian pixels, added into the
 * image. Levels ping-pong between two device buffers that only grow.
 */
#include "common/cuda/cuda_check.h"
#include "common/cuda/launch.h"
#include "sar/backprojection_factorized_backends.h"
#include <cuda_runtime.h>
#include <algorithm>
#include <vector>

namespace gpuradar::kernels::detail {
namespace {

constexpr const char* who = "gpuradar::backprojection (factorized)";

__global__ void ffbp_stage0_kernel(const ffbp_polar* nodes,
                                   int nnodes,
                                   long long nsamples,
                                   const bp_pulse* pulses,
                                   const float* data,
                                   long long nbins,
                                   double kt,
                                   double zp,
                                   ffbp_cf* out)
{
    for (long long s = blockIdx.x * (long long)blockDim.x + threadIdx.x; s < nsamples;
         s += (long long)gridDim.x * blockDim.x)
        out[s] = ffbp_stage0_sample(nodes, nnodes, s, pulses, data, nbins, kt, zp);
}

template <int OR, int OA>
__global__ void ffbp_merge_kernel(const ffbp_polar* nodes,
                                  int nnodes,
                                  long long nsamples,
                                  const ffbp_polar* children,
                                  const ffbp_cf* child_img,
                                  ffbp_kernels kern,
                                  double kt,
                                  double zp,
                                  ffbp_cf* out)
{
    for (long long s = blockIdx.x * (long long)blockDim.x + threadIdx.x; s < nsamples;
         s += (long long)gridDim.x * blockDim.x)
        out[s] = ffbp_merge_sample<OR, OA>(
            nodes, nnodes, s, children, child_img, kern, kt, zp);
}

template <int OR, int OA>
__global__ void ffbp_pixel_kernel(const ffbp_polar* top,
                                  int ntop,
                                  const ffbp_cf* img,
                                  ffbp_kernels kern,
                                  double kt,
                                  image_grid_view g,
                                  double zp,
                                  float* image)
{
    const long long n = g.nx * g.ny;
    for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < n;
         k += (long long)gridDim.x * blockDim.x) {
        const long long iy = k / g.nx, ix = k % g.nx;
        const ffbp_cf v = ffbp_pixel<OR, OA>(top,
                                             ntop,
                                             img,
                                             kern,
                                             kt,
                                             g.x0 + double(ix) * g.dx,
                                             g.y0 + double(iy) * g.dy,
                                             zp);
        image[2 * k] += v.re;
        image[2 * k + 1] += v.im;
    }
}

//! Counts the samples with a non-finite part of the usable pulses (one block per pulse).
__global__ void ffbp_count_nonfinite(const bp_pulse* pulses,
                                     const float* data,
                                     long long nbins,
                                     unsigned long long* count)
{
    const float* q = data + 2 * static_cast<long long>(pulses[blockIdx.x].index) * nbins;
    unsigned long long n = 0;
    for (long long k = threadIdx.x; k < nbins; k += blockDim.x)
        n += (ffbp_finite_or_0(q[2 * k]) != q[2 * k]) |
             (ffbp_finite_or_0(q[2 * k + 1]) != q[2 * k + 1]);
    if (n)
        atomicAdd(count, n);
}

class backprojection_factorized_cuda final : public bp_backend
{
public:
    backprojection_factorized_cuda(const image_grid& g,
                                   std::size_t nbins,
                                   const ffbp_options& o,
                                   stream_ref s)
        : bp_backend(g, nbins, precision::accurate), d_options(o), d_stream(s)
    {
        const std::vector<float> table = ffbp_kernel_table(o);
        d_table = device_memory(table.size() * sizeof(float));
        copy_async(d_table.get(),
                   table.data(),
                   d_table.size(),
                   copy_kind::host_to_device,
                   s,
                   who);
        d_counter = device_memory(sizeof(unsigned long long));
        fill_bytes_async(d_counter.get(), 0, d_counter.size(), s, who);
        d_counter_host = pinned_memory(sizeof(unsigned long long));
        // The table's pageable source must outlive its copy.
        synchronize(s, who);
    }

    void run(const cfloat* pulses,
             const double* geometry,
             std::size_t npulses,
             cfloat* image) override
    {
        bp_prepared prep;
        if (!begin_run(pulses, geometry, npulses, image, prep))
            return;
        backprojection_factorized::stages_for(d_options, prep.pulses.size());
        // All slices' plans first: sizes for the buffers, one upload.
        std::vector<ffbp_plan> plans;
        for (long long iz = 0; iz < d_grid.nz; ++iz)
            plans.push_back(ffbp_make_plan(
                prep.pulses, d_grid, d_layout.z + double(iz) * d_grid.dz, d_options));
        std::vector<ffbp_polar> nodes;
        long long most = 0;
        for (const ffbp_plan& p : plans) {
            for (const auto& level : p.levels)
                nodes.insert(nodes.end(), level.begin(), level.end());
            most = std::max(most, ffbp_max_level_samples(p));
        }
        const std::size_t pulse_bytes = prep.pulses.size() * sizeof(bp_pulse);
        const std::size_t node_bytes = nodes.size() * sizeof(ffbp_polar);
        const std::size_t level_bytes = static_cast<std::size_t>(most) * sizeof(ffbp_cf);
        if (d_pulses.size() < pulse_bytes || d_nodes.size() < node_bytes ||
            d_level[0].size() < level_bytes) {
            // Growing: queued work may still read the old buffers.
            synchronize(d_stream, who);
            if (d_pulses.size() < pulse_bytes)
                d_pulses = device_memory(pulse_bytes);
            if (d_nodes.size() < node_bytes)
                d_nodes = device_memory(node_bytes);
            if (d_level[0].size() < level_bytes) {
                d_level[0] = device_memory(level_bytes);
                d_level[1] = device_memory(level_bytes);
            }
        }
        // Pageable sources: the copies have taken them when they return.
        copy_async(d_pulses.get(),
                   prep.pulses.data(),
                   pulse_bytes,
                   copy_kind::host_to_device,
                   d_stream,
                   who);
        copy_async(d_nodes.get(),
                   nodes.data(),
                   node_bytes,
                   copy_kind::host_to_device,
                   d_stream,
                   who);
        const auto* dp = d_pulses.as<const bp_pulse>();
        const auto* data = reinterpret_cast<const float*>(pulses);
        const long long nbins = static_cast<long long>(d_nbins);
        const cudaStream_t st = native(d_stream);
        ffbp_count_nonfinite<<<unsigned(prep.pulses.size()),
                               elementwise_threads,
                               0,
                               st>>>(dp, data, nbins, d_counter.as<unsigned long long>());
        GPURADAR_CUDA_CHECK_LAUNCH(who, "ffbp_count_nonfinite");

        const ffbp_kernels kern = ffbp_kernels_in(d_table.as<const float>(), d_options);
        const ffbp_polar* dn = d_nodes.as<const ffbp_polar>();
        image_grid_view gv{ d_grid.x0, d_grid.y0, d_grid.dx,
                            d_grid.dy, d_grid.nx, d_grid.ny };
        for (long long iz = 0; iz < d_grid.nz; ++iz) {
            const ffbp_plan& p = plans[iz];
            ffbp_cf* level[2] = { d_level[0].as<ffbp_cf>(), d_level[1].as<ffbp_cf>() };
            const ffbp_polar* lv = dn;
            ffbp_stage0_kernel<<<elementwise_blocks(p.level_samples[0]),
                                 elementwise_threads,
                                 0,
                                 st>>>(lv,
                                       int(p.levels[0].size()),
                                       p.level_samples[0],
                                       dp,
                                       data,
                                       nbins,
                                       p.kt,
                                       p.zp,
                                       level[0]);
            GPURADAR_CUDA_CHECK_LAUNCH(who, "ffbp_stage0_kernel");
            ffbp_with_taps(
                d_options.order_range, d_options.order_angle, [&](auto rt, auto at) {
                    constexpr int R = decltype(rt)::value, A = decltype(at)::value;
                    int cur = 0;
                    for (std::size_t k = 1; k < p.levels.size(); ++k) {
                        const ffbp_polar* children = lv;
                        lv += p.levels[k - 1].size();
                        ffbp_merge_kernel<R, A><<<elementwise_blocks(p.level_samples[k]),
                                                  elementwise_threads,
                                                  0,
                                                  st>>>(lv,
                                                        int(p.levels[k].size()),
                                                        p.level_samples[k],
                                                        children,
                                                        level[cur],
                                                        kern,
                                                        p.kt,
                                                        p.zp,
                                                        level[1 - cur]);
                        GPURADAR_CUDA_CHECK_LAUNCH(who, "ffbp_merge_kernel");
                        cur = 1 - cur;
                    }
                    ffbp_pixel_kernel<R, A>
                        <<<elementwise_blocks(std::size_t(d_grid.nx * d_grid.ny)),
                           elementwise_threads,
                           0,
                           st>>>(
                            lv,
                            int(p.levels.back().size()),
                            level[cur],
                            kern,
                            p.kt,
                            gv,
                            p.zp,
                            reinterpret_cast<float*>(image + iz * d_grid.nx * d_grid.ny));
                    GPURADAR_CUDA_CHECK_LAUNCH(who, "ffbp_pixel_kernel");
                });
            dn = lv + p.levels.back().size();
        }
    }

    void run_host_pulses(const cfloat* host_pulses,
                         const double* geometry,
                         std::size_t npulses,
                         cfloat* image) override
    {
        const std::size_t bytes = npulses * d_nbins * sizeof(cfloat);
        if (d_host_copy.size() < bytes) {
            synchronize(d_stream, who);
            d_host_copy = device_memory(bytes);
        }
        if (bytes)
            copy_async(d_host_copy.get(),
                       host_pulses,
                       bytes,
                       copy_kind::host_to_device,
                       d_stream,
                       who);
        // Returns when the pulses have been copied (the contract of run_host_pulses).
        synchronize(d_stream, who);
        run(d_host_copy.as<const cfloat>(), geometry, npulses, image);
    }

    std::size_t nonfinite_samples() const override
    {
        copy_async(d_counter_host.get(),
                   d_counter.get(),
                   sizeof(unsigned long long),
                   copy_kind::device_to_host,
                   d_stream,
                   who);
        synchronize(d_stream, who);
        return std::size_t(*d_counter_host.as<unsigned long long>());
    }

private:
    const ffbp_options d_options;
    const stream_ref d_stream;
    device_memory d_table;
    device_memory d_counter;
    pinned_memory d_counter_host;
    device_memory d_pulses, d_nodes, d_host_copy;
    device_memory d_level[2];
};

} // namespace

std::unique_ptr<backprojection> make_backprojection_factorized_cuda(const image_grid& g,
                                                                    std::size_t nbins,
                                                                    const ffbp_options& o,
                                                                    stream_ref s)
{
    return std::make_unique<backprojection_factorized_cuda>(g, nbins, o, s);
}

} // namespace gpuradar::kernels::detail
