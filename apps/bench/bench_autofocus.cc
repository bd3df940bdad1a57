/*
 * autofocus: phase-gradient autofocus of one image, image in device memory (CUDA) or on
 * the host (CPU twin), until it converges.
 *
 * Byte-count floor per iteration: the image (or its scratch copy) is traversed 22 times
 * (each read or each write of the whole matrix counts one): centring (peak search 1,
 * gather 2, inverse FFT 2, phase slope 1, rotation 2, FFT 2, intensity profile 1), the
 * phase sums (window 2, inverse FFT 2, neighbour products 1) and the correction (inverse
 * FFT 2, phase ramp 2, FFT 2), each FFT counted as one pass. The floor is those 22
 * traversals at the device-to-device copy rate of the same run (which counts a read
 * and a write). The host waits for the per-column sums each iteration (two small copies).
 *
 * The scene: point targets on every third range line, all blurred by one phase error
 * (a sinusoid of 2.5 rad and a quadratic of 6 rad at the aperture's ends: IRW x3 and
 * more), in noise: a line with a target is that blurred response, shifted.
 */
#include "bench_pd_common.h"
#include <gpuradar/kernels/sar/autofocus.h>
#include <chrono>
#include <cmath>
#include <complex>
#include <random>

namespace gpuradar::bench {
namespace {

constexpr int passes_per_iteration = 22;

//! nrange x naz blurred image, azimuth contiguous (see the file comment).
std::vector<kernels::cfloat> blurred_scene(std::size_t nrange, std::size_t naz)
{
    constexpr double pi = 3.14159265358979323846;
    std::vector<std::complex<double>> response(naz);
    for (std::size_t c = 0; c < naz; ++c) { // DFT of the blurred phase history, by hand
        std::complex<double> s = 0;
        for (std::size_t n = 0; n < naz; ++n) {
            const double x = (double(n) - double(naz) / 2) / (double(naz) / 2);
            const double e = 2.5 * std::sin(2 * pi * 2 * double(n) / double(naz) + 0.3) +
                             6 * x * x - 2 * pi * double((c * n) % naz) / double(naz);
            s += std::polar(1.0, e);
        }
        response[c] = s;
    }
    std::mt19937 rng(5);
    std::normal_distribution<float> noise(0.0f, 0.1f * std::sqrt(float(naz)));
    std::uniform_real_distribution<double> u(0.0, 1.0);
    std::vector<kernels::cfloat> image(nrange * naz);
    for (std::size_t r = 0; r < nrange; ++r) {
        const std::size_t k = std::size_t(u(rng) * double(naz)) % naz;
        const auto a = std::polar(10.0 * (1.0 + u(rng)), 2 * pi * u(rng));
        for (std::size_t c = 0; c < naz; ++c) {
            auto v = kernels::cfloat(noise(rng), noise(rng));
            if (r % 3 == 0)
                v += kernels::cfloat(a * response[(c + naz - k) % naz]);
            image[r * naz + c] = v;
        }
    }
    return image;
}

void emit(const char* name,
          const std::string& device,
          std::size_t n,
          double ms,
          const kernels::autofocus_result& r,
          double copy)
{
    const double bytes = double(n * n * sizeof(kernels::cfloat));
    json_line line(name);
    line.field("device", device)
        .field("nrange", static_cast<long long>(n))
        .field("naz", static_cast<long long>(n))
        .field("ms", ms)
        .field("iterations", static_cast<long long>(r.iterations))
        .field("converged", r.converged)
        .field("ms_per_iteration", ms / r.iterations);
    if (copy > 0) {
        const double floor = passes_per_iteration * bytes / (copy * 1e6);
        line.field("copy_gb_per_s", copy)
            .field("floor_ms_per_iteration", floor)
            .field("fraction_of_floor", floor / (ms / r.iterations));
    }
    line.emit();
}

} // namespace

GPURADAR_BENCH("autofocus/cuda")
{
    if (!pd::have_cuda("autofocus/cuda"))
        return;
    const auto props = kernels::current_device_properties();
    kernels::cuda_stream s;
    for (std::size_t n : opt.quick ? std::vector<std::size_t>{ 512 }
                                   : std::vector<std::size_t>{ 1024, 4096 }) {
        const auto host = blurred_scene(n, n);
        const double copy =
            pd::copy_gb_per_s(host.size() * sizeof(kernels::cfloat), s, opt.repeats);
        auto in = pd::to_device(host.data(), host.size(), s);
        kernels::device_memory out(in.size());
        auto pga = kernels::autofocus::make(kernels::backend::cuda, n, n, {}, s.ref());
        kernels::autofocus_result r;
        const double ms = pd::time_ms(s, std::max(3, opt.repeats / 10), [&] {
            r = pga->run(in.as<kernels::cfloat>(), out.as<kernels::cfloat>());
        });
        emit("autofocus/cuda", props.name, n, ms, r, copy);
    }
}

GPURADAR_BENCH("autofocus/cpu")
{
    const std::size_t n = opt.quick ? 256 : 1024;
    const auto image = blurred_scene(n, n);
    std::vector<kernels::cfloat> out(image.size());
    auto pga = kernels::autofocus::make(kernels::backend::cpu, n, n, {});
    kernels::autofocus_result r;
    std::vector<double> t;
    for (int i = 0; i < std::max(1, opt.repeats / 10); ++i) {
        const auto a = std::chrono::steady_clock::now();
        r = pga->run(image.data(), out.data());
        t.push_back(std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - a)
                        .count());
    }
    emit("autofocus/cpu", "cpu", n, median(t), r, 0.0);
}

} // namespace gpuradar::bench
