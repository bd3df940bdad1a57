/*
 * The CPU twins plan FFTW under GNU Radio's planner mutex once the block library is
 * loaded: a plan made (a pulse compression built) while a GNU Radio FFT holds the mutex
 * waits until it is released.
 */
#include "test_support.h"
#include <gnuradio/fft/fft.h>
#include <gnuradio/gpuradar/multiply_const.h>
#include <gpuradar/kernels/common/fftw_planner.h>
#include <gpuradar/kernels/pulse_doppler/pulse_compression.h>
#include <atomic>
#include <chrono>
#include <thread>

namespace gpuradar::test {
namespace {

TEST(FftwPlannerLock, CpuTwinsPlanUnderGnuRadiosMutex)
{
    // A block made here keeps the block library (and its initialisation) linked in.
    const auto block =
        gr::gpuradar::multiply_const::make(gr_complex(1.0f, 0.0f), 1, "cpu");
    ASSERT_TRUE(block);
    ASSERT_EQ(&kernels::fftw_planner_mutex(), &gr::fft::planner::mutex());

    std::atomic<bool> planned{ false };
    std::unique_lock<std::mutex> gnuradio_planning(gr::fft::planner::mutex());
    std::thread other([&] {
        auto pc =
            kernels::pulse_compression::make(kernels::backend::cpu,
                                             300,
                                             2,
                                             random_complex(37, 5),
                                             kernels::window_spec(),
                                             false,
                                             kernels::pulse_compression::method::fft);
        planned = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    EXPECT_FALSE(planned) << "planned while GNU Radio's planner mutex was held";
    gnuradio_planning.unlock();
    other.join();
    EXPECT_TRUE(planned);
}

} // namespace
} // namespace gpuradar::test
