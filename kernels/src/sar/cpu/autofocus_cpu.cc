/* Autofocus (phase-gradient and minimum-entropy), CPU twin (FFTW). */
#include "common/cpu/fftw_plan.h"
#include "common/param_check.h"
#include "sar/autofocus_backends.h"
#include <algorithm>
#include <cmath>
#include <cstring>

namespace gpuradar::kernels::detail {
namespace {

class autofocus_cpu final : public autofocus
{
public:
    autofocus_cpu(std::size_t nrange, std::size_t naz, const options& o)
        : autofocus(nrange, naz, o),
          d_kept(nrange * naz),
          d_scratch(fftwf_alloc(nrange * naz)),
          d_peaks(nrange),
          d_layout{ nrange, naz, o.azimuth_contiguous },
          d_inverse(int(naz), int(nrange), 1, int(naz), FFTW_BACKWARD, true, "autofocus"),
          d_image_inverse(int(naz),
                          int(nrange),
                          d_layout.stride(),
                          d_layout.distance(),
                          FFTW_BACKWARD,
                          true,
                          "autofocus"),
          d_image_forward(int(naz),
                          int(nrange),
                          d_layout.stride(),
                          d_layout.distance(),
                          FFTW_FORWARD,
                          true,
                          "autofocus"),
          d_forward(int(naz), int(nrange), 1, int(naz), FFTW_FORWARD, true, "autofocus")
    {
    }

private:
    std::size_t keep_input(const cfloat* in) override
    {
        std::size_t bad = 0;
        for (std::size_t i = 0; i < d_kept.size(); ++i) {
            d_kept[i] = in[i];
            bad += std::isfinite(in[i].real()) && std::isfinite(in[i].imag()) ? 0 : 1;
        }
        return bad;
    }

    void restore(cfloat* out) override
    {
        std::memcpy(out, d_kept.data(), d_kept.size() * sizeof(cfloat));
    }

    //! Step 1: each row's brightest column (the first of equals).
    void find_peaks(const cfloat* image)
    {
        for (std::size_t r = 0; r < d_nrange; ++r) {
            std::size_t best = 0;
            float top = -1.0f;
            for (std::size_t c = 0; c < d_naz; ++c) {
                const cfloat v = image[d_layout.index(r, c)];
                const float p = v.real() * v.real() + v.imag() * v.imag();
                if (p > top) {
                    top = p;
                    best = c;
                }
            }
            d_peaks[r] = best;
        }
    }

    void centre(const cfloat* image, std::vector<double>& profile) override
    {
        find_peaks(image);
        cfloat* g = d_scratch.get();
        for (std::size_t r = 0; r < d_nrange; ++r)
            for (std::size_t c = 0; c < d_naz; ++c)
                g[r * d_naz + c] = image[d_layout.index(r, (c + d_peaks[r]) % d_naz)];
        d_inverse.execute(g, g);
        for (std::size_t r = 0; r < d_nrange; ++r) {
            cfloat* row = g + r * d_naz;
            std::complex<double> s(0.0, 0.0);
            for (std::size_t n = 0; n + 1 < d_naz; ++n)
                s += std::complex<double>(row[n + 1]) *
                     std::conj(std::complex<double>(row[n]));
            const double slope = std::arg(s);
            // the 1/naz of the inverse DFT folded in
            const double scale = 1.0 / static_cast<double>(d_naz);
            for (std::size_t n = 0; n < d_naz; ++n)
                row[n] *=
                    cfloat(std::polar(scale, 2.0 * pi * pga_centring_turns(slope, n)));
        }
        d_forward.execute(g, g);
        profile.assign(d_naz, 0.0);
        for (std::size_t r = 0; r < d_nrange; ++r)
            for (std::size_t c = 0; c < d_naz; ++c)
                profile[c] += std::norm(std::complex<double>(g[r * d_naz + c]));
    }

    void phase_sums(std::size_t width, std::vector<std::complex<double>>& sums) override
    {
        cfloat* g = d_scratch.get();
        for (std::size_t r = 0; r < d_nrange; ++r)
            for (std::size_t c = 0; c < d_naz; ++c)
                if (!pga_in_window(c, d_naz, width))
                    g[r * d_naz + c] = cfloat(0, 0);
        d_inverse.execute(g, g);
        sums.assign(d_naz, std::complex<double>(0.0, 0.0));
        for (std::size_t r = 0; r < d_nrange; ++r)
            for (std::size_t n = 1; n < d_naz; ++n)
                sums[n] += std::complex<double>(g[r * d_naz + n]) *
                           std::conj(std::complex<double>(g[r * d_naz + n - 1]));
    }

