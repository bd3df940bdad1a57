/* Phase-history autofocus sums on the GPU: the CPU twin's terms and sums, in double.
 * image(): one thread per pixel over a chunk of pulses, the chunks' partial sums then
 * added in chunk order; project() and target echoes: one block per output value, the
 * threads' partial sums reduced in shared memory. Host in, host out. */
#include "common/cuda/cuda_check.h"
#include "common/cuda/launch.h"
#include "sar/pulse_autofocus_backends.h"
#include <algorithm>
#include <vector>

namespace gpuradar::kernels::detail {
namespace {

constexpr const char* who = "pulse_autofocus";
constexpr int threads = 256;
//! Pulses per chunk of image(): enough chunks to fill the GPU for a few thousand pixels.
constexpr std::size_t image_chunk = 64;

using cdouble = std::complex<double>;

template <pulse_autofocus::interpolator I>
__global__ void form_kernel(const float* __restrict__ pulses,
                            const double* __restrict__ geometry,
                            const int* __restrict__ pixels,
                            const double* __restrict__ sinc_table,
                            pulse_autofocus::grid g,
                            std::size_t npulses,
                            std::size_t nbins,
                            std::size_t npixels,
                            float2* __restrict__ d,
                            float2* __restrict__ u,
                            float* __restrict__ b)
{
    const std::size_t total = npulses * npixels;
    const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
    for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
         i += stride) {
        const std::size_t n = i / npixels, p = i % npixels;
        const double px = g.x0 + g.dx * pixels[2 * p + 1];
        const double py = g.y0 + g.dy * pixels[2 * p];
        const pha_term t = pha_make_term<I>(
            pulses + 2 * n * nbins, nbins, geometry + 6 * n, px, py, g.z, sinc_table);
        d[i] = make_float2(t.d_re, t.d_im);
        u[i] = make_float2(t.u_re, t.u_im);
        b[i] = t.b;
    }
}

// partial[chunk, p] = sum over the chunk's pulses n of rot[n] D[n, p].
__global__ void image_kernel(const float2* __restrict__ d,
                             const double2* __restrict__ rot,
                             std::size_t npulses,
                             std::size_t npixels,
                             double2* __restrict__ partial)
{
    const std::size_t p = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (p >= npixels)
        return;
    const std::size_t n0 = std::size_t(blockIdx.y) * image_chunk;
    const std::size_t n1 = min(npulses, n0 + image_chunk);
    double re = 0.0, im = 0.0;
    for (std::size_t n = n0; n < n1; ++n) {
        const float2 v = d[n * npixels + p];
        const double2 r = rot[n];
        re += r.x * double(v.x) - r.y * double(v.y);
        im += r.x * double(v.y) + r.y * double(v.x);
    }
    partial[std::size_t(blockIdx.y) * npixels + p] = make_double2(re, im);
}

__global__ void chunk_sum_kernel(const double2* __restrict__ partial,
                                 std::size_t nchunks,
                                 std::size_t npixels,
                                 double2* __restrict__ out)
{
    const std::size_t p = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (p >= npixels)
        return;
    double re = 0.0, im = 0.0;
    for (std::size_t c = 0; c < nchunks; ++c) {
        re += partial[c * npixels + p].x;
        im += partial[c * npixels + p].y;
    }
    out[p] = make_double2(re, im);
}

// The block's sum of (re, im) into out (thread 0 writes).
__device__ void block_sum(double re, double im, double2* out)
{
    __shared__ double sre[threads], sim[threads];
    sre[threadIdx.x] = re;
    sim[threadIdx.x] = im;
    __syncthreads();
    for (int half = threads / 2; half > 0; half /= 2) {
        if (int(threadIdx.x) < half) {
            sre[threadIdx.x] += sre[threadIdx.x + half];
            sim[threadIdx.x] += sim[threadIdx.x + half];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0)
        *out = make_double2(sre[0], sim[0]);
}

// One block per pulse: y[n] = sum_p D[n, p] w[p].
__global__ void project_kernel(const float2* __restrict__ d,
                               const double2* __restrict__ w,
                               std::size_t npixels,
                               double2* __restrict__ y)
{
    const std::size_t n = blockIdx.x;
    double re = 0.0, im = 0.0;
    for (std::size_t p = threadIdx.x; p < npixels; p += threads) {
        const float2 v = d[n * npixels + p];
        const double2 x = w[p];
        re += double(v.x) * x.x - double(v.y) * x.y;
        im += double(v.x) * x.y + double(v.y) * x.x;
    }
    block_sum(re, im, &y[n]);
}

// One block per (pulse, target): g[t, n] (pulse_autofocus.h).
__global__ void echo_kernel(const float2* __restrict__ u,
                            const float* __restrict__ b,
                            const int* __restrict__ centres,
                            const int* __restrict__ start,
                            const int* __restrict__ window,
                            const double2* __restrict__ image,
                            std::size_t npulses,
                            std::size_t npixels,
                            double2* __restrict__ g)
{
    const std::size_t n = blockIdx.x, t = blockIdx.y;
    const std::size_t base = n * npixels;
    const std::size_t c = base + std::size_t(centres[t]);
    const float bc = b[c];
    double re = 0.0, im = 0.0;
    for (int k = start[t] + int(threadIdx.x); k < start[t + 1]; k += threads) {
        const std::size_t p = std::size_t(window[k]);
        const float w = pha_tri(b[base + p] - bc);
        if (w > 0.0f) {
            const float2 up = u[base + p];
            const double2 x = image[p];
            // w conj(U) x
            re += double(w) * (double(up.x) * x.x + double(up.y) * x.y);
            im += double(w) * (double(up.x) * x.y - double(up.y) * x.x);
        }
    }
    __shared__ double2 sum;
    block_sum(re, im, &sum);
    __syncthreads();
    if (threadIdx.x == 0) {
        const float2 uc = u[c];
        g[t * npulses + n] = make_double2(double(uc.x) * sum.x - double(uc.y) * sum.y,
                                          double(uc.x) * sum.y + double(uc.y) * sum.x);
    }
}

class pulse_autofocus_cuda final : public pulse_autofocus
{
public:
    pulse_autofocus_cuda(std::size_t npulses,
                         std::size_t nbins,
                         std::size_t npixels,
                         interpolator interp,
                         stream_ref s)
        : pulse_autofocus(npulses, nbins, npixels, interp),
          d_stream(s),
          d_nchunks((npulses + image_chunk - 1) / image_chunk),
          d_d(npulses * npixels * sizeof(float2)),
          d_u(npulses * npixels * sizeof(float2)),
          d_b(npulses * npixels * sizeof(float)),
          d_partial(d_nchunks * npixels * sizeof(double2)),
          d_pixel_values(npixels * sizeof(double2)),
          d_pulse_values(npulses * sizeof(double2))
    {
        if (interp == interpolator::sinc16) {
            const std::vector<double> table = pha_sinc_table();
            d_sinc_table = device_memory(table.size() * sizeof(double));
            upload(d_sinc_table, table.data(), d_sinc_table.size());
            // The host table is freed on return.
            GPURADAR_CUDA_CHECK(who, cudaStreamSynchronize(stream()));
        }
    }

    void image(const double* phi, cdouble* out) override
    {
        std::vector<cdouble> rot(d_npulses);
        for (std::size_t n = 0; n < d_npulses; ++n)
            rot[n] = std::polar(1.0, -phi[n]);
        upload(d_pulse_values, rot.data(), d_npulses * sizeof(double2));
        const dim3 grid(unsigned((d_npixels + threads - 1) / threads),
                        unsigned(d_nchunks));
        image_kernel<<<grid, threads, 0, stream()>>>(d_d.as<float2>(),
                                                     d_pulse_values.as<double2>(),
                                                     d_npulses,
                                                     d_npixels,
                                                     d_partial.as<double2>());
        GPURADAR_CUDA_CHECK_LAUNCH(who, "image_kernel");
        chunk_sum_kernel<<<grid.x, threads, 0, stream()>>>(
            d_partial.as<double2>(), d_nchunks, d_npixels, d_pixel_values.as<double2>());
        GPURADAR_CUDA_CHECK_LAUNCH(who, "chunk_sum_kernel");
        download(out, d_pixel_values, d_npixels * sizeof(double2));
    }

    void project(const cdouble* w, cdouble* y) override
    {
        upload(d_pixel_values, w, d_npixels * sizeof(double2));
        project_kernel<<<unsigned(d_npulses), threads, 0, stream()>>>(
            d_d.as<float2>(),
            d_pixel_values.as<double2>(),
            d_npixels,
            d_pulse_values.as<double2>());
        GPURADAR_CUDA_CHECK_LAUNCH(who, "project_kernel");
        download(y, d_pulse_values, d_npulses * sizeof(double2));
    }

protected:
    void form_terms(const cfloat* pulses,
                    const double* geometry,
                    const grid& g,
                    const std::int32_t* pixels) override
    {
        device_memory dp(d_npulses * d_nbins * sizeof(cfloat));
        device_memory dg(d_npulses * 6 * sizeof(double));
        device_memory dx(d_npixels * 2 * sizeof(std::int32_t));
        upload(dp, pulses, dp.size());
        upload(dg, geometry, dg.size());
        upload(dx, pixels, dx.size());
        const auto kernel = d_interp == interpolator::sinc16
                                ? form_kernel<interpolator::sinc16>
                                : form_kernel<interpolator::linear>;
        kernel<<<elementwise_blocks(d_npulses * d_npixels),
                 elementwise_threads,
                 0,
                 stream()>>>(dp.as<float>(),
                             dg.as<double>(),
                             dx.as<int>(),
                             d_sinc_table.as<double>(),
                             g,
                             d_npulses,
                             d_nbins,
                             d_npixels,
                             d_d.as<float2>(),
                             d_u.as<float2>(),
                             d_b.as<float>());
        GPURADAR_CUDA_CHECK_LAUNCH(who, "form_kernel");
        // The temporaries are freed on return: wait for the kernel first.
        GPURADAR_CUDA_CHECK(who, cudaStreamSynchronize(stream()));
    }

    void echoes(std::size_t ntargets,
                const std::int32_t* centres,
                const std::int32_t* start,
                const std::int32_t* window,
                const cdouble* img,
                cdouble* g) override
    {
        const std::size_t nwin = std::size_t(start[ntargets]);
        ensure(d_centres, ntargets * sizeof(int));
        ensure(d_start, (ntargets + 1) * sizeof(int));
        ensure(d_window, std::max<std::size_t>(1, nwin) * sizeof(int));
        ensure(d_g, ntargets * d_npulses * sizeof(double2));
        upload(d_centres, centres, ntargets * sizeof(int));
        upload(d_start, start, (ntargets + 1) * sizeof(int));
        if (nwin > 0)
            upload(d_window, window, nwin * sizeof(int));
        upload(d_pixel_values, img, d_npixels * sizeof(double2));
        echo_kernel<<<dim3(unsigned(d_npulses), unsigned(ntargets)),
                      threads,
                      0,
                      stream()>>>(d_u.as<float2>(),
                                  d_b.as<float>(),
                                  d_centres.as<int>(),
                                  d_start.as<int>(),
                                  d_window.as<int>(),
                                  d_pixel_values.as<double2>(),
                                  d_npulses,
                                  d_npixels,
                                  d_g.as<double2>());
        GPURADAR_CUDA_CHECK_LAUNCH(who, "echo_kernel");
        download(g, d_g, ntargets * d_npulses * sizeof(double2));
    }

private:
    cudaStream_t stream() const { return native(d_stream); }

    // Every call ends with a download (or a synchronisation), so the host sources
    // outlive their copies.
    void upload(device_memory& dst, const void* src, std::size_t bytes)
    {
        GPURADAR_CUDA_CHECK(
            who,
            cudaMemcpyAsync(dst.get(), src, bytes, cudaMemcpyHostToDevice, stream()));
    }
    void download(void* dst, const device_memory& src, std::size_t bytes)
    {
        GPURADAR_CUDA_CHECK(
            who,
            cudaMemcpyAsync(dst, src.get(), bytes, cudaMemcpyDeviceToHost, stream()));
        GPURADAR_CUDA_CHECK(who, cudaStreamSynchronize(stream()));
    }
    static void ensure(device_memory& m, std::size_t bytes)
    {
        if (m.size() < bytes)
            m = device_memory(bytes);
    }

    stream_ref d_stream;
    std::size_t d_nchunks;
    device_memory d_d, d_u, d_b, d_partial, d_pixel_values, d_pulse_values;
    device_memory d_centres, d_start, d_window, d_g;
    device_memory d_sinc_table; //!< sinc16's (pha_sinc_table), empty for linear
};

} // namespace

std::unique_ptr<pulse_autofocus>
make_pulse_autofocus_cuda(std::size_t npulses,
                          std::size_t nbins,
                          std::size_t npixels,
                          pulse_autofocus::interpolator interp,
                          stream_ref s)
{
    return std::make_unique<pulse_autofocus_cuda>(npulses, nbins, npixels, interp, s);
}

} // namespace gpuradar::kernels::detail
