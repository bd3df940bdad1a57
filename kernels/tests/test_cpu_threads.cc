/*
 * The CPU pool (cpu_threads.h): every pooled CPU stage gives, bit for bit, what it gives
 * on one thread, for thread counts that do and do not divide the rows, with two stages
 * running concurrently from two threads as GNU Radio's blocks do; bad counts are refused.
 */
#include "cpu_threads_support.h"
#include "invalid_argument_check.h"
#include "test_support.h"
#include <gpuradar/kernels/backprojection.h>
#include <gpuradar/kernels/corner_turn.h>
#include <gpuradar/kernels/cpu_threads.h>
#include <gpuradar/kernels/doppler_filter.h>
#include <gpuradar/kernels/envelope.h>
#include <gpuradar/kernels/pulse_compression.h>
#include <gpuradar/kernels/pulse_doppler_processor.h>
#include <gpuradar/kernels/waveform.h>
#include <cmath>
#include <functional>
#include <thread>

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
    for (const int bad : { 0, -1, kernels::max_cpu_threads + 1 })
        expect_invalid([&] { kernels::set_cpu_threads(bad); },
                       "cpu_threads must be in [1, 256]");
    kernels::set_cpu_threads(3);
    EXPECT_EQ(kernels::cpu_threads(), 3);
}

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
