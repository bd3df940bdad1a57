/* The CPI-length check both passive stages make on their two channels (internal). */
#ifndef INCLUDED_GPURADAR_KERNELS_CHANNEL_LENGTHS_H
#define INCLUDED_GPURADAR_KERNELS_CHANNEL_LENGTHS_H

#include "common/param_check.h"
#include <cstddef>
#include <string>

namespace gpuradar::kernels::detail {

//! std::invalid_argument naming reference_length or surveillance_length unless both
//! channels hold one CPI of nsamples: two receivers that disagree are refused, not cut.
inline void check_channel_lengths(const char* stage,
                                  std::size_t nsamples,
                                  std::size_t reference_length,
                                  std::size_t surveillance_length)
{
    const std::string want = "nsamples = " + std::to_string(nsamples);
    if (reference_length != nsamples)
        throw_invalid(stage, "reference_length", want, reference_length);
    if (surveillance_length != nsamples)
        throw_invalid(stage,
                      "surveillance_length",
                      want +
                          " (the reference's length; the two channels must be one CPI)",
                      surveillance_length);
}

} // namespace gpuradar::kernels::detail

#endif
