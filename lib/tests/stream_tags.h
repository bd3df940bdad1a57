/* Stream tags the block tests feed in: a `cpi` tag of a given shape, a `stripmap` tag
 * and UHD's rx_time and rx_rate. */
#ifndef INCLUDED_GPURADAR_TEST_STREAM_TAGS_H
#define INCLUDED_GPURADAR_TEST_STREAM_TAGS_H

#include <gnuradio/tags.h>
#include <initializer_list>
#include <pmt/pmt.h>
#include <cstdint>
#include <utility>
#include <vector>

namespace gpuradar::test {

//! A `cpi` tag at `offset`: {index, npulses, nrange, fs}.
inline gr::tag_t cpi_tag(std::uint64_t offset,
                         std::uint64_t index,
                         std::uint64_t npulses,
                         std::uint64_t nrange,
                         double fs)
{
    pmt::pmt_t d = pmt::make_dict();
    d = pmt::dict_add(d, pmt::intern("index"), pmt::from_uint64(index));
    d = pmt::dict_add(d, pmt::intern("npulses"), pmt::from_uint64(npulses));
    d = pmt::dict_add(d, pmt::intern("nrange"), pmt::from_uint64(nrange));
    d = pmt::dict_add(d, pmt::intern("fs"), pmt::from_double(fs));
    gr::tag_t t;
    t.offset = offset;
    t.key = pmt::intern("cpi");
    t.value = d;
    return t;
}

//! A `stripmap` tag at `offset` with an acquisition field (fc), the strip's y0 and pulse.
inline gr::tag_t
strip_tag(std::uint64_t offset, double fc, double y0, std::uint64_t pulse)
{
    pmt::pmt_t d = pmt::make_dict();
    d = pmt::dict_add(d, pmt::intern("fc"), pmt::from_double(fc));
    d = pmt::dict_add(d, pmt::intern("y0"), pmt::from_double(y0));
    d = pmt::dict_add(d, pmt::intern("pulse"), pmt::from_uint64(pulse));
    gr::tag_t t;
    t.offset = offset;
    t.key = pmt::intern("stripmap");
    t.value = d;
    return t;
}

//! UHD's rx_time tag: (uint64 whole seconds, double fraction).
inline gr::tag_t rx_time_tag(std::uint64_t offset, std::uint64_t secs, double frac)
{
    gr::tag_t t;
    t.offset = offset;
    t.key = pmt::intern("rx_time");
    t.value = pmt::make_tuple(pmt::from_uint64(secs), pmt::from_double(frac));
    return t;
}

//! rx_rate tags (offset, samples/s) for a vector source.
inline std::vector<gr::tag_t>
rate_tags(std::initializer_list<std::pair<std::uint64_t, double>> at)
{
    std::vector<gr::tag_t> tags;
    for (const auto& [offset, rate] : at) {
        gr::tag_t t;
        t.offset = offset;
        t.key = pmt::mp("rx_rate");
        t.value = pmt::from_double(rate);
        tags.push_back(t);
    }
    return tags;
}

} // namespace gpuradar::test

#endif
