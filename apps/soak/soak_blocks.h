/*
 * gpuradar_soak's sinks: they check what comes out while using constant memory (a soak
 * of 10^5 CPIs must not keep per-CPI records), and report progress for the memory
 * samples.
 */
#ifndef INCLUDED_GPURADAR_SOAK_BLOCKS_H
#define INCLUDED_GPURADAR_SOAK_BLOCKS_H

#include <gnuradio/block.h>
#include <gnuradio/io_signature.h>
#include <gnuradio/sync_block.h>
#include <pmt/pmt.h>
#include <algorithm>
#include <atomic>
#include <complex>
#include <cstdint>
#include <functional>
#include <vector>

namespace gpuradar::soak {

using progress_fn = std::function<void(std::uint64_t)>;

/*!
 * Counts the cfar_2d detections PDUs: CPIs seen, CPIs out of order (their "cpi" index is
 * not the previous one plus 1), and CPIs with fewer than `expected` detections (the
 * scene's targets missed). Calls on_cpi(CPIs seen) after each.
 */
class detection_counter : public gr::block
{
public:
    detection_counter(std::size_t expected, progress_fn on_cpi)
        : gr::block("soak_detection_counter",
                    gr::io_signature::make(0, 0, 0),
                    gr::io_signature::make(0, 0, 0)),
          d_expected(expected),
          d_on_cpi(std::move(on_cpi))
    {
        message_port_register_in(pmt::mp("in"));
        set_msg_handler(pmt::mp("in"), [this](const pmt::pmt_t& pdu) { count(pdu); });
    }
    std::uint64_t cpis() const { return d_cpis; }
    std::uint64_t out_of_order() const { return d_out_of_order; }
    std::uint64_t short_cpis() const { return d_short; }
    std::uint64_t detections() const { return d_detections; }

private:
    void count(const pmt::pmt_t& pdu)
    {
        const auto index = pmt::to_uint64(
            pmt::dict_ref(pmt::car(pdu), pmt::mp("cpi"), pmt::from_uint64(~0ull)));
        const std::size_t n = pmt::length(pmt::cdr(pdu));
        if (index != d_cpis) // indices start at 0 in every flowgraph
            ++d_out_of_order;
        if (n < d_expected)
            ++d_short;
        d_detections += n;
        d_on_cpi(++d_cpis);
    }
    const std::size_t d_expected;
    const progress_fn d_on_cpi;
    std::atomic<std::uint64_t> d_cpis{ 0 }, d_out_of_order{ 0 }, d_short{ 0 },
        d_detections{ 0 };
};

/*!
 * Takes images of ny rows of nx complex pixels and compares each with the first: in
 * restart mode with the same pulses every aperture, every image must be the first one
 * again (to float rounding, relative to the first image's peak). Calls on_image(images).
 */
class image_checker : public gr::sync_block
{
public:
    image_checker(unsigned nx, unsigned ny, double tolerance, progress_fn on_image)
        : gr::sync_block("soak_image_checker",
                         gr::io_signature::make(1, 1, sizeof(std::complex<float>) * nx),
                         gr::io_signature::make(0, 0, 0)),
          d_pixels(std::size_t(nx) * ny),
          d_ny(ny),
          d_tolerance(tolerance),
          d_on_image(std::move(on_image))
    {
        set_output_multiple(int(ny));
    }
    int work(int n, gr_vector_const_void_star& in, gr_vector_void_star&) override
    {
        const auto* px = static_cast<const std::complex<float>*>(in[0]);
        for (int row = 0; row + int(d_ny) <= n; row += int(d_ny))
            check(px + std::size_t(row) * (d_pixels / d_ny));
        return n - n % int(d_ny);
    }
    std::uint64_t images() const { return d_images; }
    std::uint64_t mismatched() const { return d_mismatched; }
    double worst_relative_error() const { return d_worst; }
    //! The first image (empty before it came); read once the flowgraph is done.
    const std::vector<std::complex<float>>& first_image() const { return d_first; }

private:
    void check(const std::complex<float>* image)
    {
        if (d_first.empty()) {
            d_first.assign(image, image + d_pixels);
            for (const auto& v : d_first)
                d_peak = std::max(d_peak, double(std::abs(v)));
        } else {
            double worst = 0;
            for (std::size_t i = 0; i < d_pixels; ++i)
                worst = std::max(worst, double(std::abs(image[i] - d_first[i])));
            worst = d_peak > 0 ? worst / d_peak : worst;
            d_worst = std::max(d_worst.load(), worst);
            if (!(worst <= d_tolerance)) // NaN counts as a mismatch
                ++d_mismatched;
        }
        d_on_image(++d_images);
    }
    const std::size_t d_pixels;
    const unsigned d_ny;
    const double d_tolerance;
    const progress_fn d_on_image;
    std::vector<std::complex<float>> d_first;
    double d_peak = 0;
    std::atomic<std::uint64_t> d_images{ 0 }, d_mismatched{ 0 };
    std::atomic<double> d_worst{ 0 };
};

} // namespace gpuradar::soak

#endif
