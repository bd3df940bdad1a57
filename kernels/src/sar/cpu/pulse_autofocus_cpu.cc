/* Phase-history autofocus sums on the CPU: the twin of the CUDA backend (same terms,
 * sums in double, pulses in order). Split over the cpu_threads() pool by pixels, pulses
 * or (target, pulse): each output is summed by one thread in the same order, so the
 * result does not depend on the thread count. */
#include "common/cpu/row_pool.h"
#include "sar/pulse_autofocus_backends.h"
#include <complex>
#include <vector>

namespace gpuradar::kernels::detail {
namespace {

using cdouble = std::complex<double>;

class pulse_autofocus_cpu final : public pulse_autofocus
{
public:
    pulse_autofocus_cpu(std::size_t npulses,
                        std::size_t nbins,
                        std::size_t npixels,
                        interpolator interp)
        : pulse_autofocus(npulses, nbins, npixels, interp),
          d_d(npulses * npixels),
          d_u(npulses * npixels),
          d_b(npulses * npixels)
    {
        if (interp == interpolator::sinc16)
            d_sinc_table = pha_sinc_table();
    }

    void image(const double* phi, cdouble* out) override
    {
        // Real arithmetic: std::complex's product checks for NaN (__muldc3) and runs
        // several times slower.
        std::vector<double> cs(d_npulses), sn(d_npulses);
        for (std::size_t n = 0; n < d_npulses; ++n) {
            cs[n] = std::cos(phi[n]);
            sn[n] = -std::sin(phi[n]);
        }
        std::vector<double> re(d_npixels, 0.0), im(d_npixels, 0.0);
        parallel_rows(
            d_npixels, 1024, ~0u, [&](std::size_t p0, std::size_t p1, unsigned) {
                for (std::size_t n = 0; n < d_npulses; ++n) {
                    const double c = cs[n], s = sn[n];
                    const cfloat* row = &d_d[n * d_npixels];
                    for (std::size_t p = p0; p < p1; ++p) {
                        const double x = row[p].real(), y = row[p].imag();
                        re[p] += c * x - s * y;
                        im[p] += c * y + s * x;
                    }
                }
            });
        for (std::size_t p = 0; p < d_npixels; ++p)
            out[p] = cdouble(re[p], im[p]);
    }

    void project(const cdouble* w, cdouble* y) override
    {
        parallel_rows(d_npulses, 8, ~0u, [&](std::size_t n0, std::size_t n1, unsigned) {
            for (std::size_t n = n0; n < n1; ++n) {
                const cfloat* row = &d_d[n * d_npixels];
                double re = 0.0, im = 0.0;
                for (std::size_t p = 0; p < d_npixels; ++p) {
                    const double x = row[p].real(), v = row[p].imag();
                    re += x * w[p].real() - v * w[p].imag();
                    im += x * w[p].imag() + v * w[p].real();
                }
                y[n] = cdouble(re, im);
            }
        });
    }

protected:
    void form_terms(const cfloat* pulses,
                    const double* geometry,
                    const grid& g,
                    const std::int32_t* pixels) override
    {
        if (d_interp == interpolator::sinc16)
            form<interpolator::sinc16>(pulses, geometry, g, pixels);
        else
            form<interpolator::linear>(pulses, geometry, g, pixels);
    }

    void echoes(std::size_t ntargets,
                const std::int32_t* centres,
                const std::int32_t* start,
                const std::int32_t* window,
                const cdouble* img,
                cdouble* g) override
    {
        parallel_rows(
            ntargets * d_npulses, 16, ~0u, [&](std::size_t i0, std::size_t i1, unsigned) {
                for (std::size_t j = i0; j < i1; ++j) {
                    const std::size_t t = j / d_npulses, n = j % d_npulses;
                    const std::size_t base = n * d_npixels;
                    const std::size_t c = base + std::size_t(centres[t]);
                    double re = 0.0, im = 0.0;
                    for (std::int32_t k = start[t]; k < start[t + 1]; ++k) {
                        const std::size_t i = base + std::size_t(window[k]);
                        const double w = pha_tri(d_b[i] - d_b[c]);
                        if (w > 0.0) { // w conj(U) x
                            const double ur = d_u[i].real(), ui = d_u[i].imag();
                            const cdouble x = img[window[k]];
                            re += w * (ur * x.real() + ui * x.imag());
                            im += w * (ur * x.imag() - ui * x.real());
                        }
                    }
                    const double cr = d_u[c].real(), ci = d_u[c].imag();
                    g[j] = cdouble(cr * re - ci * im, cr * im + ci * re);
                }
            });
    }

private:
    template <interpolator I>
    void form(const cfloat* pulses,
              const double* geometry,
              const grid& g,
              const std::int32_t* pixels)
    {
        parallel_rows(d_npulses, 4, ~0u, [&](std::size_t n0, std::size_t n1, unsigned) {
            for (std::size_t n = n0; n < n1; ++n) {
                const float* row = reinterpret_cast<const float*>(pulses + n * d_nbins);
                for (std::size_t p = 0; p < d_npixels; ++p) {
                    const double px = g.x0 + g.dx * pixels[2 * p + 1];
                    const double py = g.y0 + g.dy * pixels[2 * p];
                    const pha_term t = pha_make_term<I>(
                        row, d_nbins, geometry + 6 * n, px, py, g.z, d_sinc_table.data());
                    const std::size_t i = n * d_npixels + p;
                    d_d[i] = cfloat(t.d_re, t.d_im);
                    d_u[i] = cfloat(t.u_re, t.u_im);
                    d_b[i] = t.b;
                }
            }
        });
    }

    std::vector<cfloat> d_d, d_u;
    std::vector<float> d_b;
    std::vector<double> d_sinc_table; //!< sinc16's, empty for linear
};

} // namespace

std::unique_ptr<pulse_autofocus>
make_pulse_autofocus_cpu(std::size_t npulses,
                         std::size_t nbins,
                         std::size_t npixels,
                         pulse_autofocus::interpolator interp)
{
    return std::make_unique<pulse_autofocus_cpu>(npulses, nbins, npixels, interp);
}

} // namespace gpuradar::kernels::detail
