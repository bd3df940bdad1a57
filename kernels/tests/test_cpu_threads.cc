/*
 * The CPU pool (cpu_threads.h): every pooled CPU stage (csa included) gives, bit for bit,
 * what it gives on one thread, for thread counts that do and do not divide the rows, with
 * two stages running concurrently from two threads as GNU Radio's blocks do; bad counts
 * are refused.
 */
#include "invalid_argument_check.h"
#include "test_support.h"
#include <gpuradar/kernels/corner_turn.h>
#include <gpuradar/kernels/cpu_threads.h>
#include <gpuradar/kernels/csa.h>
#include <gpuradar/kernels/doppler_filter.h>
#include <gpuradar/kernels/envelope.h>
#include <gpuradar/kernels/pulse_compression.h>
#include <gpuradar/kernels/pulse_doppler_processor.h>
#include <gpuradar/kernels/waveform.h>
#include <cmath>
#include <cstring>
#include <functional>
#include <thread>

namespace gpuradar::test {
namespace {

using kernels::backend;
using kernels::cfloat;

//! Restores the default count when a test ends.
struct thread_count_guard {
    const int saved = kernels::cpu_threads();
    ~thread_count_guard() { kernels::set_cpu_threads(saved); }
};

template <typename T>
bool bitwise_equal(const std::vector<T>& a, const std::vector<T>& b)
{
    return a.size() == b.size() &&
           std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

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

const std::vector<int> counts = { 1, 2, 3, 4, 7 };

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

TEST(CpuThreads, test_005_csa)
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
