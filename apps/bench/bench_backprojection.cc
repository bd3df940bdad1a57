/*
 * Backprojection benchmarks: giga-backprojections per second (pixels x pulses / time) on
 * the CONVENTIONS.md workloads BP-A/B/C (airborne, 500 m altitude, X band) and BP-S
 * (spaceborne, ~800 km slant range, X band), each with its SER against an fp64
 * reference computed on the host on 4096 random pixels. CUDA: kernel time with the
 * pulses already on the device, and end-to-end time with the pulses streamed from
 * pinned host memory (overlapped) or copied first (serial), image back to the host.
 * Block: the whole GNU Radio flowgraph (host vector sources -> backprojection block ->
 * null sink), pulses through the device buffer, one image per aperture; one aperture
 * (with the flowgraph start) and the steady rate over several.
 * Volume (BP-V): the BP-A pulses onto a volume of height slices, the voxel-pulse rate
 * beside the flat-grid rate of the same pulses and grid.
 * Factorized (FFBP): the same workloads formed by fast factorized backprojection at
 * several accuracy settings beside direct backprojection in the same run: time, speed-up
 * over direct, SER against direct's whole image (the SER-vs-speed curve) and against
 * the fp64 reference; CUDA against the direct fast kernel, the CPU twin against the
 * direct CPU twin; each with its polar samples per pixel and byte floor. FFBP scaling:
 * the BP-C geometry from 2048^2 to 16384^2 at the accurate settings.
 */
#include "bench_gr_blocks.h"
#include "bench_pd_common.h"
#include "bench_registry.h"
#include <gnuradio/blocks/head.h>
#include <gnuradio/blocks/vector_source.h>
#include <gnuradio/gpuradar/backprojection.h>
#include <gnuradio/gpuradar/device_buffer.h>
#include <gnuradio/top_block.h>
#include <gpuradar/kernels/common/cpu_threads.h>
#include <gpuradar/kernels/common/cuda_resources.h>
#include <gpuradar/kernels/common/device_split.h>
#include <gpuradar/kernels/sar/backprojection.h>
#include <gpuradar/kernels/sar/backprojection_factorized.h>
#include <gpuradar/kernels/sar/sar_sim.h>
#include <chrono>
#include <cmath>
#include <cstring>
#include <random>
#include <thread>

