/* Power-of-two sizes on the host side of the CUDA stages (internal). */
#ifndef INCLUDED_GPURADAR_KERNELS_POWER_OF_TWO_H
#define INCLUDED_GPURADAR_KERNELS_POWER_OF_TWO_H

#include <cstddef>

namespace gpuradar::kernels::detail {

//! The least l with 2^l >= n.
inline unsigned log2_ceil(std::size_t n)
{
    unsigned l = 0;
    while ((std::size_t(1) << l) < n)
        ++l;
    return l;
}

//! n is 2^l for some l in [lo, hi].
inline bool power_of_two_between(std::size_t n, unsigned lo, unsigned hi)
{
    const unsigned l = log2_ceil(n);
    return n == (std::size_t(1) << l) && l >= lo && l <= hi;
}

} // namespace gpuradar::kernels::detail

#endif
