/* The registry and helpers bench_registry.h declares (the benches and main() use them).
 */
#include "bench_registry.h"
#include <algorithm>

namespace gpuradar::bench {

std::vector<bench_case>& registry()
{
    // Function-local: the benches' static registrars run before main(), in any order.
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
