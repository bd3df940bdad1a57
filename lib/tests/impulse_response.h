/* Impulse-response measures of a focused point target (block tests): 1-D cuts through
 * the peak, band-limited (DFT) interpolation, -3 dB width, peak and integrated sidelobe
 * ratios. */
#ifndef INCLUDED_GPURADAR_TEST_IMPULSE_RESPONSE_H
#define INCLUDED_GPURADAR_TEST_IMPULSE_RESPONSE_H

#include <gnuradio/gr_complex.h>
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstddef>
#include <vector>

namespace gpuradar::test {

struct impulse_response {
    double peak_db = 0; //!< 20 log10 of the interpolated peak magnitude
    double irw = 0;     //!< -3 dB width (samples of the cut)
    double pslr_db = 0; //!< highest sidelobe re the peak (dB)
    double islr_db = 0; //!< sidelobe energy re main-lobe energy (dB)
};

/*!
 * The cut v (length n, a power-of-two window around the peak) interpolated `up` times by
 * zero padding its DFT (exact for a band-limited response; the window wraps, so the cut
 * must decay towards its ends).
 */
inline std::vector<double> interpolated_power(const std::vector<std::complex<double>>& v,
                                              std::size_t up)
{
    const std::size_t n = v.size(), m = n * up;
    const double pi = 3.14159265358979323846;
    std::vector<std::complex<double>> spec(n);
    for (std::size_t k = 0; k < n; ++k)
        for (std::size_t i = 0; i < n; ++i)
            spec[k] += v[i] * std::polar(1.0, -2 * pi * double(k * i % n) / double(n));
    std::vector<double> p(m);
    for (std::size_t j = 0; j < m; ++j) {
        std::complex<double> s;
        for (std::size_t k = 0; k < n; ++k) {
            // frequencies -n/2 .. n/2-1 (the Nyquist bin split evenly)
            const double f = k < n / 2 ? double(k) : double(k) - double(n);
            s += spec[k] * std::polar(1.0, 2 * pi * f * double(j) / double(m));
        }
        p[j] = std::norm(s / double(n));
    }
    return p;
}

//! Measures the response in the power profile p (spacing 1/up samples).
inline impulse_response measure_profile(const std::vector<double>& p, std::size_t up)
{
    const std::size_t m = std::max_element(p.begin(), p.end()) - p.begin();
    const double half = 0.5 * p[m];
    const std::size_t n = p.size();
    auto at = [&](long i) { return p[std::size_t((i % long(n) + long(n)) % long(n))]; };
    auto edge = [&](int dir) {
        long i = long(m);
        while (at(i + dir) > half)
            i += dir;
        const double frac = (at(i) - half) / (at(i) - at(i + dir));
        return double(i) + dir * frac;
    };
    auto null = [&](int dir) {
        long i = long(m);
        while (at(i + dir) < at(i))
            i += dir;
        return i;
    };
    impulse_response r;
    r.peak_db = 10 * std::log10(p[m]);
    r.irw = (edge(+1) - edge(-1)) / double(up);
    const long lo = null(-1), hi = null(+1);
    double side = 0, side_energy = 0, main_energy = 0;
    for (long i = long(m) - long(n) / 2; i < long(m) + long(n) / 2; ++i) {
        if (i > lo && i < hi) {
            main_energy += at(i);
        } else {
            side = std::max(side, at(i));
            side_energy += at(i);
        }
    }
    r.pslr_db = 10 * std::log10(side / p[m]);
    r.islr_db = 10 * std::log10(side_energy / main_energy);
    return r;
}

//! Azimuth (first) and range (second) responses of the target peaking near
//! (row, col) of a rows x cols row-major image; cuts of `n` samples centred there.
inline std::pair<impulse_response, impulse_response>
measure_target(const std::vector<gr_complex>& img,
               std::size_t rows,
               std::size_t cols,
               std::size_t row,
               std::size_t col,
               std::size_t n = 64,
               std::size_t up = 16,
               std::size_t search = 3)
{
    // the sampled peak within +-search of the guess
    std::size_t pr = row, pc = col;
    for (std::size_t r = row - search; r <= row + search; ++r)
        for (std::size_t c = col - search; c <= col + search; ++c)
            if (std::abs(img[r * cols + c]) > std::abs(img[pr * cols + pc])) {
                pr = r;
                pc = c;
            }
    std::vector<std::complex<double>> az(n), rg(n);
    for (std::size_t i = 0; i < n; ++i) {
        const std::size_t r =
            std::min(rows - 1, std::max<std::size_t>(pr + i, n / 2) - n / 2);
        const std::size_t c =
            std::min(cols - 1, std::max<std::size_t>(pc + i, n / 2) - n / 2);
        az[i] = std::complex<double>(img[r * cols + pc]);
        rg[i] = std::complex<double>(img[pr * cols + c]);
    }
    return { measure_profile(interpolated_power(az, up), up),
             measure_profile(interpolated_power(rg, up), up) };
}

} // namespace gpuradar::test

#endif
