/* Autofocus on the GPU (cuFFT): the steps of autofocus.h as the CPU twin takes them.
 * Sums over rows in double, one thread per column in row order; whole-image sums in
 * double, per block then added atomically. */
#include "common/cuda/cuda_check.h"
#include "common/cuda/cufft_plan.h"
#include "common/cuda/launch.h"
#include "sar/autofocus_backends.h"
#include <cuComplex.h>

namespace gpuradar::kernels::detail {
namespace {

constexpr const char* who = "autofocus";
constexpr int row_threads = 256;

// Copies `in` to `kept`, counting samples with a non-finite part.
__global__ void keep_kernel(const float2* __restrict__ in,
                            float2* __restrict__ kept,
                            std::size_t n,
                            unsigned long long* nonfinite)
{
    const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
    for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += stride) {
        const float2 v = in[i];
        kept[i] = v;
        if (!(isfinite(v.x) && isfinite(v.y)))
            atomicAdd(nonfinite, 1ull);
    }
}

// One block per row: the column of the row's largest |x|^2 (the first of equals), |x|^2
// rounded as the CPU twin rounds it (no fused multiply-add).
__global__ void
peak_kernel(const float2* __restrict__ image, pga_layout layout, int* peaks)
{
    __shared__ float best_p[row_threads];
    __shared__ int best_c[row_threads];
    float p = -1.0f;
    int c = 0;
    for (std::size_t k = threadIdx.x; k < layout.naz; k += blockDim.x) {
        const float2 v = image[layout.index(blockIdx.x, k)];
        const float q = __fadd_rn(__fmul_rn(v.x, v.x), __fmul_rn(v.y, v.y));
        if (q > p) {
            p = q;
            c = int(k);
        }
    }
    best_p[threadIdx.x] = p;
    best_c[threadIdx.x] = c;
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half /= 2) {
        if (int(threadIdx.x) < half) {
            const float q = best_p[threadIdx.x + half];
            const int k = best_c[threadIdx.x + half];
            if (q > best_p[threadIdx.x] ||
                (q == best_p[threadIdx.x] && k < best_c[threadIdx.x])) {
                best_p[threadIdx.x] = q;
                best_c[threadIdx.x] = k;
            }
        }
        __syncthreads();
    }
    if (threadIdx.x == 0)
        peaks[blockIdx.x] = best_c[0];
}

// scratch[r, c] = image[r, (c + peak[r]) mod naz]: each row's peak to column 0.
__global__ void gather_kernel(const float2* __restrict__ image,
                              const int* __restrict__ peaks,
                              float2* __restrict__ scratch,
                              pga_layout layout)
{
    const std::size_t naz = layout.naz, n = layout.nrange * naz;
    const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
    for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += stride) {
        const std::size_t r = i / naz, c = i % naz;
        scratch[i] = image[layout.index(r, (c + std::size_t(peaks[r])) % naz)];
    }
}

// One block per row: the row's mean phase step arg sum_n g[n+1] conj(g[n]) (double).
__global__ void
slope_kernel(const float2* __restrict__ g, std::size_t naz, double* slopes)
{
    __shared__ double re[row_threads], im[row_threads];
    const float2* row = g + std::size_t(blockIdx.x) * naz;
    double sr = 0.0, si = 0.0;
    for (std::size_t n = threadIdx.x; n + 1 < naz; n += blockDim.x) {
        const double ar = row[n + 1].x, ai = row[n + 1].y, br = row[n].x, bi = row[n].y;
        sr += ar * br + ai * bi;
        si += ai * br - ar * bi;
    }
    re[threadIdx.x] = sr;
    im[threadIdx.x] = si;
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half /= 2) {
        if (int(threadIdx.x) < half) {
            re[threadIdx.x] += re[threadIdx.x + half];
            im[threadIdx.x] += im[threadIdx.x + half];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0)
        slopes[blockIdx.x] = atan2(im[0], re[0]);
}

// g[r, n] times exp(-j slope[r] n) / naz (the inverse DFT's scale folded in).
__global__ void rotate_kernel(float2* __restrict__ g,
                              const double* __restrict__ slopes,
                              std::size_t nrange,
                              std::size_t naz)
{
    const std::size_t total = nrange * naz;
    const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
    const double scale = 1.0 / double(naz);
    for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
         i += stride) {
        const std::size_t r = i / naz, n = i % naz;
        double s, c;
        sincospi(2.0 * pga_centring_turns(slopes[r], n), &s, &c);
        const float fr = float(c * scale), fi = float(s * scale);
        const float2 v = g[i];
        g[i] = make_float2(v.x * fr - v.y * fi, v.x * fi + v.y * fr);
    }
}

