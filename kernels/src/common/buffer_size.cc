/* Buffer sizes checked before allocation (see buffer_size.h). */
#include "common/param_check.h"
#include <gpuradar/kernels/common/buffer_size.h>
#include <algorithm>
#include <iomanip>
#include <sstream>
#include <string>

namespace gpuradar::kernels {

namespace {

std::string gib(double bytes)
{
    const double g = bytes / double(std::size_t(1) << 30);
    std::ostringstream s;
    if (g >= 1e6)
        s << std::setprecision(3) << g;
    else
        s << std::fixed << std::setprecision(g < 10.0 ? 2 : 0) << g;
    s << " GiB";
    return s.str();
}

} // namespace

std::size_t check_buffer_size(const char* stage,
                              std::initializer_list<size_factor> factors,
                              std::size_t element_bytes,
                              const char* buffer,
                              std::size_t max_bytes)
{
    std::size_t elements = 1;
    bool overflow = false;
    double exact = 1.0; // for the message: a double cannot overflow on these products
    for (const auto& f : factors) {
        overflow = overflow || __builtin_mul_overflow(elements, f.value, &elements);
        exact *= double(f.value);
    }
    std::size_t bytes = 0;
    overflow = overflow || __builtin_mul_overflow(elements, element_bytes, &bytes);
    const std::size_t max_elements = std::min(
        max_buffer_elements, max_bytes / std::max<std::size_t>(element_bytes, 1));
    if (!overflow && elements <= max_elements)
        return elements;

    std::ostringstream product, limit, got;
    bool first = true;
    for (const auto& f : factors) {
        product << (first ? "" : " * ") << f.name;
        got << (first ? "" : ", ") << f.name << " = " << f.value;
        first = false;
    }
    limit << "at most " << max_elements << " elements (" << gib(double(max_bytes))
          << " of " << element_bytes << "-byte elements) for " << buffer;
    got << ", which would need " << gib(exact * double(element_bytes));
    detail::throw_invalid(stage, product.str().c_str(), limit.str(), got.str());
}

} // namespace gpuradar::kernels
