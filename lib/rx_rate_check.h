/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef INCLUDED_GPURADAR_RX_RATE_CHECK_H
#define INCLUDED_GPURADAR_RX_RATE_CHECK_H

#include <gnuradio/tags.h>
#include <fmt/format.h>
#include <pmt/pmt.h>
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace gr {
namespace gpuradar {

/*!
 * The sample rate each input of a multi-channel block is in, from the `rx_rate` stream
 * tags (double, samples/s) that GNU Radio's UHD, Soapy and osmosdr sources and the
 * module's sources put on their first sample and on every rate change. A tag holds from
 * its sample on; an input without one has an unknown rate, which agrees with any.
 * Rates agree within one part in 1e9 (a double's rounding of the same rate), anything
 * more is a different rate: coherent processing of channels at different rates mixes
 * samples of different times.
 */
class rx_rate_check
{
public:
    static const pmt::pmt_t& key()
    {
        static const pmt::pmt_t k = pmt::mp("rx_rate");
        return k;
    }

    explicit rx_rate_check(std::vector<std::string> input_names)
        : d_names(std::move(input_names)), d_rate(d_names.size(), 0.0)
    {
    }

    //! Takes input k's `rx_rate` tags (any order) up to the end of what is processed
    //! next: the last one in stream order sets the rate. Non-numeric or non-positive
    //! values are ignored (returned count) and leave the rate as it was.
    std::size_t see(std::size_t k, std::vector<gr::tag_t> tags)
    {
        std::sort(tags.begin(), tags.end(), gr::tag_t::offset_compare);
        std::size_t ignored = 0;
        for (const auto& t : tags) {
            const double r = pmt::is_number(t.value) && !pmt::is_complex(t.value)
                                 ? pmt::to_double(t.value)
                                 : 0.0;
            if (r > 0.0 && std::isfinite(r))
                d_rate[k] = r;
            else
                ++ignored;
        }
        return ignored;
    }

    //! Input k's rate, 0 while no tag has given one.
    double rate(std::size_t k) const { return d_rate[k]; }

    //! "" when every known rate agrees with input 0's; else the first disagreement in
    //! words: both inputs named, both rates.
    std::string disagreement() const
    {
        if (!(d_rate[0] > 0.0))
            return {};
        for (std::size_t k = 1; k < d_rate.size(); ++k)
            if (d_rate[k] > 0.0 && !agree(d_rate[0], d_rate[k]))
                return fmt::format("rx_rate {:.9g} Sa/s on {} but {:.9g} Sa/s on {}",
                                   d_rate[0],
                                   d_names[0],
                                   d_rate[k],
                                   d_names[k]);
        return {};
    }

    static bool agree(double a, double b)
    {
        return std::abs(a - b) <= 1e-9 * std::max(std::abs(a), std::abs(b));
    }

private:
    std::vector<std::string> d_names;
    std::vector<double> d_rate;
};

} // namespace gpuradar
} // namespace gr

#endif
