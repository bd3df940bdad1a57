/* CUDA front-end corrections: a handful of simple passes over the CPI, in the CPU twin's
 * order, with fp64 sums (block tree reductions, one fp64 atomic per block for the I/Q
 * sums) so that both backends agree to float rounding. */
#include "common/cuda/cuda_check.h"
#include "common/cuda/launch.h"
#include "pulse_doppler/front_end_correction_backends.h"
#include "pulse_doppler/front_end_correction_math.h"
#include <cuda_runtime.h>
#include <vector>

namespace gpuradar::kernels::detail {
namespace {

constexpr const char* who = "gpuradar::pulse_framer (cuda front_end_correction)";

//! Threads of the reduction blocks: a power of two for the tree in block_sum.
constexpr int reduce_threads = 256;

// Sum of v over the block (every thread gets it). smem holds reduce_threads doubles.
__device__ double block_sum(double v, double* smem)
{
    smem[threadIdx.x] = v;
    __syncthreads();
    for (int s = reduce_threads / 2; s > 0; s /= 2) {
        if (threadIdx.x < s)
            smem[threadIdx.x] += smem[threadIdx.x + s];
        __syncthreads();
    }
    const double total = smem[0];
    __syncthreads(); // smem is reused by the next call
    return total;
}

// One block per pulse: sums[p] = sum over the pulse's samples (fp64).
__global__ void
pulse_sums_kernel(const float2* __restrict__ cpi, std::size_t nrange, double2* sums)
{
    __shared__ double smem[reduce_threads];
    const float2* x = cpi + std::size_t(blockIdx.x) * nrange;
    double re = 0, im = 0;
    for (std::size_t r = threadIdx.x; r < nrange; r += reduce_threads) {
        re += x[r].x;
        im += x[r].y;
    }
    re = block_sum(re, smem);
    im = block_sum(im, smem);
    if (threadIdx.x == 0)
        sums[blockIdx.x] = make_double2(re, im);
}

// The DC estimate of every pulse, in pulse order (the running mean is a recurrence):
// one thread, npulses steps of a few flops. The loads of the sums do not depend on the
// recurrence, so the unrolled loop issues them ahead instead of waiting on each in turn.
__global__ void dc_track_kernel(const double2* __restrict__ sums,
                                std::size_t npulses,
                                std::size_t nrange,
                                bool running,
                                double tau,
                                bool first,
                                double2* __restrict__ state,
                                float2* __restrict__ dc)
{
    double2 est = *state;
#pragma unroll 16
    for (std::size_t p = 0; p < npulses; ++p) {
        const double mr = sums[p].x / double(nrange), mi = sums[p].y / double(nrange);
        if (!running || (first && p == 0)) {
            est = make_double2(mr, mi);
        } else {
            est.x += (mr - est.x) / tau;
            est.y += (mi - est.y) / tau;
        }
        dc[p] = make_float2(static_cast<float>(est.x), static_cast<float>(est.y));
    }
    *state = est;
}

__global__ void subtract_dc_kernel(float2* cpi,
                                   std::size_t n,
                                   std::size_t nrange,
                                   const float2* __restrict__ dc)
{
    const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
    for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += stride) {
        const float2 d = dc[i / nrange];
        cpi[i] = make_float2(cpi[i].x - d.x, cpi[i].y - d.y);
    }
}

// Thread r: the CPI's mean pulse at range sample r (consecutive threads read consecutive
// samples), folded into M[r]; Mf[r] is M[r] in float for the subtraction.
__global__ void mean_pulse_kernel(const float2* __restrict__ cpi,
                                  std::size_t npulses,
                                  std::size_t nrange,
                                  double alpha,
                                  bool first,
                                  double2* mean_pulse,
                                  float2* mean_pulse_f)
{
    const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
    for (std::size_t r = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; r < nrange;
         r += stride) {
        double re = 0, im = 0;
        for (std::size_t p = 0; p < npulses; ++p) {
            re += cpi[p * nrange + r].x;
            im += cpi[p * nrange + r].y;
        }
        re /= double(npulses);
        im /= double(npulses);
        double2 m = mean_pulse[r];
        if (first) {
            m = make_double2(re, im);
        } else {
            m.x += alpha * (re - m.x);
            m.y += alpha * (im - m.y);
        }
        mean_pulse[r] = m;
        mean_pulse_f[r] = make_float2(static_cast<float>(m.x), static_cast<float>(m.y));
    }
}

__global__ void subtract_pulse_kernel(float2* cpi,
                                      std::size_t n,
                                      std::size_t nrange,
                                      const float2* __restrict__ mean_pulse_f)
{
    const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
    for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += stride) {
        const float2 m = mean_pulse_f[i % nrange];
        cpi[i] = make_float2(cpi[i].x - m.x, cpi[i].y - m.y);
    }
}

__global__ void
blank_kernel(float2* cpi, std::size_t npulses, std::size_t nrange, std::size_t gate)
{
    const std::size_t n = npulses * gate;
    const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
    for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += stride)
        cpi[(i / gate) * nrange + i % gate] = make_float2(0.0f, 0.0f);
}

// sums[0..2] += sum I^2, sum Q^2, sum IQ over the CPI (sums zeroed before the launch).
__global__ void
iq_sums_kernel(const float2* __restrict__ cpi, std::size_t n, double* sums)
{
    __shared__ double smem[reduce_threads];
    double ii = 0, qq = 0, iq = 0;
    const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
    for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += stride) {
        const double re = cpi[i].x, im = cpi[i].y;
        ii += re * re;
        qq += im * im;
        iq += re * im;
    }
    ii = block_sum(ii, smem);
    qq = block_sum(qq, smem);
    iq = block_sum(iq, smem);
    if (threadIdx.x == 0) {
        atomicAdd(sums + 0, ii);
        atomicAdd(sums + 1, qq);
        atomicAdd(sums + 2, iq);
    }
}

