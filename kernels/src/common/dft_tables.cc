/* Tables of complex exponentials shared by the stages (see dft_tables.h). */
#include "common/dft_tables.h"
#include "common/param_check.h"
#include <algorithm>
#include <cmath>
#include <complex>

namespace gpuradar::kernels::detail {

std::vector<cfloat> dft_twiddles(std::size_t n)
{
    std::vector<cfloat> tw(std::max<std::size_t>(n, 1));
    for (std::size_t t = 0; t < tw.size(); ++t) {
        const double ang = -2.0 * pi * double(t) / double(std::max<std::size_t>(n, 1));
        tw[t] = cfloat(float(std::cos(ang)), float(std::sin(ang)));
    }
    return tw;
}

std::vector<cfloat> dft_pass_twiddles(std::size_t l, std::size_t r)
{
    // W_l^(k n1), k n1 < l: the full table's entries, rearranged.
    const std::vector<cfloat> w = dft_twiddles(l);
    const std::size_t nb = l / r;
    std::vector<cfloat> tw(l);
    for (std::size_t n1 = 0; n1 < nb; ++n1)
        for (std::size_t k = 0; k < r; ++k)
            tw[2 * ((k / 2) * nb + n1) + k % 2] = w[k * n1];
    return tw;
}

std::vector<cfloat>
doppler_weights(const window_spec& window, std::size_t m, std::size_t nfft, bool fftshift)
{
    const auto w = window_coefficients(window, m);
    const std::size_t shift = fftshift ? nfft / 2 : 0;
    std::vector<cfloat> c(m);
    for (std::size_t n = 0; n < m; ++n) {
        // (s n) mod nfft in integers keeps the angle exact for long CPIs.
        const double turns = double((shift * n) % nfft) / double(nfft);
        c[n] = cfloat(std::polar(w[n], 2 * pi * turns));
    }
    return c;
}

} // namespace gpuradar::kernels::detail
