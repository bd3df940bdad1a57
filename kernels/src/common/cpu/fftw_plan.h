/*
 * RAII FFTW (single precision) plans for the CPU twins (internal). FFTW's planner is not
 * thread-safe, so plans are made and destroyed under one process-wide mutex
 * (fftw_planner.h: GNU Radio's when the blocks are loaded); executing a plan with
 * new-array execute is thread-safe.
 */
#ifndef INCLUDED_GPURADAR_KERNELS_FFTW_PLAN_H
#define INCLUDED_GPURADAR_KERNELS_FFTW_PLAN_H

#include <fftw3.h>
#include <gpuradar/kernels/common/fftw_planner.h>
#include <complex>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

namespace gpuradar::kernels::detail {

using kernels::fftw_planner_mutex; // GNU Radio's planner mutex in the blocks

//! fftwf_malloc'd array (SIMD-aligned), freed with fftwf_free.
struct fftwf_deleter {
    void operator()(void* p) const { fftwf_free(p); }
};
using fftwf_complex_array = std::unique_ptr<std::complex<float>[], fftwf_deleter>;

inline fftwf_complex_array fftwf_alloc(std::size_t n)
{
    auto* p =
        static_cast<std::complex<float>*>(fftwf_malloc(sizeof(std::complex<float>) * n));
    if (!p && n)
        throw std::bad_alloc();
    return fftwf_complex_array(p);
}

/*!
 * A batched 1-D complex FFT plan: `batch` transforms of length n, element stride
 * `stride`, transform distance `dist` (FFTW's advanced interface). sign is FFTW_FORWARD
 * or FFTW_BACKWARD (unnormalised). Planned with `rigour` (FFTW_ESTIMATE by default;
 * FFTW_MEASURE times candidate plans, once per problem and process thanks to FFTW's
 * wisdom) on scratch arrays so that construction never touches caller data; run with
 * execute(in, out) on arrays of any alignment (FFTW_UNALIGNED).
 */
class fftwf_plan_1d
{
public:
    //! nthreads > 1 plans for FFTW's threads (when the build links them, else ignored).
    fftwf_plan_1d(int n,
                  int batch,
                  int stride,
                  int dist,
                  int sign,
                  bool in_place,
                  const char* who,
                  int nthreads = 1,
                  unsigned rigour = FFTW_ESTIMATE)
    {
        const std::size_t total = static_cast<std::size_t>(dist) * (batch - 1) +
                                  static_cast<std::size_t>(stride) * (n - 1) + 1;
        auto a = fftwf_alloc(total);
        auto b = in_place ? fftwf_complex_array() : fftwf_alloc(total);
        auto* in = reinterpret_cast<fftwf_complex*>(a.get());
        auto* out = in_place ? in : reinterpret_cast<fftwf_complex*>(b.get());
        std::lock_guard<std::mutex> lock(fftw_planner_mutex());
        set_planner_threads(nthreads);
        d_plan = fftwf_plan_many_dft(1,
                                     &n,
                                     batch,
                                     in,
                                     nullptr,
                                     stride,
                                     dist,
                                     out,
                                     nullptr,
                                     stride,
                                     dist,
                                     sign,
                                     rigour | FFTW_UNALIGNED);
        set_planner_threads(1);
        if (!d_plan)
            throw std::runtime_error(
                std::string(who) +
                ": fftwf_plan_many_dft failed (n=" + std::to_string(n) + ")");
    }
    ~fftwf_plan_1d()
    {
        std::lock_guard<std::mutex> lock(fftw_planner_mutex());
        fftwf_destroy_plan(d_plan);
    }
    fftwf_plan_1d(const fftwf_plan_1d&) = delete;
    fftwf_plan_1d& operator=(const fftwf_plan_1d&) = delete;

    void execute(const std::complex<float>* in, std::complex<float>* out) const
    {
        // FFTW's new-array execute takes non-const input; it does not write it for
        // out-of-place complex transforms.
        fftwf_execute_dft(
            d_plan,
            reinterpret_cast<fftwf_complex*>(const_cast<std::complex<float>*>(in)),
            reinterpret_cast<fftwf_complex*>(out));
    }

private:
    //! With FFTW's threads library: the threads the next plan uses (under the lock;
    //! GNU Radio's planner sets it the same way, so it is reset after each plan).
    static void set_planner_threads(int nthreads)
    {
#ifdef GPURADAR_HAVE_FFTW_THREADS
        static const bool ready = fftwf_init_threads() != 0;
        if (ready)
            fftwf_plan_with_nthreads(nthreads);
#else
        (void)nthreads;
#endif
    }

    fftwf_plan d_plan = nullptr;
};

} // namespace gpuradar::kernels::detail

#endif
