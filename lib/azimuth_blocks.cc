#include "azimuth_blocks.h"
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace gr {
namespace gpuradar {

namespace {

//! Largest azimuth block (bytes of naz x nrange complex) the block will allocate.
constexpr double max_block_bytes = double(std::size_t(1) << 30);
//! Smallest automatic block: shorter FFTs waste the per-block overhead.
constexpr std::size_t min_auto_naz = 256;
//! Automatic blocks are this many overlaps long (3/4 of each block is emitted).
constexpr std::size_t auto_naz_overlaps = 4;

//! Pulses the rows of one side must keep from the block's edge, at slant range r.
struct side_need {
    double lead, trail;
};

side_need need_at(const kernels::stripmap_params& p, double r)
{
    const double half = 0.5 * p.aperture_pulses(r);
    const double offset = r * std::tan(p.squint_rad) * p.prf_hz / p.velocity_mps;
    const double guard = 2.0 * half / 4.0 + 1.0;
    return { half + offset + guard, half - offset + guard };
}

std::size_t pulses_at_least(double v) { return v > 0 ? std::size_t(std::ceil(v)) : 0; }

} // namespace

std::size_t next_fft_friendly(std::size_t at_least)
{
    for (std::size_t n = std::max<std::size_t>(at_least, 1);; ++n) {
        std::size_t m = n;
        for (std::size_t f : { 2, 3, 5 })
            while (m % f == 0)
                m /= f;
        if (m == 1)
            return n;
    }
}

azimuth_blocks azimuth_blocks::make(const kernels::stripmap_params& p,
                                    std::size_t naz_requested,
                                    const char* block_name)
{
    const double far = p.near_range_m + double(p.nrange - 1) * p.range_spacing_m();
    const side_need near_side = need_at(p, p.near_range_m);
    const side_need far_side = need_at(p, far);
    azimuth_blocks b;
    b.lead = pulses_at_least(std::max(near_side.lead, far_side.lead));
    b.trail = pulses_at_least(std::max(near_side.trail, far_side.trail));
    const std::string prefix = std::string("gpuradar::") + block_name + ": naz ";
    b.naz =
        naz_requested
            ? naz_requested
            : next_fft_friendly(std::max(auto_naz_overlaps * b.overlap(), min_auto_naz));
    if (b.naz <= b.overlap())
        throw std::invalid_argument(
            prefix + "must be > " + std::to_string(b.overlap()) +
            " pulses, the overlap of consecutive blocks (the synthetic aperture at far "
            "range, " +
            std::to_string(p.aperture_pulses(far)) + " pulses, shifted by the squint, " +
            "plus guards) (got " + std::to_string(naz_requested) + ")");
    if (double(b.naz) * double(p.nrange) * 8.0 > max_block_bytes)
        throw std::invalid_argument(prefix +
                                    "x nrange complex samples must fit in 1 GiB "
                                    "(got naz " +
                                    std::to_string(b.naz) + " x nrange " +
                                    std::to_string(p.nrange) + ")");
    return b;
}

} // namespace gpuradar
} // namespace gr
