#include "cfar_detections.h"
#include "cpi_tag.h"
#include <cmath>
#include <limits>

namespace gr {
namespace gpuradar {

pmt::pmt_t detections_port()
{
    static const pmt::pmt_t port = pmt::intern("detections");
    return port;
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

namespace {
bool cpi_bool(const pmt::pmt_t& dict, const char* key, bool fallback)
{
    if (!cpi_has(dict, key))
        return fallback;
    const pmt::pmt_t v = pmt::dict_ref(dict, pmt::intern(key), pmt::PMT_NIL);
    return pmt::is_bool(v) ? pmt::to_bool(v) : fallback;
}

pmt::pmt_t key(const char* k) { return pmt::intern(k); }
} // namespace

double cpi_axes::velocity_mps(std::uint32_t m) const
{
    // Signed Doppler bin (docs/CONVENTIONS.md): shifted spectra have zero Doppler at
    // ndoppler/2; unshifted ones wrap, bins >= ndoppler/2 are negative frequencies.
    const double nd = static_cast<double>(ndoppler);
    const double half = static_cast<double>(ndoppler / 2);
    double k = static_cast<double>(m);
    if (fftshift)
        k -= half;
    else if (k >= half && ndoppler > 1)
        k -= nd;
    return k * prf / nd * speed_of_light / (2.0 * fc);
}

cpi_axes read_cpi_axes(const pmt::pmt_t& dict, std::uint64_t index, bool doppler_axis)
{
    cpi_axes a;
    a.index = index;
    const double fs = cpi_double(dict, "fs", 0.0);
    if (fs > 0.0 && std::isfinite(fs)) {
        a.has_range = true;
        a.r0 = cpi_double(dict, "r0", 0.0);
        a.bin_m = speed_of_light / (2.0 * fs);
    }
    const double prf = cpi_double(dict, "prf", 0.0);
    const double fc = cpi_double(dict, "fc", 0.0);
    const std::uint64_t nd = cpi_field(dict, "ndoppler", 0);
    if (doppler_axis && prf > 0.0 && fc > 0.0 && std::isfinite(prf) &&
        std::isfinite(fc) && nd > 0) {
        a.has_velocity = true;
        a.prf = prf;
        a.fc = fc;
        a.ndoppler = nd;
        a.fftshift = cpi_bool(dict, "fftshift", false);
    }
    if (cpi_has(dict, "rx_time"))
        a.rx_time = pmt::dict_ref(dict, key("rx_time"), pmt::PMT_NIL);
    return a;
}

pmt::pmt_t detection_dict(const kernels::cfar_detection& d,
                          const cpi_axes& axes,
                          std::uint64_t channel,
                          long item)
{
    const double power = d.power;
    const double noise = d.noise;
    const double snr_db = noise > 0.0 ? 10.0 * std::log10(power / noise)
                                      : std::numeric_limits<double>::infinity();
    pmt::pmt_t r = pmt::make_dict();
    r = pmt::dict_add(r, key("range_bin"), pmt::from_uint64(d.range_bin));
    r = pmt::dict_add(r, key("doppler_bin"), pmt::from_uint64(d.doppler_bin));
    r = pmt::dict_add(r, key("channel"), pmt::from_uint64(channel));
    r = pmt::dict_add(r, key("cpi"), pmt::from_uint64(axes.index));
    if (item >= 0)
        r = pmt::dict_add(r, key("item"), pmt::from_uint64(std::uint64_t(item)));
    r = pmt::dict_add(r, key("power"), pmt::from_double(power));
    r = pmt::dict_add(r, key("threshold"), pmt::from_double(d.threshold));
    r = pmt::dict_add(r, key("noise"), pmt::from_double(noise));
    r = pmt::dict_add(r, key("snr_db"), pmt::from_double(snr_db));
    if (axes.has_range)
        r = pmt::dict_add(r, key("range_m"), pmt::from_double(axes.range_m(d.range_bin)));
    if (axes.has_velocity)
        r = pmt::dict_add(
            r, key("velocity_mps"), pmt::from_double(axes.velocity_mps(d.doppler_bin)));
    if (axes.rx_time)
        r = pmt::dict_add(r, key("rx_time"), axes.rx_time);
    return r;
}

pmt::pmt_t detections_pdu(const pmt::pmt_t& meta, const std::vector<pmt::pmt_t>& dets)
{
    pmt::pmt_t v = pmt::make_vector(dets.size(), pmt::PMT_NIL);
    for (std::size_t i = 0; i < dets.size(); ++i)
        pmt::vector_set(v, i, dets[i]);
    return pmt::cons(meta, v);
}

pmt::pmt_t detections_meta(const pmt::pmt_t& cpi_dict,
                           std::uint64_t index,
                           std::uint64_t channels,
                           const kernels::cfar_report& report,
                           std::uint64_t nonfinite,
                           double alpha,
                           kernels::cfar_variant variant)
{
    pmt::pmt_t m = (cpi_dict && pmt::is_dict(cpi_dict)) ? cpi_dict : pmt::make_dict();
    m = pmt::dict_add(m, key("cpi"), pmt::from_uint64(index));
    m = pmt::dict_add(m, key("channels"), pmt::from_uint64(channels));
    m = pmt::dict_add(m, key("ndetections"), pmt::from_uint64(report.detections.size()));
    m = pmt::dict_add(m, key("found"), pmt::from_uint64(report.found));
    m = pmt::dict_add(m, key("overflow"), pmt::from_bool(report.overflow()));
    m = pmt::dict_add(m, key("nonfinite"), pmt::from_uint64(nonfinite));
    m = pmt::dict_add(m, key("alpha"), pmt::from_double(alpha));
    m = pmt::dict_add(m, key("variant"), pmt::intern(kernels::to_string(variant)));
    return m;
}

cpi_group_tags split_group_tags(const std::vector<gr::tag_t>& tags, std::uint64_t start)
{
    cpi_group_tags g;
    const pmt::pmt_t k = cpi_tag_key();
    for (const auto& t : tags) {
        if (!pmt::eqv(t.key, k)) {
            g.other.push_back(t);
            continue;
        }
        if (t.offset == start) {
            g.cpi = t.value;
        } else if (g.cut == 0 || t.offset - start < g.cut) {
            g.cut = t.offset - start;
        }
    }
    return g;
}

} // namespace gpuradar
} // namespace gr
