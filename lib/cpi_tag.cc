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

bool cpi_shape_matches(const pmt::pmt_t& dict,
                       std::uint64_t npulses,
                       std::uint64_t nrange)
{
    return cpi_field(dict, "npulses", npulses) == npulses &&
           cpi_field(dict, "nrange", nrange) == nrange;
}

bool cpi_has(const pmt::pmt_t& dict, const char* key)
{
    return dict && pmt::is_dict(dict) && pmt::dict_has_key(dict, pmt::intern(key));
}

double cpi_double(const pmt::pmt_t& dict, const char* key, double fallback)
{
    if (!cpi_has(dict, key))
        return fallback;
    const pmt::pmt_t v = pmt::dict_ref(dict, pmt::intern(key), pmt::PMT_NIL);
    if (pmt::is_real(v))
        return pmt::to_double(v);
    if (pmt::is_uint64(v))
        return static_cast<double>(pmt::to_uint64(v));
    if (pmt::is_integer(v))
        return static_cast<double>(pmt::to_long(v));
    return fallback;
}

bool cpi_rx_time_seconds(const pmt::pmt_t& dict, double* seconds)
{
    if (!cpi_has(dict, "rx_time"))
        return false;
    const pmt::pmt_t t = pmt::dict_ref(dict, pmt::intern("rx_time"), pmt::PMT_NIL);
    if (!pmt::is_tuple(t) || pmt::length(t) != 2)
        return false;
    const pmt::pmt_t secs = pmt::tuple_ref(t, 0), frac = pmt::tuple_ref(t, 1);
    if (!pmt::is_uint64(secs) || !pmt::is_real(frac))
        return false;
    *seconds = static_cast<double>(pmt::to_uint64(secs)) + pmt::to_double(frac);
    return true;
}

namespace {

// dict_add throws pmt::wrong_type on a plain list of pairs (not made by make_dict) and on
// a dict whose elements are not all key/value pairs; either can arrive from outside.
bool is_proper_dict(pmt::pmt_t d)
{
    if (!pmt::is_dict(d))
        return false;
    for (; pmt::is_pair(d); d = pmt::cdr(d))
        if (!pmt::is_pair(pmt::car(d)))
            return false;
    return pmt::is_null(d);
}

} // namespace

pmt::pmt_t
with_doppler_axis(const pmt::pmt_t& dict, std::uint64_t ndoppler, bool fftshift)
{
    // A malformed upstream cpi value is replaced rather than thrown on in work().
    const pmt::pmt_t base = is_proper_dict(dict) ? dict : pmt::make_dict();
    pmt::pmt_t d =
        pmt::dict_add(base, pmt::intern("ndoppler"), pmt::from_uint64(ndoppler));
    return pmt::dict_add(d, pmt::intern("fftshift"), pmt::from_bool(fftshift));
}

} // namespace gpuradar
} // namespace gr
