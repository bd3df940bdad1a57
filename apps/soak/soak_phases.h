/*
 * gpuradar_soak's three phases, each through the GNU Radio blocks:
 *   cpis       one flowgraph, N CPIs of a PD workload: host source -> pulse_framer ->
 *              pulse_doppler_processor -> cfar_2d;
 *   apertures  one flowgraph, M SAR apertures through backprojection (restart mode);
 *   cycles     K times: build the cpis flowgraph, start it, run a few CPIs, stop, wait,
 *              destroy.
 * Each samples memory (soak_memory.h), checks its output, prints a summary line and
 * says whether it passed.
 */
#ifndef INCLUDED_GPURADAR_SOAK_PHASES_H
#define INCLUDED_GPURADAR_SOAK_PHASES_H

#include "../bench/bench_registry.h"
#include "soak_memory.h"
#include <cstdint>
#include <string>

namespace gpuradar::soak {

struct soak_options {
    std::string backend = "cpu";
    std::string workload = "PD-C";
    std::uint64_t cpis = 100000;
    std::uint64_t apertures = 1000;
    std::uint64_t cycles = 100;
    std::uint64_t cycle_cpis = 3;         //!< CPIs each start/stop cycle waits for
    std::uint64_t samples_per_phase = 50; //!< memory samples, about
    double warmup_fraction = 0.1;         //!< of a phase's progress before the baseline
    memory_bounds bounds{ 32ll << 20, 32ll << 20 };
    double phase_timeout_s = 900;            //!< a phase taking longer counts as hung
    std::uint64_t leak_kib_per_aperture = 0; //!< self-test of the bound: leak this much
    bench::source_tuning source;
};

bool run_cpis(const soak_options& opt);
bool run_apertures(const soak_options& opt);
bool run_cycles(const soak_options& opt);

} // namespace gpuradar::soak

#endif
