/*
 * gpuradar_bench: performance measurements as JSON lines (one per measurement).
 *
 *   gpuradar_bench [--list] [--quick] [--repeats N] [--workload PD-x] [--backend
 * cuda|cpu]
 *                  [--copy-threads N] [--source-cpis N] [--cpu-threads N]
 *                  [name-substring ...]
 *
 * Without names every registered benchmark runs. Figures go to docs/PERFORMANCE.md with
 * the device and the command.
 */
#include "bench/bench_registry.h"
#include <gpuradar/kernels/common/backend.h>
#include <gpuradar/kernels/common/cpu_threads.h>
#include <algorithm>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <stdexcept>
#include <string>

namespace {

constexpr const char* usage =
    "usage: gpuradar_bench [--list] [--quick] [--repeats N] [--workload PD-x]\n"
    "                      [--backend cuda|cpu] [--input fc32|sc16] [--copy-threads N]\n"
    "                      [--source-cpis N] [--cpu-threads N] [name ...]\n"
    "Prints one JSON line per measurement; names select benchmarks by substring.\n"
    "  --workload     pd_chain/default, e2e/PD, pd_cpu/PD: only this PD workload\n"
    "  --backend      e2e/PD: only this backend\n"
    "  --input        e2e/PD, e2e/PD/two_gpu: only this host sample type (fc32, or\n"
    "                 sc16 as an SDR gives it); default: both\n"
    "  --copy-threads GNU Radio benchmarks: memcpy threads of the replay source\n"
    "                 (default: half the cores, at most 8)\n"
    "  --source-cpis  GNU Radio benchmarks: CPIs the replay source's buffer holds (2)\n"
    "  --cpu-threads  the CPU backend's pool (set_cpu_threads, 1..256; default: the\n"
    "                 cores the process may run on)\n";

//! A positive integer option value, or exit with the usage.
unsigned positive(const char* name, const char* value)
{
    const long v = std::strtol(value, nullptr, 10);
    if (v <= 0) {
        std::cerr << "gpuradar_bench: " << name << " must be a positive integer\n"
                  << usage;
        std::exit(2);
    }
    return static_cast<unsigned>(v);
}

} // namespace

int main(int argc, char** argv)
{
    using namespace gpuradar::bench;
    options opt;
    std::vector<std::string> filters;
    bool list = false;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        const bool has_value = i + 1 < argc;
        if (arg == "--list")
            list = true;
        else if (arg == "--quick")
            opt.quick = true;
        else if (arg == "--repeats" && has_value)
            opt.repeats = int(positive("--repeats", argv[++i]));
        else if (arg == "--workload" && has_value)
            opt.workload = argv[++i];
        else if (arg == "--backend" && has_value)
            opt.backend = argv[++i];
        else if (arg == "--input" && has_value) {
            opt.input = argv[++i];
            if (opt.input != "fc32" && opt.input != "sc16") {
                std::cerr << "gpuradar_bench: --input must be fc32 or sc16 (got "
                          << opt.input << ")\n"
                          << usage;
                return 2;
            }
        } else if (arg == "--copy-threads" && has_value)
            opt.source.copy_threads = positive("--copy-threads", argv[++i]);
        else if (arg == "--source-cpis" && has_value)
            opt.source.buffer_cpis = positive("--source-cpis", argv[++i]);
        else if (arg == "--cpu-threads" && has_value) {
            try {
                gpuradar::kernels::set_cpu_threads(
                    int(positive("--cpu-threads", argv[++i])));
            } catch (const std::invalid_argument& e) {
                std::cerr << "gpuradar_bench: " << e.what() << "\n" << usage;
                return 2;
            }
        } else if (arg == "--help" || arg == "-h") {
            std::cout << usage;
            return 0;
        } else if (arg.rfind("--", 0) == 0) {
            std::cerr << "gpuradar_bench: unknown option or missing value: " << arg
                      << "\n"
                      << usage;
            return 2;
        } else
            filters.push_back(arg);
    }
    auto& cases = registry();
    std::sort(
        cases.begin(), cases.end(), [](auto& a, auto& b) { return a.name < b.name; });
    int failures = 0;
    for (const auto& c : cases) {
        const bool selected =
            filters.empty() || std::any_of(filters.begin(), filters.end(), [&](auto& f) {
                return c.name.find(f) != std::string::npos;
            });
        if (!selected)
            continue;
        if (list) {
            std::cout << c.name << "\n";
            continue;
        }
        try {
            c.run(opt);
        } catch (const std::exception& e) {
            json_line(c.name).field("error", e.what()).emit();
            ++failures;
        }
    }
    return failures ? 1 : 0;
}
