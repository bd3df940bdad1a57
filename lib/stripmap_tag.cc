#include "cpi_tag.h"
#include "stripmap_tag.h"
#include <cmath>

namespace gr {
namespace gpuradar {

pmt::pmt_t stripmap_tag_key()
{
    static const pmt::pmt_t key = pmt::intern("stripmap");
    return key;
}

kernels::stripmap_params make_stripmap_params(const char* block_name,
                                              const stripmap_acquisition& a)
{
    kernels::stripmap_params p;
    p.fc_hz = a.fc;
    p.bandwidth_hz = a.bandwidth;
    p.pulse_width_s = a.pulse_width;
    p.up_chirp = a.up_chirp;
    p.fs_hz = a.fs;
    p.prf_hz = a.prf;
    p.velocity_mps = a.velocity;
    p.altitude_m = a.altitude;
    p.near_range_m = a.near_range;
    p.nrange = a.nrange;
    p.squint_rad = a.squint;
    p.antenna_length_m = a.antenna_length;
    p.validate(block_name);
    return p;
}

namespace {

struct real_field {
    const char* key;
    double kernels::stripmap_params::*member;
};

constexpr real_field real_fields[] = {
    { "fc", &kernels::stripmap_params::fc_hz },
    { "bandwidth", &kernels::stripmap_params::bandwidth_hz },
    { "pulse_width", &kernels::stripmap_params::pulse_width_s },
    { "fs", &kernels::stripmap_params::fs_hz },
    { "prf", &kernels::stripmap_params::prf_hz },
    { "velocity", &kernels::stripmap_params::velocity_mps },
    { "altitude", &kernels::stripmap_params::altitude_m },
    { "r0", &kernels::stripmap_params::near_range_m },
    { "squint", &kernels::stripmap_params::squint_rad },
    { "antenna_length", &kernels::stripmap_params::antenna_length_m },
};

bool same(double a, double b) { return std::abs(a - b) <= 1e-9 * std::abs(b); }

} // namespace

pmt::pmt_t
stripmap_dict(const kernels::stripmap_params& p, double y0, std::uint64_t pulse)
{
    pmt::pmt_t d = pmt::make_dict();
    for (const auto& f : real_fields)
        d = pmt::dict_add(d, pmt::intern(f.key), pmt::from_double(p.*f.member));
    d = pmt::dict_add(d, pmt::intern("up_chirp"), pmt::from_bool(p.up_chirp));
    d = pmt::dict_add(d, pmt::intern("nrange"), pmt::from_uint64(p.nrange));
    d = pmt::dict_add(d, pmt::intern("y0"), pmt::from_double(y0));
    d = pmt::dict_add(d, pmt::intern("dy"), pmt::from_double(p.velocity_mps / p.prf_hz));
    d = pmt::dict_add(d, pmt::intern("pulse"), pmt::from_uint64(pulse));
    return d;
}

bool stripmap_dict_matches(const pmt::pmt_t& dict, const kernels::stripmap_params& p)
{
    if (!dict || !pmt::is_dict(dict))
        return false;
    for (const auto& f : real_fields)
        if (cpi_has(dict, f.key) && !same(cpi_double(dict, f.key, 0.0), p.*f.member))
            return false;
    if (cpi_field(dict, "nrange", p.nrange) != p.nrange)
        return false;
    const pmt::pmt_t up = pmt::dict_ref(dict, pmt::intern("up_chirp"), pmt::PMT_NIL);
    return !pmt::is_bool(up) || pmt::to_bool(up) == p.up_chirp;
}

} // namespace gpuradar
} // namespace gr
