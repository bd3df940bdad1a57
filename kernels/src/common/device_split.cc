#include "common/param_check.h"
#include <gpuradar/kernels/common/device_split.h>
#include <algorithm>
#include <string>

namespace gpuradar::kernels {

std::vector<row_range>
split_image_rows(long long ny, std::size_t ndevices, long long granule)
{
    if (ny < 0)
        detail::throw_invalid("split_image_rows", "ny", ">= 0", ny);
    if (ndevices < 1)
        detail::throw_invalid("split_image_rows", "ndevices", ">= 1", ndevices);
    if (granule < 1)
        detail::throw_invalid("split_image_rows", "granule", ">= 1", granule);
    const long long groups = (ny + granule - 1) / granule;
    const long long n = static_cast<long long>(ndevices);
    // The first groups % n shares take one group more than the others.
    const long long base = groups / n, extra = groups % n;
    std::vector<row_range> shares(ndevices);
    long long group = 0;
    for (long long k = 0; k < n; ++k) {
        const long long next = group + base + (k < extra ? 1 : 0);
        shares[k].begin = std::min(ny, group * granule);
        shares[k].end = std::min(ny, next * granule);
        group = next;
    }
    return shares;
}

void check_device_index(const char* who, int device, int count)
{
    if (count == any_device_count) {
        if (device < 0)
            detail::throw_invalid(who, "device", ">= 0", device);
        return;
    }
    if (count < 1)
        detail::throw_invalid(
            who, "device", "a CUDA device index, but there is no CUDA device", device);
    if (device < 0 || device >= count)
        detail::throw_invalid(who, "device", "0 to " + std::to_string(count - 1), device);
}

} // namespace gpuradar::kernels
