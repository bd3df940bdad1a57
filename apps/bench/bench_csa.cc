/*
 * csa: chirp-scaling focusing of one block, raw echoes in device memory to the image in
 * device memory (CUDA), and the CPU twin on the host.
 *
 * Byte-count floor: CSA transforms along both axes twice (azimuth, range, range back,
 * azimuth back). The two azimuth FFT stages must each read and write the whole matrix at
 * least once when it does not fit in cache; the range stage (phase 1, FFT, phase 2,
 * inverse FFT, phase 3) works on one row at a time and can be one pass. So floor =
 * 3 x (read + write of the matrix) at the device-to-device copy bandwidth measured in
 * the same run. `pipeline_passes` is csa::passes(): what the backend makes when every
 * FFT is one pass (cuFFT may split long ones into more).
 */
#include "bench_pd_common.h"
#include "bench_stripmap.h"
#include <gpuradar/kernels/common/cpu_threads.h>
#include <gpuradar/kernels/sar/csa.h>
#include <algorithm>
#include <chrono>
#include <ctime>
#include <random>
#include <thread>

namespace gpuradar::bench {
namespace {

constexpr int floor_passes = 3;

using sar::bench_params;

struct shape {
    std::size_t nrange, naz;
};

} // namespace

GPURADAR_BENCH("csa/cuda")
{
    if (!pd::have_cuda("csa/cuda"))
        return;
    const auto props = kernels::current_device_properties();
    kernels::cuda_stream s;
    const std::vector<shape> shapes =
        opt.quick
            ? std::vector<shape>{ { 512, 1024 } }
            : std::vector<shape>{ { 2048, 4096 }, { 4096, 4096 }, { 16384, 16384 } };
    for (const auto& sh : shapes) {
        const std::size_t n = sh.nrange * sh.naz, bytes = n * sizeof(kernels::cfloat);
        const double copy = pd::copy_gb_per_s(bytes, s, opt.repeats);
        const std::size_t before = kernels::device_memory_in_use();
        auto raw = pd::random_device(n, s);
        kernels::device_memory image(bytes);
        auto f = kernels::csa::make(
            kernels::backend::cuda, bench_params(sh.nrange), sh.naz, {}, s.ref());
        const double ms = pd::time_ms(s, opt.repeats, [&] {
            f->run(raw.as<kernels::cfloat>(), image.as<kernels::cfloat>());
        });
        const std::size_t used = kernels::device_memory_in_use() - before;
        const double floor_ms = floor_passes * 2.0 * double(bytes) / (copy * 1e6);
        json_line("csa/cuda")
            .field("device", props.name)
            .field("nrange", static_cast<long long>(sh.nrange))
            .field("naz", static_cast<long long>(sh.naz))
            .field("bytes", static_cast<long long>(bytes))
            .field("ms", ms)
            .field("copy_gb_per_s", copy)
            .field("floor_passes", static_cast<long long>(floor_passes))
            .field("pipeline_passes", static_cast<long long>(f->passes()))
            .field("floor_ms", floor_ms)
            .field("fraction_of_floor", floor_ms / ms)
            .field("device_bytes_with_raw_and_image", static_cast<long long>(used))
            .field("device_bytes_over_raw", double(used) / double(bytes))
            .emit();
    }
}

GPURADAR_BENCH("csa/cpu")
{
    const std::size_t nrange = opt.quick ? 512 : 4096, naz = opt.quick ? 1024 : 4096;
    const std::size_t n = nrange * naz;
    std::vector<kernels::cfloat> raw(n), image(n);
    std::mt19937 rng(1);
    std::normal_distribution<float> g(0.0f, 1.0f);
    for (auto& v : raw)
        v = kernels::cfloat(g(rng), g(rng));
    auto f = kernels::csa::make(kernels::backend::cpu, bench_params(nrange), naz, {});
    const int repeats = std::max(1, std::min(opt.repeats, 5));
    f->run(raw.data(), image.data()); // first touch of the image pages
    // Wall time, and the process's CPU time: on a shared machine the latter shows the
    // work done when other jobs stretch the former.
    std::vector<double> t, cpu;
    for (int i = 0; i < repeats; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        const std::clock_t c0 = std::clock();
        f->run(raw.data(), image.data());
        cpu.push_back(1e3 * double(std::clock() - c0) / CLOCKS_PER_SEC);
        t.push_back(std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - t0)
                        .count());
    }
    json_line("csa/cpu")
        .field("nrange", static_cast<long long>(nrange))
        .field("naz", static_cast<long long>(naz))
        .field("threads", static_cast<long long>(kernels::cpu_threads()))
        .field("ms", median(t))
        .field("ms_min", *std::min_element(t.begin(), t.end()))
        .field("ms_max", *std::max_element(t.begin(), t.end()))
        .field("cpu_ms", median(cpu))
        .emit();
}

} // namespace gpuradar::bench