    void correct(cfloat* image, const std::vector<double>& phase) override
    {
        // exp(-j e(n)) and the 1/naz of the inverse DFT, in double, rounded once
        std::vector<cfloat> factor(d_naz);
        for (std::size_t n = 0; n < d_naz; ++n)
            factor[n] = cfloat(std::polar(1.0 / static_cast<double>(d_naz), -phase[n]));
        d_image_inverse.execute(image, image);
        for (std::size_t r = 0; r < d_nrange; ++r)
            for (std::size_t n = 0; n < d_naz; ++n)
                image[d_layout.index(r, n)] *= factor[n];
        d_image_forward.execute(image, image);
    }

    // --- minimum entropy -------------------------------------------------------------
    //! The image's samples as contiguous rows (range line r, azimuth n).
    void gather_rows(const cfloat* image, cfloat* rows) const
    {
        for (std::size_t r = 0; r < d_nrange; ++r)
            for (std::size_t n = 0; n < d_naz; ++n)
                rows[r * d_naz + n] = image[d_layout.index(r, n)];
    }

    double keep_pulses(const cfloat* image) override
    {
        if (!d_pulses)
            d_pulses = fftwf_alloc(d_nrange * d_naz);
        cfloat* g = d_pulses.get();
        gather_rows(image, g);
        double energy = 0.0;
        for (std::size_t i = 0; i < d_nrange * d_naz; ++i)
            energy += std::norm(std::complex<double>(g[i]));
        d_inverse.execute(g, g);
        const float scale = 1.0f / static_cast<float>(d_naz);
        for (std::size_t i = 0; i < d_nrange * d_naz; ++i)
            g[i] *= scale;
        return energy;
    }

    double entropy(const cfloat* image, double energy) override
    {
        double h = 0.0;
        for (std::size_t i = 0; i < d_nrange * d_naz; ++i)
            h += pga_entropy_term(image[i].real(), image[i].imag(), energy);
        return h;
    }

    void entropy_gradient(const cfloat* image,
                          double energy,
                          std::vector<double>& gradient) override
    {
        cfloat* a = d_scratch.get();
        if (!d_weighted)
            d_weighted = fftwf_alloc(d_nrange * d_naz);
        cfloat* b = d_weighted.get();
        gather_rows(image, a);
        for (std::size_t i = 0; i < d_nrange * d_naz; ++i)
            b[i] = a[i] * pga_entropy_weight(a[i].real(), a[i].imag(), energy);
        d_inverse.execute(a, a);
        d_inverse.execute(b, b);
        gradient.assign(d_naz, 0.0);
        for (std::size_t r = 0; r < d_nrange; ++r)
            for (std::size_t n = 0; n < d_naz; ++n)
                gradient[n] +=
                    std::imag(std::complex<double>(a[r * d_naz + n]) *
                              std::conj(std::complex<double>(b[r * d_naz + n])));
        const double k = -2.0 / (static_cast<double>(d_naz) * energy);
        for (auto& g : gradient)
            g *= k;
    }

    void apply_phase(const std::vector<double>& phase, cfloat* image) override
    {
        cfloat* a = d_scratch.get();
        const cfloat* g = d_pulses.get();
        std::vector<cfloat> factor(d_naz);
        for (std::size_t n = 0; n < d_naz; ++n)
            factor[n] = cfloat(std::polar(1.0, -phase[n]));
        for (std::size_t r = 0; r < d_nrange; ++r)
            for (std::size_t n = 0; n < d_naz; ++n)
                a[r * d_naz + n] = g[r * d_naz + n] * factor[n];
        d_forward.execute(a, a);
        for (std::size_t r = 0; r < d_nrange; ++r)
            for (std::size_t n = 0; n < d_naz; ++n)
                image[d_layout.index(r, n)] = a[r * d_naz + n];
    }

    std::vector<cfloat> d_kept;
    fftwf_complex_array d_pulses, d_weighted; // entropy only: made on first use
    fftwf_complex_array d_scratch;
    std::vector<std::size_t> d_peaks;
    pga_layout d_layout;
    // scratch rows (azimuth contiguous) and the caller's image (its layout)
    fftwf_plan_1d d_inverse, d_image_inverse, d_image_forward, d_forward;
};

} // namespace

std::unique_ptr<autofocus>
make_autofocus_cpu(std::size_t nrange, std::size_t naz, const autofocus::options& o)
{
    return std::make_unique<autofocus_cpu>(nrange, naz, o);
}

} // namespace gpuradar::kernels::detail