// Per column c: sum_r |scratch[r, c]|^2 (double, rows in order).
__global__ void profile_kernel(const float2* __restrict__ g,
                               std::size_t nrange,
                               std::size_t naz,
                               double* profile)
{
    for (std::size_t c = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; c < naz;
         c += std::size_t(gridDim.x) * blockDim.x) {
        double s = 0.0;
        for (std::size_t r = 0; r < nrange; ++r) {
            const float2 v = g[r * naz + c];
            s += double(v.x) * v.x + double(v.y) * v.y;
        }
        profile[c] = s;
    }
}

// Columns outside the window around column 0 set to 0.
__global__ void window_kernel(float2* __restrict__ g,
                              std::size_t nrange,
                              std::size_t naz,
                              std::size_t width)
{
    const std::size_t total = nrange * naz;
    const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
    for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
         i += stride)
        if (!pga_in_window(i % naz, naz, width))
            g[i] = make_float2(0.0f, 0.0f);
}

// Per column n >= 1: sum_r g[r, n] conj(g[r, n-1]) (double, rows in order).
__global__ void sums_kernel(const float2* __restrict__ g,
                            std::size_t nrange,
                            std::size_t naz,
                            double2* sums)
{
    for (std::size_t n = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; n < naz;
         n += std::size_t(gridDim.x) * blockDim.x) {
        double sr = 0.0, si = 0.0;
        if (n > 0)
            for (std::size_t r = 0; r < nrange; ++r) {
                const float2 a = g[r * naz + n], b = g[r * naz + n - 1];
                sr += double(a.x) * b.x + double(a.y) * b.y;
                si += double(a.y) * b.x - double(a.x) * b.y;
            }
        sums[n] = make_double2(sr, si);
    }
}

// Every range line times factor[n] (exp(-j e(n)) / naz), in the caller's layout.
__global__ void correct_kernel(float2* __restrict__ g,
                               const float2* __restrict__ factor,
                               pga_layout layout)
{
    const std::size_t total = layout.nrange * layout.naz;
    const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
    for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
         i += stride) {
        const std::size_t n =
            layout.azimuth_contiguous ? i % layout.naz : i / layout.nrange;
        const float2 f = factor[n], v = g[i];
        g[i] = make_float2(v.x * f.x - v.y * f.y, v.x * f.y + v.y * f.x);
    }
}

// rows[r, n] = image[layout.index(r, n)] (contiguous rows), or the reverse (to_image).
__global__ void rows_kernel(const float2* __restrict__ from,
                            float2* __restrict__ to,
                            pga_layout layout,
                            bool to_image)
{
    const std::size_t total = layout.nrange * layout.naz;
    const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
    for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
         i += stride) {
        const std::size_t at = layout.index(i / layout.naz, i % layout.naz);
        if (to_image)
            to[at] = from[i];
        else
            to[i] = from[at];
    }
}

// out[r, n] = rows[r, n] * factor[n] (contiguous rows).
__global__ void scale_rows_kernel(const float2* __restrict__ rows,
                                  const float2* __restrict__ factor,
                                  float2* __restrict__ out,
                                  std::size_t total,
                                  std::size_t naz)
{
    const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
    for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
         i += stride) {
        const float2 f = factor[i % naz], v = rows[i];
        out[i] = make_float2(v.x * f.x - v.y * f.y, v.x * f.y + v.y * f.x);
    }
}

// *sum += the image's energy (entropy false) or entropy terms with p = |x|^2 / energy.
__global__ void image_sum_kernel(const float2* __restrict__ image,
                                 std::size_t total,
                                 bool entropy,
                                 double energy,
                                 double* sum)
{
    __shared__ double part[row_threads];
    double s = 0.0;
    const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
    for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
         i += stride) {
        const float2 v = image[i];
        s += entropy ? pga_entropy_term(v.x, v.y, energy)
                     : double(v.x) * v.x + double(v.y) * v.y;
    }
    part[threadIdx.x] = s;
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half /= 2) {
        if (int(threadIdx.x) < half)
            part[threadIdx.x] += part[threadIdx.x + half];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        atomicAdd(sum, part[0]);
}