// Q' = a I + b Q with the matrix of the sums, or nothing when they are unusable (the
// same decision the host's report makes from the same sums).
__global__ void
iq_apply_kernel(float2* cpi, std::size_t n, const double* __restrict__ sums)
{
    iq_sums s;
    s.ii = sums[0];
    s.qq = sums[1];
    s.iq = sums[2];
    const iq_matrix m = iq_matrix_from(s);
    if (!m.ok)
        return;
    const float a = static_cast<float>(m.a), b = static_cast<float>(m.b);
    const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
    for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += stride) {
        const float2 v = cpi[i];
        cpi[i] = make_float2(v.x, a * v.x + b * v.y);
    }
}

class front_end_correction_cuda final : public front_end_correction
{
public:
    front_end_correction_cuda(const front_end_correction_config& cfg, stream_ref stream)
        : front_end_correction(cfg),
          d_stream(stream),
          d_pulse_sums(cfg.npulses * sizeof(double2)),
          d_dc(cfg.npulses * sizeof(float2)),
          d_dc_state(sizeof(double2)),
          d_mean_pulse(cfg.nrange * sizeof(double2)),
          d_mean_pulse_f(cfg.nrange * sizeof(float2))
    {
        // The first CPI overwrites both states without using them; zeroed all the same so
        // that no kernel ever reads uninitialised memory (compute-sanitizer's initcheck).
        const auto s = native(d_stream);
        GPURADAR_CUDA_CHECK(who,
                            cudaMemsetAsync(d_dc_state.get(), 0, d_dc_state.size(), s));
        GPURADAR_CUDA_CHECK(
            who, cudaMemsetAsync(d_mean_pulse.get(), 0, d_mean_pulse.size(), s));
    }

    void run(cfloat* cpi, std::size_t slot) override
    {
        const auto s = native(d_stream);
        auto* x = reinterpret_cast<float2*>(cpi);
        const std::size_t np = d_cfg.npulses, nr = d_cfg.nrange, n = np * nr;
        if (d_cfg.dc != dc_removal::off) {
            pulse_sums_kernel<<<static_cast<unsigned int>(np), reduce_threads, 0, s>>>(
                x, nr, d_pulse_sums.as<double2>());
            GPURADAR_CUDA_CHECK_LAUNCH(who, "pulse_sums_kernel");
            dc_track_kernel<<<1, 1, 0, s>>>(d_pulse_sums.as<double2>(),
                                            np,
                                            nr,
                                            d_cfg.dc == dc_removal::running,
                                            d_cfg.dc_time_constant,
                                            !d_have_dc,
                                            d_dc_state.as<double2>(),
                                            d_dc.as<float2>());
            GPURADAR_CUDA_CHECK_LAUNCH(who, "dc_track_kernel");
            subtract_dc_kernel<<<elementwise_blocks(n), elementwise_threads, 0, s>>>(
                x, n, nr, d_dc.as<float2>());
            GPURADAR_CUDA_CHECK_LAUNCH(who, "subtract_dc_kernel");
            d_have_dc = true;
        }
        if (d_cfg.leakage == leakage_suppression::mean_pulse) {
            mean_pulse_kernel<<<elementwise_blocks(nr), elementwise_threads, 0, s>>>(
                x,
                np,
                nr,
                d_cfg.leakage_alpha,
                !d_have_mean,
                d_mean_pulse.as<double2>(),
                d_mean_pulse_f.as<float2>());
            GPURADAR_CUDA_CHECK_LAUNCH(who, "mean_pulse_kernel");
            subtract_pulse_kernel<<<elementwise_blocks(n), elementwise_threads, 0, s>>>(
                x, n, nr, d_mean_pulse_f.as<float2>());
            GPURADAR_CUDA_CHECK_LAUNCH(who, "subtract_pulse_kernel");
            d_have_mean = true;
        } else if (d_cfg.leakage == leakage_suppression::blank) {
            const std::size_t nb = np * d_cfg.leakage_gate;
            blank_kernel<<<elementwise_blocks(nb), elementwise_threads, 0, s>>>(
                x, np, nr, d_cfg.leakage_gate);
            GPURADAR_CUDA_CHECK_LAUNCH(who, "blank_kernel");
        }
        if (!d_cfg.iq)
            return;
        while (d_slot_sums.size() <= slot) { // new slots: the first calls only
            d_slot_sums.emplace_back(3 * sizeof(double));
            d_host_sums.emplace_back(3 * sizeof(double));
        }
        double* sums = d_slot_sums[slot].as<double>();
        GPURADAR_CUDA_CHECK(who, cudaMemsetAsync(sums, 0, 3 * sizeof(double), s));
        iq_sums_kernel<<<elementwise_blocks(n), reduce_threads, 0, s>>>(x, n, sums);
        GPURADAR_CUDA_CHECK_LAUNCH(who, "iq_sums_kernel");
        iq_apply_kernel<<<elementwise_blocks(n), elementwise_threads, 0, s>>>(x, n, sums);
        GPURADAR_CUDA_CHECK_LAUNCH(who, "iq_apply_kernel");
        d_used = std::max(d_used, slot + 1);
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
    device_memory d_pulse_sums;   // double2 per pulse
    device_memory d_dc;           // float2 per pulse: the DC subtracted
    device_memory d_dc_state;     // double2: the running DC estimate
    bool d_have_dc = false;       // d_dc_state holds an estimate
    device_memory d_mean_pulse;   // double2 per range sample: M
    device_memory d_mean_pulse_f; // float2 per range sample: M as subtracted
    bool d_have_mean = false;
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
