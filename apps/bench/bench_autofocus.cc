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
#include <gpuradar/kernels/sar/pulse_autofocus.h>
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

/*
 * Phase-history autofocus (kernels::pulse_autofocus, pulse_autofocus.py): a BP-B-like
 * scene, a 4096^2 grid of 0.1 m pixels seen from a straight X-band pass 3 km off (2048
 * pulses of 4096 bins, random samples: the sums' cost does not depend on them), 16
 * targets on a 4 x 4 grid of the image, each a chip of 33^2 pixels whose window is the
 * whole chip. One PGA iteration is image() then target_echoes(); one entropy gradient
 * is image() then project(). Bytes per PGA iteration: D (8 bytes) for image(), U and
 * the bin (12 bytes) for the echoes, per term, plus the host copies (the chips' image
 * and the echoes, both ways); per gradient, D twice. Flops: double, 8 per term for
 * image() and project(), 10 for the echoes (the tri weight, a complex product scaled).
 * The CUDA run is made with both interpolators (linear, as backprojection reads pulses;
 * sinc16, as the stripmap autofocus does): they differ only in forming the terms
 * (`ms_form_terms`, once per run), not in an iteration's sums.
 */
struct phase_history_scene {
    std::size_t npulses, nbins, ntargets, chip_side;
    std::vector<kernels::cfloat> pulses;
    std::vector<double> geometry;
    std::vector<std::int32_t> pixels, centres, start, window;
    kernels::pulse_autofocus::grid grid;
};

phase_history_scene
phase_history(std::size_t n_image, std::size_t npulses, std::size_t nbins)
{
    constexpr std::size_t side = 33, per_axis = 4;
    phase_history_scene s{ npulses, nbins, per_axis * per_axis, side, {}, {}, {}, {}, {},
                           {},      {} };
    const double dx = 0.1, half = 0.5 * dx * double(n_image);
    s.grid = { -half, -half, dx, dx, 0.0 };
    std::mt19937 rng(11);
    std::normal_distribution<float> g(0.0f, 1.0f);
    s.pulses.resize(npulses * nbins);
    for (auto& v : s.pulses)
        v = kernels::cfloat(g(rng), g(rng));
    const double y = -3000.0, z = 1000.0, r_centre = std::hypot(y, z);
    for (std::size_t n = 0; n < npulses; ++n) {
        const double x = -300.0 + 600.0 * double(n) / double(npulses - 1);
        s.geometry.insert(s.geometry.end(),
                          { x, y, z, r_centre - 0.075 * double(nbins), 0.15, 9.6e9 });
    }
    s.start.push_back(0);
    for (std::size_t ty = 0; ty < per_axis; ++ty)
        for (std::size_t tx = 0; tx < per_axis; ++tx) {
            const std::size_t cy = (2 * ty + 1) * n_image / (2 * per_axis),
                              cx = (2 * tx + 1) * n_image / (2 * per_axis);
            s.centres.push_back(std::int32_t(s.pixels.size() / 2 + side * side / 2));
            for (std::size_t dy = 0; dy < side; ++dy)
                for (std::size_t dxp = 0; dxp < side; ++dxp) {
                    s.window.push_back(std::int32_t(s.pixels.size() / 2));
                    s.pixels.push_back(std::int32_t(cy + dy - side / 2));
                    s.pixels.push_back(std::int32_t(cx + dxp - side / 2));
                }
            s.start.push_back(std::int32_t(s.window.size()));
        }
    return s;
}