// b = a times the entropy gradient's weight (ln p + 1), contiguous rows.
__global__ void weight_kernel(const float2* __restrict__ a,
                              float2* __restrict__ b,
                              std::size_t total,
                              double energy)
{
    const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
    for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
         i += stride) {
        const float2 v = a[i];
        const float w = pga_entropy_weight(v.x, v.y, energy);
        b[i] = make_float2(v.x * w, v.y * w);
    }
}

// Per column n: sum_r Im(a[r, n] conj(b[r, n])) (double, rows in order).
__global__ void gradient_kernel(const float2* __restrict__ a,
                                const float2* __restrict__ b,
                                std::size_t nrange,
                                std::size_t naz,
                                double* out)
{
    for (std::size_t n = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; n < naz;
         n += std::size_t(gridDim.x) * blockDim.x) {
        double s = 0.0;
        for (std::size_t r = 0; r < nrange; ++r) {
            const float2 x = a[r * naz + n], y = b[r * naz + n];
            s += double(x.y) * y.x - double(x.x) * y.y;
        }
        out[n] = s;
    }
}

class autofocus_cuda final : public autofocus
{
public:
    autofocus_cuda(std::size_t nrange, std::size_t naz, const options& o, stream_ref s)
        : autofocus(nrange, naz, o),
          d_stream(s),
          d_kept(nrange * naz * sizeof(float2)),
          d_scratch(nrange * naz * sizeof(float2)),
          d_peaks(nrange * sizeof(int)),
          d_slopes(nrange * sizeof(double)),
          d_columns(naz * sizeof(double2)),
          d_factor(naz * sizeof(float2)),
          d_count(sizeof(unsigned long long)),
          d_host(naz * sizeof(double2) + sizeof(unsigned long long)),
          d_layout{ nrange, naz, o.azimuth_contiguous },
          d_plan(int(naz), int(nrange), 1, int(naz), native(s), who),
          d_image_plan(int(naz),
                       int(nrange),
                       d_layout.stride(),
                       d_layout.distance(),
                       native(s),
                       who)
    {
    }

private:
    std::size_t total() const { return d_nrange * d_naz; }
    int blocks() const { return elementwise_blocks(total()); }
    cudaStream_t stream() const { return native(d_stream); }
    void fft(const cufft_plan_1d& plan, float2* data, int direction)
    {
        GPURADAR_CUFFT_CHECK(who,
                             cufftExecC2C(plan.get(),
                                          reinterpret_cast<cufftComplex*>(data),
                                          reinterpret_cast<cufftComplex*>(data),
                                          direction));
    }
    //! Copies `bytes` of device memory to the pinned host buffer and waits for it.
    void to_host(const void* from, std::size_t bytes)
    {
        GPURADAR_CUDA_CHECK(
            who,
            cudaMemcpyAsync(d_host.get(), from, bytes, cudaMemcpyDeviceToHost, stream()));
        GPURADAR_CUDA_CHECK(who, cudaStreamSynchronize(stream()));
    }

    std::size_t keep_input(const cfloat* in) override
    {
        GPURADAR_CUDA_CHECK(
            who, cudaMemsetAsync(d_count.get(), 0, sizeof(unsigned long long), stream()));
        keep_kernel<<<blocks(), elementwise_threads, 0, stream()>>>(
            reinterpret_cast<const float2*>(in),
            d_kept.as<float2>(),
            total(),
            d_count.as<unsigned long long>());
        GPURADAR_CUDA_CHECK_LAUNCH(who, "keep_kernel");
        to_host(d_count.get(), sizeof(unsigned long long));
        return std::size_t(*d_host.as<unsigned long long>());
    }

    void restore(cfloat* out) override
    {
        GPURADAR_CUDA_CHECK(who,
                            cudaMemcpyAsync(out,
                                            d_kept.get(),
                                            total() * sizeof(float2),
                                            cudaMemcpyDeviceToDevice,
                                            stream()));
        GPURADAR_CUDA_CHECK(who, cudaStreamSynchronize(stream()));
    }

