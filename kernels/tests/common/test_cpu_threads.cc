/*
 * The CPU pool (cpu_threads.h): every pooled CPU stage (csa included) gives, bit for bit,
 * what it gives on one thread, for thread counts that do and do not divide the rows, with
 * two stages running concurrently from two threads as GNU Radio's blocks do; bad counts
 * are refused.
 */
#include "cpu_threads_support.h"
#include "invalid_argument_check.h"
#include "test_support.h"
#include <gpuradar/kernels/common/cpu_threads.h>
#include <gpuradar/kernels/pulse_doppler/corner_turn.h>
#include <gpuradar/kernels/pulse_doppler/doppler_filter.h>
#include <gpuradar/kernels/pulse_doppler/envelope.h>
#include <gpuradar/kernels/pulse_doppler/pulse_compression.h>
#include <gpuradar/kernels/pulse_doppler/pulse_doppler_processor.h>
#include <gpuradar/kernels/sar/backprojection.h>
#include <gpuradar/kernels/sar/csa.h>
#include <gpuradar/kernels/waveform/waveform.h>
#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <thread>
#if defined(__linux__)
#include <sched.h>
#endif

namespace gpuradar::test {
namespace {

using kernels::backend;
using kernels::cfloat;

//! The output of `run` (writing into a NaN-poisoned vector of n) at each thread count.
template <typename T>
std::vector<std::vector<T>> outputs_at(const std::vector<int>& counts,
                                       std::size_t n,
                                       const std::function<void(T*)>& run)
{
    thread_count_guard guard;
    std::vector<std::vector<T>> out;
    for (const int c : counts) {
        kernels::set_cpu_threads(c);
        std::vector<T> y(n, T(NAN));
        run(y.data());
        out.push_back(std::move(y));
    }
    return out;
}

const std::vector<int>& counts = pool_test_counts();

template <typename T>
void expect_all_equal(const std::vector<std::vector<T>>& outs)
{
    for (std::size_t i = 1; i < outs.size(); ++i)
        EXPECT_TRUE(bitwise_equal(outs[0], outs[i]))
            << counts[i] << " threads differ from one";
    for (const auto& v : outs[0])
        ASSERT_FALSE(std::isnan(std::abs(v))) << "an output left unwritten";
}

TEST(CpuThreads, test_001_bad_counts_refused)
{
    thread_count_guard guard;
    // Every test restores the count: this is the default.
    EXPECT_EQ(guard.saved, std::min(kernels::cpu_cores(), kernels::max_cpu_threads));
    kernels::set_cpu_threads(2);
    for (const int bad : { 0, -1, kernels::max_cpu_threads + 1, 1 << 30 })
        expect_invalid([&] { kernels::set_cpu_threads(bad); },
                       "cpu_threads must be in [1, 256]");
    EXPECT_EQ(kernels::cpu_threads(), 2) << "a refused count changed the pool";
    kernels::set_cpu_threads(kernels::max_cpu_threads);
    EXPECT_EQ(kernels::cpu_threads(), kernels::max_cpu_threads);
}

#if defined(__linux__)
//! Runs with the calling thread on its first allowed CPU only; the mask back at the end.
class one_core_pin
{
public:
    one_core_pin()
    {
        EXPECT_EQ(sched_getaffinity(0, sizeof d_saved, &d_saved), 0);
        cpu_set_t one;
        CPU_ZERO(&one);
        for (int c = 0; c < CPU_SETSIZE; ++c)
            if (CPU_ISSET(c, &d_saved)) {
                CPU_SET(c, &one);
                break;
            }
        EXPECT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
    }
    ~one_core_pin() { sched_setaffinity(0, sizeof d_saved, &d_saved); }

private:
    cpu_set_t d_saved;
};

TEST(CpuThreads, test_006_pool_on_one_core)
{
    // The guard first: it resizes the pool after the pin is gone, so that the workers it
    // makes may run on every core again.
    thread_count_guard guard;
    const auto in = random_complex(std::size_t(1) << 17, 19);
    std::vector<float> one_thread(in.size()), pool(in.size(), NAN);
    const auto env =
        kernels::envelope::make(backend::cpu, kernels::envelope::mode::square_law, true);
    kernels::set_cpu_threads(1);
    env->run(in.data(), one_thread.data(), in.size());
    one_core_pin pin;
    ASSERT_EQ(kernels::cpu_cores(), 1);
    // A pool asked for on one core: kept as asked, one line on stderr, the same output.
    testing::internal::CaptureStderr();
    kernels::set_cpu_threads(3);
    const std::string said = testing::internal::GetCapturedStderr();
    EXPECT_NE(said.find("cpu_threads 3 is more than the 1 core(s)"), std::string::npos)
        << said;
    EXPECT_EQ(kernels::cpu_threads(), 3);
    env->run(in.data(), pool.data(), in.size());
    EXPECT_TRUE(bitwise_equal(one_thread, pool));
    // Within the cores: nothing said.
    testing::internal::CaptureStderr();
    kernels::set_cpu_threads(1);
    EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}
#endif

TEST(CpuThreads, test_002_pulse_compression_fft_and_fir)
{
    const std::size_t nrange = 500, rows = 37; // 37 rows: no count divides them
    const auto in = random_complex(nrange * rows, 11);
    const auto wf = kernels::make_waveform("lfm", 2e6, 20e-6, 5e6);
    for (auto m : { kernels::pulse_compression::method::fft,
                    kernels::pulse_compression::method::fir }) {
        expect_all_equal(outputs_at<cfloat>(counts, in.size(), [&](cfloat* y) {
            kernels::pulse_compression::make(backend::cpu, nrange, rows, wf, {}, true, m)
                ->run(in.data(), y);
        }));
    }
}

TEST(CpuThreads, test_003_doppler_filter_corner_turn_envelope)
{
    const std::size_t npulses = 24, rows = 301, nfft = 32;
    const auto in = random_complex(npulses * rows, 12);
    for (auto mti : { kernels::doppler_filter::mti_mode::none,
                      kernels::doppler_filter::mti_mode::three_pulse })
        expect_all_equal(outputs_at<cfloat>(counts, rows * nfft, [&](cfloat* y) {
            kernels::doppler_filter::make(backend::cpu, npulses, rows, nfft, mti)
                ->run(in.data(), y);
        }));
    const std::size_t nrange = 301, channels = 2; // not multiples of the 32-sample tile
    const auto cpi = random_complex(npulses * nrange * channels, 13);
    expect_all_equal(outputs_at<cfloat>(counts, cpi.size(), [&](cfloat* y) {
        kernels::corner_turn::make(backend::cpu, npulses, nrange, channels)
            ->run(cpi.data(), y);
    }));
    const auto big = random_complex((std::size_t(1) << 18) + 5, 14); // several blocks
    for (bool db : { false, true })
        expect_all_equal(outputs_at<float>(counts, big.size(), [&](float* y) {
            kernels::envelope::make(backend::cpu, kernels::envelope::mode::square_law, db)
                ->run(big.data(), y, big.size());
        }));
}

TEST(CpuThreads, test_005_backprojection_tiles)
{
    // A grid of 3 x 2 tiles and ragged edges, two height slices, with and without a
    // height map, both precisions: each tile is one thread's, so the image is the same
    // bits at any count. The image starts random (run adds into it).
    using prec = kernels::backprojection::precision;
    kernels::image_grid g;
    g.nx = 70;
    g.ny = 45;
    g.nz = 2;
    g.dx = g.dy = 0.25;
    g.dz = 2.0;
    g.x0 = -0.5 * double(g.nx - 1) * g.dx;
    g.y0 = -0.5 * double(g.ny - 1) * g.dy;
    const std::size_t npulses = 97, nbins = 512;
    const double dr = 0.2, y_track = -1000, z_track = 500, aperture = 100;
    const auto pulses = random_complex(npulses * nbins, 17);
    std::vector<double> geom;
    for (std::size_t i = 0; i < npulses; ++i) {
        const double x = -0.5 * aperture + aperture * double(i) / double(npulses - 1);
        const double r = std::sqrt(x * x + y_track * y_track + z_track * z_track);
        geom.insert(geom.end(),
                    { x, y_track, z_track, r - 0.5 * double(nbins) * dr, dr, 9.6e9 });
    }
    const auto start = random_complex(std::size_t(g.voxels()), 18);
    for (const bool height : { false, true }) {
        g.height.clear();
        if (height)
            for (long long i = 0; i < g.nx * g.ny; ++i)
                g.height.push_back(0.01 * double(i % 37));
        for (const prec p : { prec::fast, prec::accurate }) {
            thread_count_guard guard;
            std::vector<std::vector<cfloat>> outs;
            for (const int c : counts) {
                kernels::set_cpu_threads(c);
                std::vector<cfloat> img = start;
                kernels::backprojection::make(backend::cpu, g, nbins, p)
                    ->run(pulses.data(), geom.data(), npulses, img.data());
                outs.push_back(std::move(img));
            }
            ASSERT_FALSE(bitwise_equal(outs[0], start)) << "nothing backprojected";
            expect_all_equal(outs);
        }
    }
}

TEST(CpuThreads, test_007_csa)
{
    // Squinted (the per-thread resampling scratch) and 250 range columns: the last
    // azimuth column block is partial and no count divides the blocks or rows evenly.
    kernels::stripmap_params p;
    p.bandwidth_hz = 50e6;
    p.pulse_width_s = 2e-6;
    p.fs_hz = 60e6;
    p.prf_hz = 200;
    p.velocity_mps = 150;
    p.near_range_m = 8000;
    p.nrange = 250;
    p.antenna_length_m = 2.0;
    p.squint_rad = 0.1;
    const std::size_t naz = 512;
    const auto raw = random_complex(naz * p.nrange, 17);
    expect_all_equal(outputs_at<cfloat>(counts, raw.size(), [&](cfloat* y) {
        kernels::csa::make(backend::cpu, p, naz, {})->run(raw.data(), y);
    }));
}

TEST(CpuThreads, test_004_processors_run_concurrently)
{
    // Two processors in two threads, as two GNU Radio blocks, sharing a pool of 4: each
    // gives what it gives alone on one thread.
    kernels::pulse_doppler_processor_params p;
    p.npulses = 32;
    p.nrange = 400;
    p.channels = 2;
    p.waveform = kernels::make_waveform("barker:13", 0, 13e-6, 2e6);
    const auto a = random_complex(p.npulses * p.nrange * p.channels, 15);
    const auto b = random_complex(a.size(), 16);
    const auto proc = kernels::pulse_doppler_processor::make(backend::cpu, p);
    const std::size_t n = proc->output_size();
    thread_count_guard guard;
    kernels::set_cpu_threads(1);
    std::vector<float> ya(n), yb(n);
    proc->run(a.data(), ya.data());
    proc->run(b.data(), yb.data());
    kernels::set_cpu_threads(4);
    auto pa = kernels::pulse_doppler_processor::make(backend::cpu, p);
    auto pb = kernels::pulse_doppler_processor::make(backend::cpu, p);
    std::vector<float> za(n, NAN), zb(n, NAN);
    for (int rep = 0; rep < 5; ++rep) {
        std::thread t([&] { pa->run(a.data(), za.data()); });
        pb->run(b.data(), zb.data());
        t.join();
        ASSERT_TRUE(bitwise_equal(ya, za)) << rep;
        ASSERT_TRUE(bitwise_equal(yb, zb)) << rep;
    }
}

} // namespace
} // namespace gpuradar::test
