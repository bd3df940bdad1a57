#include "../bench/bench_registry.h"
#include "soak_memory.h"
#include <gpuradar/kernels/common/cuda_resources.h>
#include <unistd.h>
#include <algorithm>
#include <fstream>
#include <stdexcept>

namespace gpuradar::soak {

long long host_rss_bytes()
{
    std::ifstream statm("/proc/self/statm");
    long long size_pages = 0, resident_pages = 0;
    if (!(statm >> size_pages >> resident_pages))
        throw std::runtime_error("gpuradar_soak: cannot read /proc/self/statm");
    return resident_pages * static_cast<long long>(sysconf(_SC_PAGESIZE));
}

phase_memory::phase_memory(std::string phase,
                           bool device,
                           std::uint64_t every,
                           std::uint64_t warmup)
    : d_phase(std::move(phase)),
      d_device(device),
      d_every(std::max<std::uint64_t>(1, every)),
      d_warmup(warmup),
      d_start(std::chrono::steady_clock::now()),
      d_next_due(0)
{
}

void phase_memory::sample_if_due(std::uint64_t progress)
{
    std::lock_guard<std::mutex> lock(d_mutex);
    if (progress < d_next_due)
        return;
    take(progress);
    d_next_due = (progress / d_every + 1) * d_every;
}

void phase_memory::sample(std::uint64_t progress)
{
    std::lock_guard<std::mutex> lock(d_mutex);
    take(progress);
}

void phase_memory::take(std::uint64_t progress)
{
    memory_sample s;
    s.progress = progress;
    s.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - d_start).count();
    s.rss_bytes = host_rss_bytes();
    s.device_bytes =
        d_device ? static_cast<long long>(kernels::device_memory_in_use()) : -1;
    s.warm = progress >= d_warmup;
    d_samples.push_back(s);
    constexpr double mib = 1024.0 * 1024.0;
    bench::json_line line("soak");
    line.field("phase", d_phase)
        .field("progress", static_cast<long long>(progress))
        .field("seconds", s.seconds)
        .field("warm", s.warm)
        .field("rss_mib", double(s.rss_bytes) / mib);
    if (d_device)
        line.field("device_mib", double(s.device_bytes) / mib);
    line.emit();
}

memory_growth phase_memory::growth() const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    memory_growth g;
    const memory_sample* base = nullptr;
    for (const auto& s : d_samples) {
        if (!s.warm)
            continue;
        ++g.warm_samples;
        if (!base) {
            base = &s;
            continue;
        }
        g.rss_bytes = std::max(g.rss_bytes, s.rss_bytes - base->rss_bytes);
        if (d_device)
            g.device_bytes =
                std::max(g.device_bytes, s.device_bytes - base->device_bytes);
    }
    return g;
}

} // namespace gpuradar::soak