    void centre(const cfloat* image, std::vector<double>& profile) override
    {
        const auto* img = reinterpret_cast<const float2*>(image);
        float2* g = d_scratch.as<float2>();
        peak_kernel<<<unsigned(d_nrange), row_threads, 0, stream()>>>(
            img, d_layout, d_peaks.as<int>());
        GPURADAR_CUDA_CHECK_LAUNCH(who, "peak_kernel");
        gather_kernel<<<blocks(), elementwise_threads, 0, stream()>>>(
            img, d_peaks.as<int>(), g, d_layout);
        GPURADAR_CUDA_CHECK_LAUNCH(who, "gather_kernel");
        fft(d_plan, g, CUFFT_INVERSE);
        slope_kernel<<<unsigned(d_nrange), row_threads, 0, stream()>>>(
            g, d_naz, d_slopes.as<double>());
        GPURADAR_CUDA_CHECK_LAUNCH(who, "slope_kernel");
        rotate_kernel<<<blocks(), elementwise_threads, 0, stream()>>>(
            g, d_slopes.as<double>(), d_nrange, d_naz);
        GPURADAR_CUDA_CHECK_LAUNCH(who, "rotate_kernel");
        fft(d_plan, g, CUFFT_FORWARD);
        profile_kernel<<<elementwise_blocks(d_naz), elementwise_threads, 0, stream()>>>(
            g, d_nrange, d_naz, d_columns.as<double>());
        GPURADAR_CUDA_CHECK_LAUNCH(who, "profile_kernel");
        to_host(d_columns.get(), d_naz * sizeof(double));
        const double* p = d_host.as<double>();
        profile.assign(p, p + d_naz);
    }

    void phase_sums(std::size_t width, std::vector<std::complex<double>>& sums) override
    {
        float2* g = d_scratch.as<float2>();
        window_kernel<<<blocks(), elementwise_threads, 0, stream()>>>(
            g, d_nrange, d_naz, width);
        GPURADAR_CUDA_CHECK_LAUNCH(who, "window_kernel");
        fft(d_plan, g, CUFFT_INVERSE);
        sums_kernel<<<elementwise_blocks(d_naz), elementwise_threads, 0, stream()>>>(
            g, d_nrange, d_naz, d_columns.as<double2>());
        GPURADAR_CUDA_CHECK_LAUNCH(who, "sums_kernel");
        to_host(d_columns.get(), d_naz * sizeof(double2));
        const double2* s = d_host.as<double2>();
        sums.resize(d_naz);
        for (std::size_t n = 0; n < d_naz; ++n)
            sums[n] = std::complex<double>(s[n].x, s[n].y);
    }

    void correct(cfloat* image, const std::vector<double>& phase) override
    {
        // exp(-j e(n)) / naz in double, rounded once, as the CPU twin
        auto* f = d_host.as<float2>();
        for (std::size_t n = 0; n < d_naz; ++n) {
            const auto v = std::polar(1.0 / static_cast<double>(d_naz), -phase[n]);
            f[n] = make_float2(float(v.real()), float(v.imag()));
        }
        GPURADAR_CUDA_CHECK(who,
                            cudaMemcpyAsync(d_factor.get(),
                                            f,
                                            d_naz * sizeof(float2),
                                            cudaMemcpyHostToDevice,
                                            stream()));
        auto* img = reinterpret_cast<float2*>(image);
        fft(d_image_plan, img, CUFFT_INVERSE);
        correct_kernel<<<blocks(), elementwise_threads, 0, stream()>>>(
            img, d_factor.as<float2>(), d_layout);
        GPURADAR_CUDA_CHECK_LAUNCH(who, "correct_kernel");
        fft(d_image_plan, img, CUFFT_FORWARD);
        // the pinned factors are reused by the next call: wait until they are copied
        GPURADAR_CUDA_CHECK(who, cudaStreamSynchronize(stream()));
    }

    // --- minimum entropy -------------------------------------------------------------
    void upload_factors(const std::vector<std::complex<double>>& factors)
    {
        auto* f = d_host.as<float2>();
        for (std::size_t n = 0; n < d_naz; ++n)
            f[n] = make_float2(float(factors[n].real()), float(factors[n].imag()));
        GPURADAR_CUDA_CHECK(who,
                            cudaMemcpyAsync(d_factor.get(),
                                            f,
                                            d_naz * sizeof(float2),
                                            cudaMemcpyHostToDevice,
                                            stream()));
    }

    double image_sum(const float2* image, bool entropy, double energy)
    {
        GPURADAR_CUDA_CHECK(
            who, cudaMemsetAsync(d_columns.get(), 0, sizeof(double), stream()));
        image_sum_kernel<<<blocks(), row_threads, 0, stream()>>>(
            image, total(), entropy, energy, d_columns.as<double>());
        GPURADAR_CUDA_CHECK_LAUNCH(who, "image_sum_kernel");
        to_host(d_columns.get(), sizeof(double));
        return *d_host.as<double>();
    }