void run_phase_history(const char* name,
                       const std::string& device,
                       kernels::backend b,
                       std::size_t n_image,
                       std::size_t npulses,
                       int repeats,
                       const kernels::cuda_stream* stream,
                       kernels::pulse_autofocus::interpolator interp)
{
    const std::size_t nbins = 4096;
    const phase_history_scene s = phase_history(n_image, npulses, nbins);
    const std::size_t npixels = s.pixels.size() / 2, terms = npulses * npixels;
    auto pa =
        kernels::pulse_autofocus::make(b,
                                       npulses,
                                       nbins,
                                       npixels,
                                       stream ? stream->ref() : kernels::stream_ref(),
                                       interp);
    // Forming the terms is once per run (the interpolator's cost is all here); set_terms
    // waits for its stream, so host time is its time.
    const auto form_start = std::chrono::steady_clock::now();
    pa->set_terms(s.pulses.data(), s.geometry.data(), s.grid, s.pixels.data());
    const double form_ms = std::chrono::duration<double, std::milli>(
                               std::chrono::steady_clock::now() - form_start)
                               .count();
    std::vector<double> phi(npulses);
    for (std::size_t n = 0; n < npulses; ++n)
        phi[n] = 0.5 * std::sin(0.01 * double(n));
    std::vector<std::complex<double>> img(npixels), g(s.ntargets * npulses), y(npulses);
    auto pga = [&] {
        pa->image(phi.data(), img.data());
        pa->target_echoes(s.ntargets,
                          s.centres.data(),
                          s.start.data(),
                          s.window.data(),
                          img.data(),
                          g.data());
    };
    auto gradient = [&] {
        pa->image(phi.data(), img.data());
        pa->project(img.data(), y.data());
    };
    auto host_ms = [&](auto&& f) {
        std::vector<double> t;
        f();
        for (int i = 0; i < repeats; ++i) {
            const auto a = std::chrono::steady_clock::now();
            f();
            t.push_back(std::chrono::duration<double, std::milli>(
                            std::chrono::steady_clock::now() - a)
                            .count());
        }
        return median(t);
    };
    const double pga_ms = stream ? pd::time_ms(*stream, repeats, pga) : host_ms(pga);
    const double grad_ms =
        stream ? pd::time_ms(*stream, repeats, gradient) : host_ms(gradient);
    const double copies = double(2 * npixels + 2 * s.ntargets * npulses) * 16.0;
    const double pga_bytes = 20.0 * double(terms) + copies;
    const double grad_bytes = 16.0 * double(terms) + 4.0 * double(npixels) * 16.0;
    json_line(name)
        .field("device", device)
        .field("image", static_cast<long long>(n_image))
        .field("npulses", static_cast<long long>(npulses))
        .field("nbins", static_cast<long long>(nbins))
        .field("targets", static_cast<long long>(s.ntargets))
        .field("chip", static_cast<long long>(s.chip_side))
        .field("terms", static_cast<long long>(terms))
        .field("interpolator", kernels::pulse_autofocus::to_string(interp))
        .field("ms_form_terms", form_ms)
        .field("ms_per_pga_iteration", pga_ms)
        .field("pga_bytes", pga_bytes)
        .field("pga_gb_per_s", pga_bytes / (pga_ms * 1e6))
        .field("pga_gflop_per_s", 18.0 * double(terms) / (pga_ms * 1e6))
        .field("ms_per_entropy_gradient", grad_ms)
        .field("gradient_bytes", grad_bytes)
        .field("gradient_gb_per_s", grad_bytes / (grad_ms * 1e6))
        .emit();
}

} // namespace

GPURADAR_BENCH("autofocus/phase_history/cuda")
{
    if (!pd::have_cuda("autofocus/phase_history/cuda"))
        return;
    const auto props = kernels::current_device_properties();
    kernels::cuda_stream s;
    // linear: backprojection's interpolator (spotlight); sinc16: the stripmap autofocus'.
    for (auto interp : { kernels::pulse_autofocus::interpolator::linear,
                         kernels::pulse_autofocus::interpolator::sinc16 })
        run_phase_history("autofocus/phase_history/cuda",
                          props.name,
                          kernels::backend::cuda,
                          opt.quick ? 1024 : 4096,
                          opt.quick ? 256 : 2048,
                          std::max(5, opt.repeats / 5),
                          &s,
                          interp);
}

GPURADAR_BENCH("autofocus/phase_history/cpu")
{
    // 256 pulses: the same chips, an eighth of the aperture (the CPU twin is ~1000x
    // slower; the cost is linear in the pulses).
    run_phase_history("autofocus/phase_history/cpu",
                      "cpu",
                      kernels::backend::cpu,
                      opt.quick ? 1024 : 4096,
                      opt.quick ? 64 : 256,
                      std::max(1, opt.repeats / 20),
                      nullptr,
                      kernels::pulse_autofocus::interpolator::linear);
}

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
