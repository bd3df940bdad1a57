#include <gpuradar/kernels/common/fftw_planner.h>
#include <atomic>

namespace gpuradar::kernels {

namespace {

std::mutex& own_mutex()
{
    static std::mutex m;
    return m;
}

std::atomic<std::mutex*>& current()
{
    static std::atomic<std::mutex*> m{ &own_mutex() };
    return m;
}

} // namespace

void set_fftw_planner_mutex(std::mutex& m) { current().store(&m); }

std::mutex& fftw_planner_mutex() { return *current().load(); }

} // namespace gpuradar::kernels
