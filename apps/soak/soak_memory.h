/*
 * gpuradar_soak's memory samples: host resident set size (/proc/self/statm) and, on the
 * CUDA backend, device memory in use, taken every so often during a phase and printed
 * as JSON lines; a phase passes when neither grows after its warm-up by more than the
 * stated bound.
 */
#ifndef INCLUDED_GPURADAR_SOAK_MEMORY_H
#define INCLUDED_GPURADAR_SOAK_MEMORY_H

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace gpuradar::soak {

//! Resident set size of this process in bytes (/proc/self/statm, pages * page size).
long long host_rss_bytes();

struct memory_sample {
    std::uint64_t progress; //!< CPIs, apertures or cycles done when it was taken
    double seconds;         //!< since the phase began
    long long rss_bytes;
    long long device_bytes; //!< -1 without a device
    bool warm;              //!< taken after the phase's warm-up
};

//! How far memory may grow after warm-up (bytes).
struct memory_bounds {
    long long rss_bytes;
    long long device_bytes;
};

//! Growth of a phase after warm-up: the largest sample after the first warm one minus
//! that first warm one (0 when fewer than two warm samples).
struct memory_growth {
    long long rss_bytes = 0;
    long long device_bytes = 0;
    std::size_t warm_samples = 0;
    bool within(const memory_bounds& b) const
    {
        return rss_bytes <= b.rss_bytes && device_bytes <= b.device_bytes;
    }
};

/*!
 * The samples of one phase. sample_if_due() takes one every `every` units of progress
 * (and always the final one, through sample()); samples taken at progress >= `warmup`
 * count as warm. Thread-safe: the flowgraph's message thread may call it.
 */
class phase_memory
{
public:
    phase_memory(std::string phase,
                 bool device,
                 std::uint64_t every,
                 std::uint64_t warmup);
    void sample_if_due(std::uint64_t progress);
    void sample(std::uint64_t progress);
    memory_growth growth() const;
    const std::string& phase() const { return d_phase; }
    std::uint64_t warmup() const { return d_warmup; }

private:
    void take(std::uint64_t progress); // d_mutex held

    const std::string d_phase;
    const bool d_device;
    const std::uint64_t d_every, d_warmup;
    const std::chrono::steady_clock::time_point d_start;
    mutable std::mutex d_mutex;
    std::uint64_t d_next_due;
    std::vector<memory_sample> d_samples;
};

} // namespace gpuradar::soak

#endif
