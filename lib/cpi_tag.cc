#include "cpi_tag.h"

namespace gr {
namespace gpuradar {

pmt::pmt_t cpi_tag_key()
{
    static const pmt::pmt_t key = pmt::intern("cpi");
    return key;
}

pmt::pmt_t make_cpi_dict(std::uint64_t index, std::uint64_t npulses, std::uint64_t nrange)
{
    pmt::pmt_t d = pmt::make_dict();
    d = pmt::dict_add(d, pmt::intern("index"), pmt::from_uint64(index));
    d = pmt::dict_add(d, pmt::intern("npulses"), pmt::from_uint64(npulses));
    d = pmt::dict_add(d, pmt::intern("nrange"), pmt::from_uint64(nrange));
    return d;
}

std::uint64_t cpi_field(const pmt::pmt_t& dict, const char* key, std::uint64_t fallback)
{
    if (!pmt::is_dict(dict))
        return fallback;
    const pmt::pmt_t v = pmt::dict_ref(dict, pmt::intern(key), pmt::PMT_NIL);
    if (pmt::is_uint64(v))
        return pmt::to_uint64(v);
    if (pmt::is_integer(v))
        return static_cast<std::uint64_t>(pmt::to_long(v));
    return fallback;
}

bool cpi_shape_matches(const pmt::pmt_t& dict, std::uint64_t npulses, std::uint64_t nrange)
{
    return cpi_field(dict, "npulses", npulses) == npulses &&
           cpi_field(dict, "nrange", nrange) == nrange;
}

pmt::pmt_t with_doppler_axis(const pmt::pmt_t& dict, std::uint64_t ndoppler, bool fftshift)
{
    pmt::pmt_t d = pmt::dict_add(dict, pmt::intern("ndoppler"), pmt::from_uint64(ndoppler));
    return pmt::dict_add(d, pmt::intern("fftshift"), pmt::from_bool(fftshift));
}

} // namespace gpuradar
} // namespace gr
