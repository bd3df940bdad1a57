/*
 * CPU twin of fast factorized backprojection: the plan and per-sample maths of
 * backprojection_factorized_backends.h, each level's samples spread over the CPU pool's
 * threads (cpu_threads.h). Every sample is written by one thread from the level below
 * only, so the image is bit for bit the same at any thread count.
 */
#include "common/cpu/row_pool.h"
#include "sar/backprojection_factorized_backends.h"
#include <algorithm>
#include <cmath>
#include <vector>

namespace gpuradar::kernels::detail {
namespace {

//! Samples per pool task: ~0.1 ms of work at the cheapest level, few tasks per level.
constexpr std::size_t samples_per_task = 4096;

class backprojection_factorized_cpu final : public bp_backend
{
public:
    backprojection_factorized_cpu(const image_grid& g,
                                  std::size_t nbins,
                                  const ffbp_options& o)
        : bp_backend(g, nbins, precision::accurate),
          d_options(o),
          d_table(ffbp_kernel_table(o))
    {
    }

    void run(const cfloat* pulses,
             const double* geometry,
             std::size_t npulses,
             cfloat* image) override
    {
        bp_prepared prep;
        if (!begin_run(pulses, geometry, npulses, image, prep))
            return;
        // Throws naming `stages` before anything is touched.
        backprojection_factorized::stages_for(d_options, prep.pulses.size());
        count_nonfinite(pulses, prep);
        const float* data = reinterpret_cast<const float*>(pulses);
        for (long long iz = 0; iz < d_grid.nz; ++iz) {
            const double zp = d_layout.z + double(iz) * d_grid.dz;
            const ffbp_plan plan = ffbp_make_plan(prep.pulses, d_grid, zp, d_options);
            ffbp_with_taps(
                d_options.order_range, d_options.order_angle, [&](auto r, auto a) {
                    form_slice<decltype(r)::value, decltype(a)::value>(
                        plan, prep, data, image + iz * d_grid.nx * d_grid.ny);
                });
        }
    }

    void run_host_pulses(const cfloat* host_pulses,
                         const double* geometry,
                         std::size_t npulses,
                         cfloat* image) override
    {
        run(host_pulses, geometry, npulses, image);
    }

private:
    //! Counts the non-finite samples (NaN or Inf in either part) of the usable pulses;
    //! stage 0 reads each as 0.
    void count_nonfinite(const cfloat* pulses, const bp_prepared& prep)
    {
        std::size_t n = 0;
        for (const bp_pulse& p : prep.pulses) {
            const cfloat* q = pulses + std::size_t(p.index) * d_nbins;
            for (std::size_t k = 0; k < d_nbins; ++k)
                n += !(std::isfinite(q[k].real()) && std::isfinite(q[k].imag()));
        }
        d_nonfinite += n;
    }

    template <typename F>
    static void for_samples(long long n, F&& fn)
    {
        const std::size_t tasks =
            (static_cast<std::size_t>(n) + samples_per_task - 1) / samples_per_task;
        parallel_rows(tasks, 1, ~0u, [&](std::size_t t0, std::size_t t1, unsigned) {
            const long long s0 = static_cast<long long>(t0 * samples_per_task);
            const long long s1 =
                std::min<long long>(n, static_cast<long long>(t1 * samples_per_task));
            for (long long s = s0; s < s1; ++s)
                fn(s);
        });
    }

    template <int OR, int OA>
    void form_slice(const ffbp_plan& plan,
                    const bp_prepared& prep,
                    const float* data,
                    cfloat* image)
    {
        const long long most = ffbp_max_level_samples(plan);
        d_level[0].resize(static_cast<std::size_t>(most));
        d_level[1].resize(static_cast<std::size_t>(most));
        const ffbp_kernels kern = ffbp_kernels_in(d_table.data(), d_options);
        const long long nbins = static_cast<long long>(d_nbins);
        {
            const auto& nodes = plan.levels[0];
            ffbp_cf* out = d_level[0].data();
            for_samples(plan.level_samples[0], [&](long long s) {
                out[s] = ffbp_stage0_sample(nodes.data(),
                                            int(nodes.size()),
                                            s,
                                            prep.pulses.data(),
                                            data,
                                            nbins,
                                            plan.kt,
                                            plan.zp);
            });
        }
        int cur = 0;
        for (std::size_t lv = 1; lv < plan.levels.size(); ++lv) {
            const auto& nodes = plan.levels[lv];
            const auto& children = plan.levels[lv - 1];
            const ffbp_cf* in = d_level[cur].data();
            ffbp_cf* out = d_level[1 - cur].data();
            for_samples(plan.level_samples[lv], [&](long long s) {
                out[s] = ffbp_merge_sample<OR, OA>(nodes.data(),
                                                   int(nodes.size()),
                                                   s,
                                                   children.data(),
                                                   in,
                                                   kern,
                                                   plan.kt,
                                                   plan.zp);
            });
            cur = 1 - cur;
        }
        const auto& top = plan.levels.back();
        const ffbp_cf* in = d_level[cur].data();
        const image_grid& g = d_grid;
        for_samples(g.nx * g.ny, [&](long long k) {
            const long long iy = k / g.nx, ix = k % g.nx;
            const ffbp_cf v = ffbp_pixel<OR, OA>(top.data(),
                                                 int(top.size()),
                                                 in,
                                                 kern,
                                                 plan.kt,
                                                 g.x0 + double(ix) * g.dx,
                                                 g.y0 + double(iy) * g.dy,
                                                 plan.zp);
            image[k] += cfloat(v.re, v.im);
        });
    }

    const ffbp_options d_options;
    const std::vector<float> d_table;
    std::vector<ffbp_cf> d_level[2]; // the level being read and the one being written
};

} // namespace

std::unique_ptr<backprojection> make_backprojection_factorized_cpu(const image_grid& g,
                                                                   std::size_t nbins,
                                                                   const ffbp_options& o)
{
    return std::make_unique<backprojection_factorized_cpu>(g, nbins, o);
}

} // namespace gpuradar::kernels::detail
