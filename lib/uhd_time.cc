/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "uhd_time.h"
#include <cmath>

namespace gr {
namespace gpuradar {

pmt::pmt_t uhd_time_pmt(const ::gpuradar::kernels::time_spec& t)
{
    return pmt::make_tuple(pmt::from_uint64(t.secs), pmt::from_double(t.frac));
}

::gpuradar::kernels::time_spec time_spec_from_seconds(double t)
{
    ::gpuradar::kernels::time_spec s;
    s.secs = static_cast<std::uint64_t>(std::floor(t));
    s.frac = t - std::floor(t);
    return s;
}

} // namespace gpuradar
} // namespace gr