    double keep_pulses(const cfloat* image) override
    {
        if (!d_pulses.get())
            d_pulses = device_memory(total() * sizeof(float2));
        float2* g = d_pulses.as<float2>();
        rows_kernel<<<blocks(), elementwise_threads, 0, stream()>>>(
            reinterpret_cast<const float2*>(image), g, d_layout, false);
        GPURADAR_CUDA_CHECK_LAUNCH(who, "rows_kernel");
        const double energy = image_sum(g, false, 0.0);
        fft(d_plan, g, CUFFT_INVERSE);
        upload_factors(std::vector<std::complex<double>>(d_naz, 1.0 / double(d_naz)));
        scale_rows_kernel<<<blocks(), elementwise_threads, 0, stream()>>>(
            g, d_factor.as<float2>(), g, total(), d_naz);
        GPURADAR_CUDA_CHECK_LAUNCH(who, "scale_rows_kernel");
        GPURADAR_CUDA_CHECK(who,
                            cudaStreamSynchronize(stream())); // pinned factors reused
        return energy;
    }

    double entropy(const cfloat* image, double energy) override
    {
        return image_sum(reinterpret_cast<const float2*>(image), true, energy);
    }

    void entropy_gradient(const cfloat* image,
                          double energy,
                          std::vector<double>& gradient) override
    {
        if (!d_weighted.get())
            d_weighted = device_memory(total() * sizeof(float2));
        float2* a = d_scratch.as<float2>();
        float2* b = d_weighted.as<float2>();
        rows_kernel<<<blocks(), elementwise_threads, 0, stream()>>>(
            reinterpret_cast<const float2*>(image), a, d_layout, false);
        GPURADAR_CUDA_CHECK_LAUNCH(who, "rows_kernel");
        weight_kernel<<<blocks(), elementwise_threads, 0, stream()>>>(
            a, b, total(), energy);
        GPURADAR_CUDA_CHECK_LAUNCH(who, "weight_kernel");
        fft(d_plan, a, CUFFT_INVERSE);
        fft(d_plan, b, CUFFT_INVERSE);
        gradient_kernel<<<elementwise_blocks(d_naz), elementwise_threads, 0, stream()>>>(
            a, b, d_nrange, d_naz, d_columns.as<double>());
        GPURADAR_CUDA_CHECK_LAUNCH(who, "gradient_kernel");
        to_host(d_columns.get(), d_naz * sizeof(double));
        const double* g = d_host.as<double>();
        const double k = -2.0 / (static_cast<double>(d_naz) * energy);
        gradient.resize(d_naz);
        for (std::size_t n = 0; n < d_naz; ++n)
            gradient[n] = k * g[n];
    }

    void apply_phase(const std::vector<double>& phase, cfloat* image) override
    {
        std::vector<std::complex<double>> factors(d_naz);
        for (std::size_t n = 0; n < d_naz; ++n)
            factors[n] = std::polar(1.0, -phase[n]);
        upload_factors(factors);
        float2* a = d_scratch.as<float2>();
        scale_rows_kernel<<<blocks(), elementwise_threads, 0, stream()>>>(
            d_pulses.as<float2>(), d_factor.as<float2>(), a, total(), d_naz);
        GPURADAR_CUDA_CHECK_LAUNCH(who, "scale_rows_kernel");
        fft(d_plan, a, CUFFT_FORWARD);
        rows_kernel<<<blocks(), elementwise_threads, 0, stream()>>>(
            a, reinterpret_cast<float2*>(image), d_layout, true);
        GPURADAR_CUDA_CHECK_LAUNCH(who, "rows_kernel");
        GPURADAR_CUDA_CHECK(who,
                            cudaStreamSynchronize(stream())); // pinned factors reused
    }

    stream_ref d_stream;
    device_memory d_kept, d_scratch, d_peaks, d_slopes, d_columns, d_factor, d_count;
    device_memory d_pulses, d_weighted; // entropy only: made on first use
    pinned_memory d_host;
    pga_layout d_layout;
    // scratch rows (azimuth contiguous) and the caller's image (its layout)
    cufft_plan_1d d_plan, d_image_plan;
};

} // namespace

std::unique_ptr<autofocus> make_autofocus_cuda(std::size_t nrange,
                                               std::size_t naz,
                                               const autofocus::options& o,
                                               stream_ref s)
{
    return std::make_unique<autofocus_cuda>(nrange, naz, o, s);
}

} // namespace gpuradar::kernels::detail
