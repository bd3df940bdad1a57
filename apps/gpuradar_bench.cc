/*
 * gpuradar_bench: performance measurements as JSON lines (one per measurement).
 *
 *   gpuradar_bench [--list] [--quick] [--repeats N] [name-substring ...]
 *
 * Without names every registered benchmark runs. Figures go to docs/PERFORMANCE.md with
 * the date, the device and the command.
 */
#include "bench/bench_registry.h"
#include <gpuradar/kernels/backend.h>
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>

namespace gpuradar::bench {
std::vector<bench_case>& registry()
{
    static std::vector<bench_case> r;
    return r;
}
double median(std::vector<double> v)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    const std::size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}
} // namespace gpuradar::bench

int main(int argc, char** argv)
{
    using namespace gpuradar::bench;
    options opt;
    std::vector<std::string> filters;
    bool list = false;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--list"))
            list = true;
        else if (!std::strcmp(argv[i], "--quick"))
            opt.quick = true;
        else if (!std::strcmp(argv[i], "--repeats") && i + 1 < argc)
            opt.repeats = std::max(1, std::atoi(argv[++i]));
        else if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
            std::cout << "usage: gpuradar_bench [--list] [--quick] [--repeats N] [name ...]\n"
                         "Prints one JSON line per measurement; names select benchmarks by "
                         "substring.\n";
            return 0;
        } else
            filters.emplace_back(argv[i]);
    }
    auto& cases = registry();
    std::sort(cases.begin(), cases.end(), [](auto& a, auto& b) { return a.name < b.name; });
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
