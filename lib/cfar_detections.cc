#include "cfar_detections.h"
#include "cpi_tag.h"
#include <gnuradio/gpuradar/device_buffer.h>
#include <initializer_list>
#include <cmath>
#include <limits>
#include <numeric>
#include <utility>

namespace gr {
namespace gpuradar {

pmt::pmt_t detections_port()
{
    static const pmt::pmt_t port = pmt::intern("detections");
    return port;
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

/*
 * The keys of the detection dicts and of the PDU's metadata, interned once: pmt::intern
 * hashes and looks the name up on every call, and with dict_add's search of the dict for
 * each key it was most of a detection dict's cost, paid per detection on the block's
 * work thread.
 */
struct detection_keys {
    const pmt::pmt_t range_bin = key("range_bin"), doppler_bin = key("doppler_bin");
    const pmt::pmt_t channel = key("channel"), cpi = key("cpi"), item = key("item");
    const pmt::pmt_t power = key("power"), threshold = key("threshold");
    const pmt::pmt_t noise = key("noise"), snr_db = key("snr_db");
    const pmt::pmt_t range_m = key("range_m"), velocity_mps = key("velocity_mps");
    const pmt::pmt_t rx_time = key("rx_time");
    const pmt::pmt_t range_bin_interp = key("range_bin_interp");
    const pmt::pmt_t doppler_bin_interp = key("doppler_bin_interp");
    const pmt::pmt_t cells = key("cells");
    const pmt::pmt_t channels = key("channels"), ndetections = key("ndetections");
    const pmt::pmt_t found = key("found"), overflow = key("overflow");
    const pmt::pmt_t nonfinite = key("nonfinite"), alpha = key("alpha");
    const pmt::pmt_t variant = key("variant");
};

const detection_keys& keys()
{
    static const detection_keys k;
    return k;
}

//! dict with k -> v for a key it does not hold yet: the cell dict_add would prepend,
//! without dict_add's search for an existing k (the same list).
pmt::pmt_t with_new_key(const pmt::pmt_t& dict, const pmt::pmt_t& k, const pmt::pmt_t& v)
{
    return pmt::acons(k, v, dict);
}

/*
 * dict with each of `fields` added as dict_add would (a key it holds is replaced), in
 * one walk over dict instead of dict_add's walk per key: a CPI's tag dict carries a few
 * dozen keys, and the metadata adds eight fields to it every CPI.
 */
pmt::pmt_t
dict_with(pmt::pmt_t dict,
          std::initializer_list<std::pair<const pmt::pmt_t&, pmt::pmt_t>> fields)
{
    bool holds_one = false;
    for (pmt::pmt_t p = dict; pmt::is_pair(p) && !holds_one; p = pmt::cdr(p)) {
        const pmt::pmt_t k = pmt::caar(p);
        for (const auto& f : fields)
            holds_one = holds_one || pmt::eqv(k, f.first);
    }
    for (const auto& f : fields)
        dict = holds_one ? pmt::dict_add(dict, f.first, f.second)
                         : with_new_key(dict, f.first, f.second);
    return dict;
}
} // namespace

double cpi_axes::velocity_mps(double m) const
{
    // Signed Doppler bin (docs/CONVENTIONS.md): shifted spectra have zero Doppler at
    // ndoppler/2; unshifted ones wrap, bins >= ndoppler/2 are negative frequencies.
    const double nd = static_cast<double>(ndoppler);
    const double half = static_cast<double>(ndoppler / 2);
    double k = m;
    if (fftshift)
        k -= half;
    else if (k >= half && ndoppler > 1)
        k -= nd;
    return k * prf / nd * kernels::speed_of_light / (path * fc);
}

cpi_axes read_cpi_axes(const pmt::pmt_t& dict, std::uint64_t index, bool doppler_axis)
{
    cpi_axes a;
    a.index = index;
    if (cpi_bool(dict, "bistatic", false))
        a.path = 1.0;
    const double fs = cpi_double(dict, "fs", 0.0);
    if (fs > 0.0 && std::isfinite(fs)) {
        a.has_range = true;
        a.r0 = cpi_double(dict, "r0", 0.0);
        a.bin_m = kernels::speed_of_light / (a.path * fs);
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
    const detection_keys& k = keys();
    pmt::pmt_t r = pmt::make_dict();
    r = with_new_key(r, k.range_bin, pmt::from_uint64(d.range_bin));
    r = with_new_key(r, k.doppler_bin, pmt::from_uint64(d.doppler_bin));
    r = with_new_key(r, k.channel, pmt::from_uint64(channel));
    r = with_new_key(r, k.cpi, pmt::from_uint64(axes.index));
    if (item >= 0)
        r = with_new_key(r, k.item, pmt::from_uint64(std::uint64_t(item)));
    r = with_new_key(r, k.power, pmt::from_double(power));
    r = with_new_key(r, k.threshold, pmt::from_double(d.threshold));
    r = with_new_key(r, k.noise, pmt::from_double(noise));
    r = with_new_key(r, k.snr_db, pmt::from_double(snr_db));
    if (axes.has_range)
        r = with_new_key(r, k.range_m, pmt::from_double(axes.range_m(d.range_bin)));
    if (axes.has_velocity)
        r = with_new_key(
            r, k.velocity_mps, pmt::from_double(axes.velocity_mps(d.doppler_bin)));
    if (axes.rx_time)
        r = with_new_key(r, k.rx_time, axes.rx_time);
    return r;
}

pmt::pmt_t clustered_detection_dict(const kernels::clustered_detection& c,
                                    const cpi_axes& axes,
                                    std::uint64_t channel,
                                    long item)
{
    const detection_keys& k = keys();
    pmt::pmt_t r = detection_dict(c.peak, axes, channel, item);
    r = with_new_key(r, k.range_bin_interp, pmt::from_double(c.range_bin));
    r = with_new_key(r, k.doppler_bin_interp, pmt::from_double(c.doppler_bin));
    r = with_new_key(r, k.cells, pmt::from_uint64(c.cells));
    // The peak's range and velocity, replaced by the interpolated ones.
    if (axes.has_range)
        r = pmt::dict_add(r, k.range_m, pmt::from_double(axes.range_m(c.range_bin)));
    if (axes.has_velocity)
        r = pmt::dict_add(
            r, k.velocity_mps, pmt::from_double(axes.velocity_mps(c.doppler_bin)));
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
    const detection_keys& k = keys();
    const pmt::pmt_t m =
        (cpi_dict && pmt::is_dict(cpi_dict)) ? cpi_dict : pmt::make_dict();
    return dict_with(m,
                     { { k.cpi, pmt::from_uint64(index) },
                       { k.channels, pmt::from_uint64(channels) },
                       { k.ndetections, pmt::from_uint64(report.detections.size()) },
                       { k.found, pmt::from_uint64(report.found) },
                       { k.overflow, pmt::from_bool(report.overflow()) },
                       { k.nonfinite, pmt::from_uint64(nonfinite) },
                       { k.alpha, pmt::from_double(alpha) },
                       { k.variant, pmt::intern(kernels::to_string(variant)) } });
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

gr::io_signature::sptr cfar_output_signature(kernels::backend b, std::size_t cells)
{
    const int mask_size = static_cast<int>(cells * sizeof(std::uint8_t));
    const int thr_size = static_cast<int>(cells * sizeof(float));
    if (b == kernels::backend::cuda)
        return gr::io_signature::make2(
            1, 2, mask_size, thr_size, device_buffer::type, device_buffer::type);
    return gr::io_signature::make2(1, 2, mask_size, thr_size);
}

std::string cfar_shape_mismatch(const pmt::pmt_t& dict, const cfar_layout& l)
{
    const std::uint64_t nr = cpi_field(dict, "nrange", l.nrange);
    const std::uint64_t ch = cpi_field(dict, "channels", l.channels);
    if (l.lines()) {
        if (nr == l.nrange && ch == l.channels)
            return {};
        return "cpi tag shape nrange=" + std::to_string(nr) +
               ", channels=" + std::to_string(ch) +
               " differs from the block's nrange=" + std::to_string(l.nrange) +
               ", channels=" + std::to_string(l.channels);
    }
    // After the Doppler filter the item holds ndoppler bins; before, npulses.
    const std::uint64_t nd =
        cpi_field(dict, "ndoppler", cpi_field(dict, "npulses", l.ndoppler));
    if (nr == l.nrange && nd == l.ndoppler && ch == l.channels)
        return {};
    return "cpi tag shape nrange=" + std::to_string(nr) +
           ", ndoppler=" + std::to_string(nd) + ", channels=" + std::to_string(ch) +
           " differs from the block's nrange=" + std::to_string(l.nrange) +
           ", ndoppler=" + std::to_string(l.ndoppler) +
           ", channels=" + std::to_string(l.channels);
}

cfar_framer::decision cfar_framer::next(const pmt::pmt_t& tag)
{
    decision f;
    if (tag) {
        f.reason = cfar_shape_mismatch(tag, d_layout);
        if (!f.reason.empty()) {
            f.drop = true;
            d_last_tag = pmt::pmt_t(); // its CPI is unusable: do not label items by it
            return f;
        }
    }
    if (!d_layout.lines()) {
        // cfar_2d: every group is a CPI.
        f.dict = tag;
        if (f.dict) {
            d_index = cpi_field(f.dict, "index", d_index);
        } else {
            f.dict = pmt::make_dict();
            f.dict =
                pmt::dict_add(f.dict, pmt::intern("index"), pmt::from_uint64(d_index));
            f.dict = pmt::dict_add(
                f.dict, pmt::intern("nrange"), pmt::from_uint64(d_layout.nrange));
            f.dict = pmt::dict_add(
                f.dict, pmt::intern("ndoppler"), pmt::from_uint64(d_layout.ndoppler));
        }
        f.index = d_index++;
        f.emit = f.dict;
        return f;
    }
    // cfar_1d: groups belong to the last tag's CPI.
    if (tag) {
        d_index = cpi_field(tag, "index", d_last_tag ? d_index + 1 : d_index);
        d_last_tag = tag;
        d_item_base = 0;
        f.emit = tag;
    } else if (!d_last_tag) {
        // No tag seen: each group is a CPI of its own, counted from the start.
        f.emit = pmt::make_dict();
        f.emit = pmt::dict_add(f.emit, pmt::intern("index"), pmt::from_uint64(d_index));
        f.emit = pmt::dict_add(
            f.emit, pmt::intern("nrange"), pmt::from_uint64(d_layout.nrange));
    }
    f.dict = d_last_tag ? d_last_tag : f.emit;
    f.index = d_index;
    f.first_item = static_cast<std::int64_t>(d_item_base);
    if (d_last_tag)
        d_item_base += d_layout.group;
    else
        ++d_index;
    return f;
}

pmt::pmt_t cfar_report_pdu(const kernels::cfar_report& report,
                           const cfar_framer::decision& g,
                           const cfar_layout& l,
                           double alpha,
                           const gr::logger_ptr& logger,
                           cfar_counters& counters,
                           const angle_source& angles)
{
    const std::uint64_t nonfinite = std::accumulate(
        report.nonfinite.begin(), report.nonfinite.end(), std::uint64_t(0));
    const std::string where = g.first_item >= 0
                                  ? "cpi " + std::to_string(g.index) + " (items from " +
                                        std::to_string(g.first_item) + ")"
                                  : "cpi " + std::to_string(g.index);
    // Trace, not debug: Debian's GNU Radio logs debug by default, and this is per CPI.
    logger->trace("{}: {} detections, {} NaN/Inf cells", where, report.found, nonfinite);
    if (nonfinite) {
        const std::uint64_t total = counters.nonfinite += nonfinite;
        if (counters.nonfinite_log.count())
            logger->warn("{}: {} NaN/Inf cells (never detections; {} so far{})",
                         where,
                         nonfinite,
                         total,
                         counters.nonfinite_log.quiet_note());
    }
    if (report.overflow()) {
        const std::uint64_t groups = ++counters.overflowed;
        if (counters.overflow_log.count())
            logger->warn("{}: {} detections, only max_detections={} reported ({} such "
                         "maps so far{})",
                         where,
                         report.found,
                         l.max_detections,
                         groups,
                         counters.overflow_log.quiet_note());
    }
    const cpi_axes axes = read_cpi_axes(g.dict, g.index, !l.lines());
    const auto item_of = [&](std::uint32_t map) {
        return g.first_item >= 0 ? static_cast<long>(g.first_item + map / l.channels)
                                 : -1;
    };
    // The listed detections (a target's peak when clustering) and their dicts.
    std::vector<kernels::cfar_detection> peaks;
    std::vector<pmt::pmt_t> dets;
    if (l.cluster) {
        for (const auto& c : report.clusters) {
            peaks.push_back(c.peak);
            dets.push_back(clustered_detection_dict(
                c, axes, c.peak.map % l.channels, item_of(c.peak.map)));
        }
    } else {
        peaks = report.detections;
        dets.reserve(report.detections.size());
        for (const auto& d : report.detections)
            dets.push_back(detection_dict(d, axes, d.map % l.channels, item_of(d.map)));
    }
    // A power map (|x|^2) has no negative cell; dB or signed values do, and there the
    // noise estimate can be negative too, so that every cell passes its threshold. Seen
    // from the listed detections (their power is the map's own value, exact on either
    // backend), which is where such a map shows: the whole map is never scanned.
    std::uint64_t negative = 0;
    for (const auto& p : peaks)
        negative += p.power < 0;
    if (negative) {
        const std::uint64_t groups = ++counters.negative;
        if (counters.negative_log.count())
            logger->warn("{}: {} detections on negative cells: the input is not power "
                         "(|x|^2, linear; not dB or amplitude), so its thresholds and "
                         "detections mean nothing ({} such maps so far{})",
                         where,
                         negative,
                         groups,
                         counters.negative_log.quiet_note());
    }
    if (angles)
        dets = with_azimuths(
            peaks, dets, { l.channels, l.ndoppler, l.doppler_wrap }, angles);
    pmt::pmt_t meta =
        detections_meta(g.dict, g.index, l.channels, report, nonfinite, alpha, l.variant);
    if (l.cluster) {
        meta = pmt::dict_add(meta, key("clustered"), pmt::PMT_T);
        meta =
            pmt::dict_add(meta, key("cells"), pmt::from_uint64(report.clustered_cells));
    }
    if (angles)
        meta = pmt::dict_add(meta, key("angles"), pmt::PMT_T);
    meta = pmt::dict_add(meta, key("ndetections"), pmt::from_uint64(dets.size()));
    meta = pmt::dict_add(meta, key("negative_power"), pmt::from_uint64(negative));
    if (g.first_item >= 0) {
        meta = pmt::dict_add(meta, key("first_item"), pmt::from_uint64(g.first_item));
        meta = pmt::dict_add(meta, key("items"), pmt::from_uint64(l.group));
    }
    return detections_pdu(meta, dets);
}

} // namespace gpuradar
} // namespace gr