namespace gpuradar::bench {
namespace {

using kernels::backprojection;
using kernels::cfloat;
using kernels::image_grid;
namespace sim = kernels::sar_sim;
using prec = backprojection::precision;

constexpr double pi = 3.14159265358979323846;
//! Pixels on which the fp64 reference is computed (random, fixed seed).
constexpr std::size_t ser_pixels = 4096;

struct workload {
    const char* name;
    image_grid grid;
    sim::phase_history h;
};

/*
 * Airborne stripmap-like geometry: straight track at 500 m altitude, 9.6 GHz, 1 GHz
 * bandwidth, 0.15 m bins and pixels, gate centred on the scene, 32 point targets plus
 * noise. The scene's near edge is 1 km across track.
 */
workload airborne(const char* name, long long n, std::size_t npulses, std::size_t nbins)
{
    workload w{ name, {}, {} };
    constexpr double spacing = 0.15, altitude = 500, aperture = 200, near = 1000;
    w.grid.nx = w.grid.ny = n;
    w.grid.dx = w.grid.dy = spacing;
    w.grid.x0 = w.grid.y0 = -0.5 * double(n - 1) * spacing;
    const double y_track = -(near + 0.5 * double(n) * spacing);
    sim::radar r;
    r.f0 = 9.6e9;
    r.bandwidth = 1e9;
    r.dr = spacing;
    r.nbins = nbins;
    r.gate_centre = sim::vec3{ 0, 0, 0 };
    r.sinc_half_width = 32;
    r.noise_sigma = 0.1;
    std::mt19937 rng(5);
    std::uniform_real_distribution<double> u(w.grid.x0, -w.grid.x0);
    std::vector<sim::point_target> t(32);
    for (auto& p : t)
        p = { { u(rng), u(rng), 0 }, { 1, 0 } };
    w.h = sim::simulate(sim::straight_path({ -0.5 * aperture, y_track, altitude },
                                           { 0.5 * aperture, y_track, altitude },
                                           npulses),
                        t,
                        r);
    return w;
}

// Spaceborne: 600 km altitude, 530 km across track (~800 km slant), 9.65 GHz, 1 m pixels,
// 0.5 m bins, a 12 km synthetic aperture.
workload spaceborne(const char* name, long long n, std::size_t npulses, std::size_t nbins)
{
    workload w{ name, {}, {} };
    constexpr double spacing = 1.0, aperture = 12e3;
    w.grid.nx = w.grid.ny = n;
    w.grid.dx = w.grid.dy = spacing;
    w.grid.x0 = w.grid.y0 = -0.5 * double(n - 1) * spacing;
    sim::radar r;
    r.f0 = 9.65e9;
    r.bandwidth = 300e6;
    r.dr = 0.5;
    r.nbins = nbins;
    r.gate_centre = sim::vec3{ 0, 0, 0 };
    r.sinc_half_width = 32;
    r.noise_sigma = 0.1;
    std::mt19937 rng(6);
    std::uniform_real_distribution<double> u(w.grid.x0, -w.grid.x0);
    std::vector<sim::point_target> t(32);
    for (auto& p : t)
        p = { { u(rng), u(rng), 0 }, { 1, 0 } };
    w.h = sim::simulate(sim::straight_path({ -0.5 * aperture, -530e3, 600e3 },
                                           { 0.5 * aperture, -530e3, 600e3 },
                                           npulses),
                        t,
                        r);
    return w;
}

workload make_workload(const std::string& name, bool quick)
{
    // --quick: same geometry, fewer pixels and pulses (smoke test).
    const long long q = quick ? 8 : 1;
    if (name == "BP-A")
        return airborne("BP-A", 1024 / q, 1024 / q, 1024);
    if (name == "BP-B")
        return airborne("BP-B", 4096 / q, 4096 / q, 4096);
    if (name == "BP-C")
        return airborne("BP-C", 8192 / q, 2048 / q, 8192);
    return spaceborne("BP-S", 4096 / q, 4096 / q, 8192);
}

//! SER (dB) of `img` against the fp64 definition on ser_pixels random pixels.
double ser_db(const workload& w, const std::vector<cfloat>& img)
{
    const auto& g = w.grid;
    const std::size_t nb = w.h.nbins;
    std::mt19937_64 rng(42);
    std::uniform_int_distribution<long long> px(0, g.nx * g.ny - 1);
    std::vector<long long> pixels(ser_pixels);
    for (auto& p : pixels)
        p = px(rng);
    const unsigned nt = std::max(1u, std::thread::hardware_concurrency());
    std::vector<double> sig(nt), err(nt);
    auto work = [&](unsigned t) {
        for (std::size_t k = t; k < pixels.size(); k += nt) {
            const long long ix = pixels[k] % g.nx, iy = pixels[k] / g.nx;
            const double x = g.x0 + double(ix) * g.dx, y = g.y0 + double(iy) * g.dy,
                         z = g.z;
            std::complex<double> acc = 0;
            for (std::size_t i = 0; i < w.h.npulses; ++i) {
                const double* q = &w.h.geometry[6 * i];
                const double R =
                    std::sqrt((x - q[0]) * (x - q[0]) + (y - q[1]) * (y - q[1]) +
                              (z - q[2]) * (z - q[2]));
                const double b = (R - q[3]) / q[4];
                if (!(b >= 0 && b <= double(nb - 1)))
                    continue;
                const std::size_t j = std::min<std::size_t>(std::size_t(b), nb - 2);
                const double f = b - double(j);
                const cfloat* p = &w.h.pulses[i * nb + j];
                const std::complex<double> v =
                    (1 - f) * std::complex<double>(p[0]) + f * std::complex<double>(p[1]);
                const double turns = 2 * q[5] * R / backprojection::speed_of_light;
                acc += v * std::polar(1.0, 2 * pi * (turns - std::round(turns)));
            }
            sig[t] += std::norm(acc);
            err[t] += std::norm(std::complex<double>(img[pixels[k]]) - acc);
        }
    };
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < nt; ++t)
        pool.emplace_back(work, t);
    for (auto& th : pool)
        th.join();
    double s = 0, e = 0;
    for (unsigned t = 0; t < nt; ++t) {
        s += sig[t];
        e += err[t];
    }
    return e > 0 ? 10 * std::log10(s / e) : INFINITY;
}

double seconds_since(std::chrono::steady_clock::time_point t0)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/*!
 * The CPU twin at one thread and at the pool's count (cpu_threads, --cpu-threads), so
 * that one run gives the scaling on the machine.
 */
void bench_cpu(const std::string& name, const options& opt)
{
    const workload w = make_workload(name, opt.quick);
    const double bps = double(w.grid.nx * w.grid.ny) * double(w.h.npulses);
    const int pool = kernels::cpu_threads();
    std::vector<int> thread_counts = { 1 };
    if (pool > 1)
        thread_counts.push_back(pool);
    for (const int threads : thread_counts) {
        kernels::set_cpu_threads(threads);
        for (prec p : { prec::fast, prec::accurate }) {
            auto bp = backprojection::make(kernels::backend::cpu, w.grid, w.h.nbins, p);
            std::vector<cfloat> img(static_cast<std::size_t>(w.grid.nx * w.grid.ny));
            const int reps = opt.quick ? 1 : std::min(opt.repeats, 3);
            std::vector<double> t;
            for (int r = 0; r < reps; ++r) {
                std::fill(img.begin(), img.end(), cfloat(0, 0));
                const auto t0 = std::chrono::steady_clock::now();
                bp->run(w.h.pulses.data(), w.h.geometry.data(), w.h.npulses, img.data());
                t.push_back(seconds_since(t0));
            }
            const double s = median(t);
            json_line("backprojection/" + name + "/cpu/" + backprojection::to_string(p))
                .field("nx", w.grid.nx)
                .field("pulses", static_cast<long long>(w.h.npulses))
                .field("nbins", static_cast<long long>(w.h.nbins))
                .field("threads", static_cast<long long>(threads))
                .field("time_ms", 1e3 * s)
                .field("gbps", bps / s * 1e-9)
                .field("ser_db", ser_db(w, img))
                .emit();
        }
    }
    kernels::set_cpu_threads(pool);
}

/*!
 * Device-to-device copy bandwidth (GB/s, bytes read + written) of one copy of `src` on
 * `stream`: the bandwidth reference of a run.
 */
double d2d_copy_gbs(const kernels::device_memory& src, kernels::cuda_stream& stream)
{
    using namespace kernels;
    device_memory copy(src.size());
    cuda_event a, b;
    a.record(stream.ref());
    copy_async(copy.get(),
               src.get(),
               src.size(),
               copy_kind::device_to_device,
               stream.ref(),
               "bench");
    b.record(stream.ref());
    b.synchronize();
    return 2.0 * double(src.size()) / (cuda_event::elapsed_ms(a, b) * 1e-3) * 1e-9;
}

void bench_cuda(const std::string& name, const options& opt)
{
    if (!kernels::cuda_available()) {
        json_line("backprojection/" + name + "/cuda")
            .field("skipped", kernels::cuda_unavailable_reason())
            .emit();
        return;
    }
    using namespace kernels;
    const workload w = make_workload(name, opt.quick);
    const std::size_t npix = static_cast<std::size_t>(w.grid.nx * w.grid.ny);
    const std::size_t pulse_bytes = w.h.pulses.size() * sizeof(cfloat);
    const double bps = double(npix) * double(w.h.npulses);
    cuda_stream stream;
    device_memory d_pulses(pulse_bytes), d_img(npix * sizeof(cfloat));
    pinned_memory h_pulses(pulse_bytes), h_img(npix * sizeof(cfloat));
    std::memcpy(h_pulses.get(), w.h.pulses.data(), pulse_bytes);
    copy_async(d_pulses.get(),
               h_pulses.get(),
               pulse_bytes,
               copy_kind::host_to_device,
               stream.ref(),
               "bench");
    const double copy_gbs = d2d_copy_gbs(d_pulses, stream);
    cuda_event a, b;
    const int reps = opt.quick ? 2 : std::min(opt.repeats, 5);
    for (prec p : { prec::fast, prec::accurate }) {
        auto bp = backprojection::make(backend::cuda, w.grid, w.h.nbins, p, stream.ref());
        // Warm-up and the image for SER: one run into a zeroed image.
        fill_bytes_async(d_img.get(), 0, d_img.size(), stream.ref(), "bench");
        bp->run(
            d_pulses.as<cfloat>(), w.h.geometry.data(), w.h.npulses, d_img.as<cfloat>());
        const std::vector<cfloat> img = pd::to_host<cfloat>(d_img, npix, stream);
        std::vector<double> kt, e2e, serial;
        for (int r = 0; r < reps; ++r) {
            a.record(stream.ref());
            bp->run(d_pulses.as<cfloat>(),
                    w.h.geometry.data(),
                    w.h.npulses,
                    d_img.as<cfloat>());
            b.record(stream.ref());
            b.synchronize();
            kt.push_back(cuda_event::elapsed_ms(a, b));
            // End to end, overlapped: pulses streamed from pinned memory in blocks while
            // the kernel works on the previous block, image back to pinned host memory.
            auto t0 = std::chrono::steady_clock::now();
            fill_bytes_async(d_img.get(), 0, d_img.size(), stream.ref(), "bench");
            bp->run_host_pulses(h_pulses.as<cfloat>(),
                                w.h.geometry.data(),
                                w.h.npulses,
                                d_img.as<cfloat>());
            copy_async(h_img.get(),
                       d_img.get(),
                       d_img.size(),
                       copy_kind::device_to_host,
                       stream.ref(),
                       "bench");
            stream.synchronize("bench");
            e2e.push_back(1e3 * seconds_since(t0));
            // Serial: all pulses over PCIe, then the kernel, then the image back.
            t0 = std::chrono::steady_clock::now();
            copy_async(d_pulses.get(),
                       h_pulses.get(),
                       pulse_bytes,
                       copy_kind::host_to_device,
                       stream.ref(),
                       "bench");
            fill_bytes_async(d_img.get(), 0, d_img.size(), stream.ref(), "bench");
            bp->run(d_pulses.as<cfloat>(),
                    w.h.geometry.data(),
                    w.h.npulses,
                    d_img.as<cfloat>());
            copy_async(h_img.get(),
                       d_img.get(),
                       d_img.size(),
                       copy_kind::device_to_host,
                       stream.ref(),
                       "bench");
            stream.synchronize("bench");
            serial.push_back(1e3 * seconds_since(t0));
        }
        const double ms = median(kt);
        const auto props = current_device_properties();
        json_line("backprojection/" + name + "/cuda/" + backprojection::to_string(p))
            .field("device", props.name)
            .field("nx", w.grid.nx)
            .field("pulses", static_cast<long long>(w.h.npulses))
            .field("nbins", static_cast<long long>(w.h.nbins))
            .field("kernel_ms", ms)
            .field("gbps", bps / (ms * 1e-3) * 1e-9)
            .field("ser_db", ser_db(w, img))
            .field("e2e_overlapped_ms", median(e2e))
            .field("e2e_serial_ms", median(serial))
            .field("pulse_mbytes", double(pulse_bytes) / 1e6)
            .field("image_mbytes", double(npix * sizeof(cfloat)) / 1e6)
            .field("d2d_copy_gbs", copy_gbs)
            .emit();
    }
}

//! Median kernel time (ms) of `reps` runs of all the workload's pulses into `img`.
double median_kernel_ms(kernels::backprojection& bp,
                        const workload& w,
                        const kernels::device_memory& pulses,
                        kernels::device_memory& img,
                        kernels::cuda_stream& stream,
                        int reps)
{
    kernels::cuda_event a, b;
    std::vector<double> t;
    for (int r = 0; r < reps; ++r) {
        a.record(stream.ref());
        bp.run(pulses.as<cfloat>(), w.h.geometry.data(), w.h.npulses, img.as<cfloat>());
        b.record(stream.ref());
        b.synchronize();
        t.push_back(kernels::cuda_event::elapsed_ms(a, b));
    }
    return median(t);
}

/*
 * The block in a flowgraph: pulses from host memory as a receiver's driver hands them
 * over (the e2e benches' host_replay_source: copied by several threads, tuning's
 * buffer_cpis apertures per output buffer), geometry from a host vector source (repeated,
 * cut by a head block, its edge holding 4 apertures: the block integrates only pulses
 * whose geometry has arrived), images to a host sink that notes when each image arrives.
 * On CUDA the pulses cross PCIe through the device buffer and the image is copied out
 * once per aperture. The steady time per image is the spacing of the arrivals over the
 * second half of the images (the first carry the flowgraph start: buffer allocation,
 * pulses and images, pinned and on the device, and the first touch of every buffer
 * page): the start's cost varies by more than an image takes, so a difference of whole
 * runs cannot resolve it.
 */
struct block_run {
    double total_s;
    double steady_ms_per_image; // -1 with fewer than 3 images
};

block_run run_block_flowgraph(const workload& w,
                              const std::vector<std::uint8_t>& geo,
                              prec p,
                              const char* backend,
                              std::size_t apertures,
                              const source_tuning& tuning,
                              gr::gpuradar::device_buffer::stats& st,
                              bool with_block = true)
{
    const unsigned nx = unsigned(w.grid.nx), ny = unsigned(w.grid.ny);
    const std::size_t geo_item = backprojection::geometry_length * sizeof(double);
    const std::size_t n = apertures * w.h.npulses;
    auto tb = gr::make_top_block("bp_block");
    // The pulses as a receiver's driver hands them over: copied by several threads, an
    // aperture (tuning.buffer_cpis of them) per output buffer.
    source_tuning pulse_tuning = tuning;
    pulse_tuning.record_cpi_ends = false;
    auto src = gnuradio::make_block_sptr<pd::host_replay_source>(
        w.h.pulses, n, w.h.npulses, pulse_tuning, 0.0, 1, w.h.nbins);
    auto gsrc = gr::blocks::vector_source_b::make(geo, true, unsigned(geo_item));
    auto gsrc_head = gr::blocks::head::make(geo_item, n);
    auto bp = gr::gpuradar::backprojection::make(unsigned(w.h.nbins),
                                                 nx,
                                                 ny,
                                                 w.grid.x0,
                                                 w.grid.y0,
                                                 w.grid.dx,
                                                 w.grid.dy,
                                                 w.grid.z,
                                                 unsigned(w.h.npulses),
                                                 "restart",
                                                 backprojection::to_string(p),
                                                 {},
                                                 backend);
    auto sink = gnuradio::make_block_sptr<pd::host_sink>(nx * sizeof(cfloat), ny);
    const std::size_t pulse_bytes = w.h.nbins * sizeof(cfloat);
    gsrc->set_min_output_buffer(long(4 * w.h.npulses));
    gsrc_head->set_min_output_buffer(long(4 * w.h.npulses));
    tb->connect(gsrc, 0, gsrc_head, 0);
    // Without the block: the sources alone, each aperture's pulses timed at the sink.
    auto pulse_sink = gnuradio::make_block_sptr<pd::host_sink>(pulse_bytes, w.h.npulses);
    auto geo_sink = gnuradio::make_block_sptr<pd::host_sink>(geo_item, 0);
    if (with_block) {
        tb->connect(src, 0, bp, 0);
        tb->connect(gsrc_head, 0, bp, 1);
        tb->connect(bp, 0, sink, 0);
    } else {
        tb->connect(src, 0, pulse_sink, 0);
        tb->connect(gsrc_head, 0, geo_sink, 0);
    }
    gr::gpuradar::device_buffer::reset_transfer_stats();
    const auto t0 = std::chrono::steady_clock::now();
    tb->run();
    const double s = seconds_since(t0);
    st = gr::gpuradar::device_buffer::transfer_stats();
    const auto& arrivals = with_block ? sink->arrivals() : pulse_sink->arrivals();
    // Images from a third of the way in (the first carry the flowgraph's start and the
    // first touch of its buffers) to the last but one: the last arrives about half a
    // spacing after the one before, without the wait the others queue behind, so
    // counting it overstates the rate.
    return { s, arrivals.steady_ms_fit(apertures / 3, apertures - 2) };
}

//! Median kernel time (ms) of one aperture of `w` with the pulses on the device.
double block_kernel_ms(const workload& w, prec p, const options& opt)
{
    kernels::cuda_stream stream;
    const auto d_pulses = pd::to_device(w.h.pulses.data(), w.h.pulses.size(), stream);
    kernels::device_memory img(std::size_t(w.grid.voxels()) * sizeof(cfloat));
    auto bp =
        backprojection::make(kernels::backend::cuda, w.grid, w.h.nbins, p, stream.ref());
    // The first run is the warm-up.
    median_kernel_ms(*bp, w, d_pulses, img, stream, 1);
    return median_kernel_ms(*bp, w, d_pulses, img, stream, opt.quick ? 1 : 3);
}

void bench_block(const std::string& name, const options& opt)
{
    const bool cuda = kernels::cuda_available();
    const char* backend = cuda ? "cuda" : "cpu";
    if (!cuda && name != "BP-A")
        return; // the CPU takes minutes on the larger workloads
    const workload w = make_workload(name, opt.quick);
    std::vector<std::uint8_t> geo(w.h.geometry.size() * sizeof(double));
    std::memcpy(geo.data(), w.h.geometry.data(), geo.size());
    // The first third of the images is not timed: the first pass through the edges'
    // rings also faults in their fresh pages (up to 1 GB of host image buffer for BP-C).
    // Enough images after it that a call handing over a few at once (a host that fell
    // behind, or images arriving in bunches) moves the fitted spacing little.
    const std::size_t apertures = opt.quick ? 4 : 24;
    const int reps = opt.quick ? 1 : 3;
    const double bp_per_image = double(w.grid.nx * w.grid.ny) * double(w.h.npulses);
    for (prec p : { prec::fast, prec::accurate }) {
        std::vector<double> total, spacing;
        gr::gpuradar::device_buffer::stats st;
        for (int r = 0; r < reps; ++r) {
            const block_run b =
                run_block_flowgraph(w, geo, p, backend, apertures, opt.source, st);
            total.push_back(b.total_s);
            spacing.push_back(1e-3 * b.steady_ms_per_image);
        }
        const double steady = median(spacing);
        // The same sources into a sink: the rate the host feeds the block at.
        std::vector<double> source_spacing;
        gr::gpuradar::device_buffer::stats no_device_edges;
        for (int r = 0; r < reps; ++r)
            source_spacing.push_back(
                run_block_flowgraph(
                    w, geo, p, backend, apertures, opt.source, no_device_edges, false)
                    .steady_ms_per_image);
        // CUDA: the kernel alone on the same pulses, the rate the block is held to.
        const double kernel_ms = cuda ? block_kernel_ms(w, p, opt) : 0.0;
        json_line("backprojection/block/" + name + "/" + backend + "/" +
                  backprojection::to_string(p))
            .field("nx", w.grid.nx)
            .field("pulses", static_cast<long long>(w.h.npulses))
            .field("nbins", static_cast<long long>(w.h.nbins))
            .field("apertures", static_cast<long long>(apertures))
            .field("flowgraph_ms", 1e3 * median(total))
            .field("steady_ms_per_image", 1e3 * steady)
            .field("steady_ms_min",
                   1e3 * *std::min_element(spacing.begin(), spacing.end()))
            .field("steady_ms_max",
                   1e3 * *std::max_element(spacing.begin(), spacing.end()))
            .field("steady_gbps", steady > 0 ? bp_per_image / steady * 1e-9 : 0.0)
            .field("sources_alone_ms_per_image", median(source_spacing))
            .field("kernel_ms_per_image", kernel_ms)
            .field("kernel_gbps", kernel_ms > 0 ? bp_per_image / kernel_ms * 1e-6 : 0.0)
            .field("block_vs_kernel", steady > 0 ? 1e-3 * kernel_ms / steady : 0.0)
            .field("h2d_bytes_per_image",
                   static_cast<long long>(st.h2d_bytes / apertures))
            .field("d2h_bytes_per_image",
                   static_cast<long long>(st.d2h_bytes / apertures))
            .emit();
    }
}

/*
 * BP-V: the BP-A aperture onto nz height slices 0.5 m apart around the ground (the same
 * per-voxel work as a pixel of the flat grid). Reports the voxel-pulse rate, the flat
 * grid's rate measured alongside, their ratio, and the SER of the lowest slice against
 * the fp64 reference at its height.
 */
void bench_volume_cuda(const options& opt)
{
    const std::string name = "backprojection/BP-V/cuda";
    if (!kernels::cuda_available()) {
        json_line(name).field("skipped", kernels::cuda_unavailable_reason()).emit();
        return;
    }
    using namespace kernels;
    const workload w = make_workload("BP-A", opt.quick);
    const long long nz = opt.quick ? 4 : 16;
    image_grid vol = w.grid;
    vol.nz = nz;
    vol.dz = 0.5;
    vol.z = -0.5 * double(nz - 1) * vol.dz;
    const std::size_t npix = static_cast<std::size_t>(w.grid.nx * w.grid.ny);
    cuda_stream stream;
    const auto d_pulses = pd::to_device(w.h.pulses.data(), w.h.pulses.size(), stream);
    device_memory d_flat(npix * sizeof(cfloat)), d_vol(npix * nz * sizeof(cfloat));
    const int reps = opt.quick ? 2 : std::min(opt.repeats, 5);
    for (prec p : { prec::fast, prec::accurate }) {
        auto flat =
            backprojection::make(backend::cuda, w.grid, w.h.nbins, p, stream.ref());
        auto volume =
            backprojection::make(backend::cuda, vol, w.h.nbins, p, stream.ref());
        // Warm-up; the volume's first run (into zeros) gives the SER of slice 0.
        fill_bytes_async(d_vol.get(), 0, d_vol.size(), stream.ref(), "bench");
        volume->run(
            d_pulses.as<cfloat>(), w.h.geometry.data(), w.h.npulses, d_vol.as<cfloat>());
        flat->run(
            d_pulses.as<cfloat>(), w.h.geometry.data(), w.h.npulses, d_flat.as<cfloat>());
        const std::vector<cfloat> slice0 = pd::to_host<cfloat>(d_vol, npix, stream);
        workload at_slice0 = w;
        at_slice0.grid.z = vol.z;
        const double flat_ms = median_kernel_ms(*flat, w, d_pulses, d_flat, stream, reps);
        const double vol_ms = median_kernel_ms(*volume, w, d_pulses, d_vol, stream, reps);
        const double flat_rate = double(npix) * double(w.h.npulses) / (flat_ms * 1e-3);
        const double vol_rate =
            double(npix) * double(nz) * double(w.h.npulses) / (vol_ms * 1e-3);
        json_line(name + "/" + backprojection::to_string(p))
            .field("device", current_device_properties().name)
            .field("nx", w.grid.nx)
            .field("nz", nz)
            .field("pulses", static_cast<long long>(w.h.npulses))
            .field("kernel_ms", vol_ms)
            .field("gvps", vol_rate * 1e-9)
            .field("flat_kernel_ms", flat_ms)
            .field("flat_gbps", flat_rate * 1e-9)
            .field("volume_vs_flat", vol_rate / flat_rate)
            .field("slice0_ser_db", ser_db(at_slice0, slice0))
            .emit();
    }
}

/*!
 * SER (dB) of `img` against `ref` over every pixel: how far a multi-device image is from
 * the single-device one.
 */
double ser_against_db(const std::vector<cfloat>& ref, const std::vector<cfloat>& img)
{
    double s = 0, e = 0;
    for (std::size_t k = 0; k < ref.size(); ++k) {
        s += std::norm(std::complex<double>(ref[k]));
        e += std::norm(std::complex<double>(img[k]) - std::complex<double>(ref[k]));
    }
    return e > 0 ? 10 * std::log10(s / e) : INFINITY;
}

/*!
 * The image split across devices (issue 16): one aperture backprojected with the device
 * list {0}, {0, 1} and {0, 1, 2, 3} (as many as the machine has), pulses and image on
 * device 0. Times are wall-clock from run() to every share done (the multi-device run()
 * returns then; the one-device run is followed by a stream synchronize), so the pulse
 * broadcast and the image gather are inside them. Reports per device count the rate,
 * the speed-up over one device of the same run, the SER against fp64 and against the
 * one-device image. On a one-GPU machine the list {0, 0} exercises the split on the
 * one device instead (`same_gpu`: true, no speed-up expected).
 */
void bench_devices(const std::string& name, const options& opt)
{
    const std::string key = "backprojection/devices/" + name;
    if (!kernels::cuda_available()) {
        json_line(key).field("skipped", kernels::cuda_unavailable_reason()).emit();
        return;
    }
    using namespace kernels;
    const int count = cuda_device_count();
    std::vector<std::vector<int>> lists = { { 0 } };
    if (count == 1)
        lists.push_back({ 0, 0 });
    for (int n = 2; n <= count; n *= 2) {
        std::vector<int> l(static_cast<std::size_t>(n));
        for (int d = 0; d < n; ++d)
            l[static_cast<std::size_t>(d)] = d;
        lists.push_back(l);
    }
    const workload w = make_workload(name, opt.quick);
    const std::size_t npix = static_cast<std::size_t>(w.grid.nx * w.grid.ny);
    const double bps = double(npix) * double(w.h.npulses);
    cuda_stream stream;
    const auto d_pulses = pd::to_device(w.h.pulses.data(), w.h.pulses.size(), stream);
    device_memory d_img(npix * sizeof(cfloat));
    const double copy_gbs = d2d_copy_gbs(d_pulses, stream);
    const int reps = opt.quick ? 2 : std::min(opt.repeats, 5);
    for (prec p : { prec::fast, prec::accurate }) {
        double one_ms = 0;
        std::vector<cfloat> one_img;
        for (const auto& devices : lists) {
            auto bp = backprojection::make(
                backend::cuda, w.grid, w.h.nbins, p, stream.ref(), devices);
            auto run_once = [&] {
                fill_bytes_async(d_img.get(), 0, d_img.size(), stream.ref(), "bench");
                stream.synchronize("bench");
                const auto t0 = std::chrono::steady_clock::now();
                bp->run(d_pulses.as<cfloat>(),
                        w.h.geometry.data(),
                        w.h.npulses,
                        d_img.as<cfloat>());
                stream.synchronize("bench");
                return 1e3 * seconds_since(t0);
            };
            run_once(); // warm-up (first touch of every share's buffers)
            std::vector<double> t;
            for (int r = 0; r < reps; ++r)
                t.push_back(run_once());
            const std::vector<cfloat> img = pd::to_host<cfloat>(d_img, npix, stream);
            const double ms = median(t);
            std::string list;
            for (const int d : devices)
                list += (list.empty() ? "" : ",") + std::to_string(d);
            auto line = json_line(key + "/" + backprojection::to_string(p));
            line.field("device", current_device_properties().name)
                .field("visible_devices", static_cast<long long>(count))
                .field("devices", list)
                .field("same_gpu", devices.size() == 2 && devices[0] == devices[1])
                .field("nx", w.grid.nx)
                .field("pulses", static_cast<long long>(w.h.npulses))
                .field("wall_ms", ms)
                .field("gbps", bps / (ms * 1e-3) * 1e-9)
                .field("ser_db", ser_db(w, img))
                .field("d2d_copy_gbs", copy_gbs);
            if (one_img.empty()) {
                one_ms = ms;
                one_img = img;
            } else {
                line.field("speedup", one_ms / ms)
                    .field("ser_vs_one_device_db", ser_against_db(one_img, img));
            }
            line.emit();
        }
    }
}

// ---------------------------------------------------------------- factorized (FFBP)

struct ffbp_setting {
    const char* name;
    kernels::ffbp_options o;
};

//! The SER-vs-speed curve's points, from the most accurate to the fastest.
std::vector<ffbp_setting> ffbp_settings()
{
    auto make = [](int order_r, int order_a, double os_r, double os_a) {
        kernels::ffbp_options o;
        o.order_range = order_r;
        o.order_angle = order_a;
        o.oversample_range = os_r;
        o.oversample_angle = os_a;
        return o;
    };
    return { { "o8x8-os4x2", make(8, 8, 4, 2) },
             { "accurate-o8x8-os3x2", kernels::ffbp_options{} },
             { "o6x6-os3x2", make(6, 6, 3, 2) },
             { "fast-o6x6-os2x2", make(6, 6, 2, 2) },
             { "o4x6-os4x2", make(4, 6, 4, 2) } };
}

/*!
 * FFBP's byte floor (ms at `gbps`, bytes read plus written per second): each polar level
 * written once and read once by the level above (8 bytes a sample), the pulses read
 * once and the image read and written once; the stage-0 sums' and the merges' re-reads
 * of neighbouring samples are the arithmetic's, not the floor's.
 */
double ffbp_floor_ms(const std::vector<long long>& levels,
                     std::size_t pulse_bytes,
                     std::size_t pixels,
                     double gbps)
{
    double bytes = double(pulse_bytes) + 16.0 * double(pixels);
    for (long long n : levels)
        bytes += 2.0 * 8.0 * double(n);
    return bytes / (gbps * 1e6);
}

long long sum_of(const std::vector<long long>& v)
{
    long long n = 0;
    for (long long x : v)
        n += x;
    return n;
}

void bench_ffbp_cuda(const std::string& name, const options& opt)
{
    if (!kernels::cuda_available()) {
        json_line("backprojection/" + name + "/cuda/factorized")
            .field("skipped", kernels::cuda_unavailable_reason())
            .emit();
        return;
    }
    using namespace kernels;
    const workload w = make_workload(name, opt.quick);
    const std::size_t npix = static_cast<std::size_t>(w.grid.nx * w.grid.ny);
    cuda_stream stream;
    device_memory d_pulses(w.h.pulses.size() * sizeof(cfloat)),
        d_img(npix * sizeof(cfloat));
    copy_async(d_pulses.get(),
               w.h.pulses.data(),
               d_pulses.size(),
               copy_kind::host_to_device,
               stream.ref(),
               "bench");
    const int reps = opt.quick ? 1 : std::min(opt.repeats, 3);
    // One run into a zeroed image (kept for the SER), then the timed runs.
    auto measure = [&](backprojection& bp, std::vector<cfloat>& img) {
        fill_bytes_async(d_img.get(), 0, d_img.size(), stream.ref(), "bench");
        bp.run(
            d_pulses.as<cfloat>(), w.h.geometry.data(), w.h.npulses, d_img.as<cfloat>());
        img = pd::to_host<cfloat>(d_img, npix, stream);
        return time_ms(stream, reps, [&] {
            bp.run(d_pulses.as<cfloat>(),
                   w.h.geometry.data(),
                   w.h.npulses,
                   d_img.as<cfloat>());
        });
    };
    std::vector<cfloat> direct;
    auto dbp =
        backprojection::make(backend::cuda, w.grid, w.h.nbins, prec::fast, stream.ref());
    const double direct_ms = measure(*dbp, direct);
    const auto props = current_device_properties();
    json_line("backprojection/" + name + "/cuda/direct-fast")
        .field("device", props.name)
        .field("nx", w.grid.nx)
        .field("pulses", static_cast<long long>(w.h.npulses))
        .field("nbins", static_cast<long long>(w.h.nbins))
        .field("time_ms", direct_ms)
        .emit();
    const double gbps = pd::copy_gb_per_s(std::size_t(1) << 30, stream, 3);
    for (const ffbp_setting& s : ffbp_settings()) {
        const auto levels = kernels::backprojection_factorized::level_samples(
            w.grid, w.h.geometry.data(), w.h.npulses, s.o);
        const double floor_ms =
            ffbp_floor_ms(levels, w.h.pulses.size() * sizeof(cfloat), npix, gbps);
        const std::size_t mem0 = device_memory_in_use();
        auto bp = kernels::backprojection_factorized::make(
            backend::cuda, w.grid, w.h.nbins, s.o, stream.ref());
        std::vector<cfloat> img;
        const double ms = measure(*bp, img);
        json_line("backprojection/" + name + "/cuda/factorized/" + s.name)
            .field("device", props.name)
            .field("nx", w.grid.nx)
            .field("pulses", static_cast<long long>(w.h.npulses))
            .field("stages",
                   static_cast<long long>(
                       kernels::backprojection_factorized::stages_for(s.o, w.h.npulses)))
            .field("time_ms", ms)
            .field("speedup_vs_direct_fast", direct_ms / ms)
            .field("ser_vs_direct_db", ser_against_db(direct, img))
            .field("ser_fp64_db", ser_db(w, img))
            .field("polar_samples_per_pixel", double(sum_of(levels)) / double(npix))
            .field("levels", static_cast<long long>(levels.size()))
            .field("floor_ms", floor_ms)
            .field("copy_gbps", gbps)
            .field("time_over_floor", ms / floor_ms)
            .field("workspace_mib",
                   double(device_memory_in_use() - mem0) / double(1 << 20))
            .emit();
    }
}

/*!
 * How FFBP's cost grows with the image: the BP-C geometry at 2048^2 to 16384^2 (pulses
 * n/4, bins n), the accurate settings against direct fast in the same run, with each
 * run's byte floor.
 */
void bench_ffbp_scaling(const options& opt)
{
    if (!pd::have_cuda("backprojection/ffbp-scaling/cuda"))
        return;
    using namespace kernels;
    cuda_stream stream;
    const double gbps = pd::copy_gb_per_s(std::size_t(1) << 30, stream, 3);
    const auto props = current_device_properties();
    const ffbp_options o;
    for (long long n : { 2048LL, 4096LL, 8192LL, 16384LL }) {
        const long long m = opt.quick ? n / 8 : n;
        const workload w = airborne("scaling", m, std::size_t(m / 4), std::size_t(m));
        const std::size_t npix = static_cast<std::size_t>(m * m);
        device_memory d_pulses(w.h.pulses.size() * sizeof(cfloat)),
            d_img(npix * sizeof(cfloat));
        copy_async(d_pulses.get(),
                   w.h.pulses.data(),
                   d_pulses.size(),
                   copy_kind::host_to_device,
                   stream.ref(),
                   "bench");
        const int reps = opt.quick || m >= 8192 ? 1 : 2;
        auto timed = [&](backprojection& bp) {
            // The first run (plans, buffers) untimed.
            bp.run(d_pulses.as<cfloat>(),
                   w.h.geometry.data(),
                   w.h.npulses,
                   d_img.as<cfloat>());
            return time_ms(stream, reps, [&] {
                bp.run(d_pulses.as<cfloat>(),
                       w.h.geometry.data(),
                       w.h.npulses,
                       d_img.as<cfloat>());
            });
        };
        const double direct_ms = timed(*backprojection::make(
            backend::cuda, w.grid, w.h.nbins, prec::fast, stream.ref()));
        const auto levels = backprojection_factorized::level_samples(
            w.grid, w.h.geometry.data(), w.h.npulses, o);
        const double floor_ms =
            ffbp_floor_ms(levels, w.h.pulses.size() * sizeof(cfloat), npix, gbps);
        const double ms = timed(*backprojection_factorized::make(
            backend::cuda, w.grid, w.h.nbins, o, stream.ref()));
        json_line("backprojection/ffbp-scaling/cuda/" + std::to_string(m))
            .field("device", props.name)
            .field("nx", m)
            .field("pulses", static_cast<long long>(w.h.npulses))
            .field("levels", static_cast<long long>(levels.size()))
            .field("polar_samples_per_pixel", double(sum_of(levels)) / double(npix))
            .field("direct_fast_ms", direct_ms)
            .field("time_ms", ms)
            .field("ns_per_pixel", 1e6 * ms / double(npix))
            .field("speedup_vs_direct_fast", direct_ms / ms)
            .field("floor_ms", floor_ms)
            .field("time_over_floor", ms / floor_ms)
            .emit();
    }
}

//! The CPU twins: FFBP against direct (fast) on the same workload, the pool's threads.
void bench_ffbp_cpu(const std::string& name, const options& opt)
{
    const workload w = make_workload(name, opt.quick);
    const std::size_t npix = static_cast<std::size_t>(w.grid.nx * w.grid.ny);
    auto time_s = [&](backprojection& bp, std::vector<cfloat>& img) {
        img.assign(npix, cfloat(0, 0));
        const auto t0 = std::chrono::steady_clock::now();
        bp.run(w.h.pulses.data(), w.h.geometry.data(), w.h.npulses, img.data());
        return seconds_since(t0);
    };
    std::vector<cfloat> direct;
    const double direct_s = time_s(
        *backprojection::make(kernels::backend::cpu, w.grid, w.h.nbins, prec::fast),
        direct);
    json_line("backprojection/" + name + "/cpu/direct-fast")
        .field("nx", w.grid.nx)
        .field("pulses", static_cast<long long>(w.h.npulses))
        .field("threads", static_cast<long long>(kernels::cpu_threads()))
        .field("time_ms", 1e3 * direct_s)
        .emit();
    for (const ffbp_setting& s : ffbp_settings()) {
        std::vector<cfloat> img;
        const double t = time_s(*kernels::backprojection_factorized::make(
                                    kernels::backend::cpu, w.grid, w.h.nbins, s.o),
                                img);
        json_line("backprojection/" + name + "/cpu/factorized/" + s.name)
            .field("nx", w.grid.nx)
            .field("pulses", static_cast<long long>(w.h.npulses))
            .field("threads", static_cast<long long>(kernels::cpu_threads()))
            .field("time_ms", 1e3 * t)
            .field("speedup_vs_direct_fast", direct_s / t)
            .field("ser_vs_direct_db", ser_against_db(direct, img))
            .emit();
    }
}

GPURADAR_BENCH("backprojection/BP-A/cpu") { bench_cpu("BP-A", opt); }
GPURADAR_BENCH("backprojection/block/BP-A") { bench_block("BP-A", opt); }
GPURADAR_BENCH("backprojection/block/BP-B") { bench_block("BP-B", opt); }
GPURADAR_BENCH("backprojection/block/BP-C") { bench_block("BP-C", opt); }
GPURADAR_BENCH("backprojection/BP-A/cuda") { bench_cuda("BP-A", opt); }
GPURADAR_BENCH("backprojection/BP-B/cuda") { bench_cuda("BP-B", opt); }
GPURADAR_BENCH("backprojection/BP-C/cuda") { bench_cuda("BP-C", opt); }
GPURADAR_BENCH("backprojection/BP-S/cuda") { bench_cuda("BP-S", opt); }
GPURADAR_BENCH("backprojection/BP-V/cuda") { bench_volume_cuda(opt); }
GPURADAR_BENCH("backprojection/devices/BP-B") { bench_devices("BP-B", opt); }
GPURADAR_BENCH("backprojection/devices/BP-C") { bench_devices("BP-C", opt); }
GPURADAR_BENCH("backprojection/BP-A/cpu/factorized") { bench_ffbp_cpu("BP-A", opt); }
GPURADAR_BENCH("backprojection/BP-A/cuda/factorized") { bench_ffbp_cuda("BP-A", opt); }
GPURADAR_BENCH("backprojection/BP-B/cuda/factorized") { bench_ffbp_cuda("BP-B", opt); }
GPURADAR_BENCH("backprojection/BP-C/cuda/factorized") { bench_ffbp_cuda("BP-C", opt); }
GPURADAR_BENCH("backprojection/ffbp-scaling/cuda") { bench_ffbp_scaling(opt); }

} // namespace
} // namespace gpuradar::bench
