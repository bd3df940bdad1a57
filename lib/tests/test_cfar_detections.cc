/*
 * The detections PDU's dicts (lib/cfar_detections.h) against the same dicts built with
 * one pmt::dict_add per field, the list GNU Radio users and the tracker read: the
 * detection dict with and without axes, and the metadata on a cpi dict that does not
 * hold the added keys and on one that does (its values replaced, each key once).
 */
#include "../cfar_detections.h"
#include <gtest/gtest.h>
#include <chrono>
#include <cmath>
#include <string>
#include <vector>

namespace gpuradar::test {
namespace {

using gr::gpuradar::cpi_axes;
namespace k = ::gpuradar::kernels;

pmt::pmt_t add(const pmt::pmt_t& d, const char* key, const pmt::pmt_t& v)
{
    return pmt::dict_add(d, pmt::intern(key), v);
}

//! The number of entries of `key` in the dict's list.
int count_key(const pmt::pmt_t& dict, const char* key)
{
    int n = 0;
    for (pmt::pmt_t p = dict; pmt::is_pair(p); p = pmt::cdr(p))
        n += pmt::eqv(pmt::caar(p), pmt::intern(key)) ? 1 : 0;
    return n;
}

k::cfar_detection detection()
{
    k::cfar_detection d;
    d.map = 3;
    d.range_bin = 417;
    d.doppler_bin = 29;
    d.power = 81.5f;
    d.threshold = 20.25f;
    d.noise = 1.5f;
    return d;
}

TEST(CfarDetections, DetectionDictIsTheDictAddList)
{
    const k::cfar_detection d = detection();
    for (const bool axes_known : { false, true }) {
        SCOPED_TRACE(axes_known ? "with axes" : "without axes");
        cpi_axes a;
        a.index = 12;
        if (axes_known) {
            a.has_range = true;
            a.r0 = 150.0;
            a.bin_m = 7.5;
            a.has_velocity = true;
            a.prf = 2000.0;
            a.fc = 1e9;
            a.ndoppler = 64;
            a.rx_time = pmt::make_tuple(pmt::from_uint64(5), pmt::from_double(0.25));
        }
        pmt::pmt_t want = pmt::make_dict();
        want = add(want, "range_bin", pmt::from_uint64(d.range_bin));
        want = add(want, "doppler_bin", pmt::from_uint64(d.doppler_bin));
        want = add(want, "channel", pmt::from_uint64(1));
        want = add(want, "cpi", pmt::from_uint64(a.index));
        want = add(want, "item", pmt::from_uint64(40));
        want = add(want, "power", pmt::from_double(d.power));
        want = add(want, "threshold", pmt::from_double(d.threshold));
        want = add(want, "noise", pmt::from_double(d.noise));
        want = add(want,
                   "snr_db",
                   pmt::from_double(10.0 * std::log10(double(d.power) / d.noise)));
        if (axes_known) {
            want = add(want, "range_m", pmt::from_double(a.range_m(d.range_bin)));
            want = add(
                want, "velocity_mps", pmt::from_double(a.velocity_mps(d.doppler_bin)));
            want = add(want, "rx_time", a.rx_time);
        }
        EXPECT_TRUE(pmt::equal(gr::gpuradar::detection_dict(d, a, 1, 40), want));
    }
}

TEST(CfarDetections, MetaOnACpiDictReplacesTheKeysItHolds)
{
    k::cfar_report r;
    r.detections = { detection(), detection() };
    r.found = 5;
    const auto variant = k::cfar_variant::os;
    const auto reference = [&](pmt::pmt_t m) {
        m = add(m, "cpi", pmt::from_uint64(9));
        m = add(m, "channels", pmt::from_uint64(4));
        m = add(m, "ndetections", pmt::from_uint64(2));
        m = add(m, "found", pmt::from_uint64(5));
        m = add(m, "overflow", pmt::PMT_T);
        m = add(m, "nonfinite", pmt::from_uint64(7));
        m = add(m, "alpha", pmt::from_double(3.5));
        m = add(m, "variant", pmt::intern(k::to_string(variant)));
        return m;
    };
    pmt::pmt_t tag = pmt::make_dict();
    for (int i = 0; i < 30; ++i)
        tag = add(tag, ("field_" + std::to_string(i)).c_str(), pmt::from_long(i));
    const pmt::pmt_t fresh = gr::gpuradar::detections_meta(tag, 9, 4, r, 7, 3.5, variant);
    EXPECT_TRUE(pmt::equal(fresh, reference(tag)));
    // A tag that already carries two of the keys: replaced, each listed once.
    pmt::pmt_t holding = add(tag, "alpha", pmt::from_double(-1.0));
    holding = add(holding, "cpi", pmt::from_uint64(1000));
    const pmt::pmt_t replaced =
        gr::gpuradar::detections_meta(holding, 9, 4, r, 7, 3.5, variant);
    EXPECT_TRUE(pmt::equal(replaced, reference(holding)));
    EXPECT_EQ(count_key(replaced, "cpi"), 1);
    EXPECT_EQ(count_key(replaced, "alpha"), 1);
    EXPECT_EQ(pmt::to_uint64(pmt::dict_ref(replaced, pmt::intern("cpi"), pmt::PMT_NIL)),
              9u);
    // No cpi dict (nil): the eight fields alone.
    EXPECT_TRUE(
        pmt::equal(gr::gpuradar::detections_meta(pmt::PMT_NIL, 9, 4, r, 7, 3.5, variant),
                   reference(pmt::make_dict())));
}

// The counters' rate limit (log_limiter.h): the first event, then one in `every` or the
// first after `interval`, each line knowing how many were silent before it.
TEST(LogLimiter, FirstThenEveryNthOrAfterTheInterval)
{
    using clock = gr::gpuradar::log_limiter::clock;
    gr::gpuradar::log_limiter limit(100, std::chrono::seconds(10));
    const clock::time_point t0{};
    std::vector<int> logged;
    std::vector<std::uint64_t> quiet;
    for (int i = 1; i <= 250; ++i)
        if (limit.count(t0 + std::chrono::milliseconds(i))) {
            logged.push_back(i);
            quiet.push_back(limit.suppressed());
        }
    EXPECT_EQ(logged, (std::vector<int>{ 1, 101, 201 }));
    EXPECT_EQ(quiet, (std::vector<std::uint64_t>{ 0, 99, 99 }));
    EXPECT_EQ(limit.quiet_note(), ", 99 of them since the last line not logged");
    // A slow trickle: within the interval nothing; 10 s after the last line the next
    // one is logged, with the 50 silent since (202..250 and the one at 5 s).
    EXPECT_FALSE(limit.count(t0 + std::chrono::seconds(5)));
    EXPECT_TRUE(
        limit.count(t0 + std::chrono::milliseconds(201) + std::chrono::seconds(10)));
    EXPECT_EQ(limit.suppressed(), 50u);
    EXPECT_FALSE(limit.count(t0 + std::chrono::seconds(12)));
}

} // namespace
} // namespace gpuradar::test
