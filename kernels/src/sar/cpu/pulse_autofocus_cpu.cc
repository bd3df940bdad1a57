/* Phase-history autofocus sums on the CPU: the twin of the CUDA backend (same terms,
 * sums in double, pulses in order). */
#include "sar/pulse_autofocus_backends.h"
#include <complex>
#include <vector>

namespace gpuradar::kernels::detail {
namespace {

using cdouble = std::complex<double>;

class pulse_autofocus_cpu final : public pulse_autofocus
{
public:
    pulse_autofocus_cpu(std::size_t npulses, std::size_t nbins, std::size_t npixels)
        : pulse_autofocus(npulses, nbins, npixels),
          d_d(npulses * npixels),
          d_u(npulses * npixels),
          d_b(npulses * npixels)
    {
    }

    void image(const double* phi, cdouble* out) override
    {
        // Real arithmetic: std::complex's product checks for NaN (__muldc3) and runs
        // several times slower.
        std::vector<double> re(d_npixels, 0.0), im(d_npixels, 0.0);
        for (std::size_t n = 0; n < d_npulses; ++n) {
            const double c = std::cos(phi[n]), s = -std::sin(phi[n]);
            const cfloat* row = &d_d[n * d_npixels];
            for (std::size_t p = 0; p < d_npixels; ++p) {
                const double x = row[p].real(), y = row[p].imag();
                re[p] += c * x - s * y;
                im[p] += c * y + s * x;
            }
        }
        for (std::size_t p = 0; p < d_npixels; ++p)
            out[p] = cdouble(re[p], im[p]);
    }

    void project(const cdouble* w, cdouble* y) override
    {
        for (std::size_t n = 0; n < d_npulses; ++n) {
            const cfloat* row = &d_d[n * d_npixels];
            double re = 0.0, im = 0.0;
            for (std::size_t p = 0; p < d_npixels; ++p) {
                const double x = row[p].real(), v = row[p].imag();
                re += x * w[p].real() - v * w[p].imag();
                im += x * w[p].imag() + v * w[p].real();
            }
            y[n] = cdouble(re, im);
        }
    }

protected:
    void form_terms(const cfloat* pulses,
                    const double* geometry,
                    const grid& g,
                    const std::int32_t* pixels) override
    {
        for (std::size_t n = 0; n < d_npulses; ++n) {
            const float* row = reinterpret_cast<const float*>(pulses + n * d_nbins);
            for (std::size_t p = 0; p < d_npixels; ++p) {
                const double px = g.x0 + g.dx * pixels[2 * p + 1];
                const double py = g.y0 + g.dy * pixels[2 * p];
                const pha_term t =
                    pha_make_term(row, d_nbins, geometry + 6 * n, px, py, g.z);
                const std::size_t i = n * d_npixels + p;
                d_d[i] = cfloat(t.d_re, t.d_im);
                d_u[i] = cfloat(t.u_re, t.u_im);
                d_b[i] = t.b;
            }
        }
    }

    void echoes(std::size_t ntargets,
                const std::int32_t* centres,
                const std::int32_t* start,
                const std::int32_t* window,
                const cdouble* img,
                cdouble* g) override
    {
        for (std::size_t t = 0; t < ntargets; ++t)
            for (std::size_t n = 0; n < d_npulses; ++n) {
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
                g[t * d_npulses + n] = cdouble(cr * re - ci * im, cr * im + ci * re);
            }
    }

private:
    std::vector<cfloat> d_d, d_u;
    std::vector<float> d_b;
};

} // namespace

std::unique_ptr<pulse_autofocus>
make_pulse_autofocus_cpu(std::size_t npulses, std::size_t nbins, std::size_t npixels)
{
    return std::make_unique<pulse_autofocus_cpu>(npulses, nbins, npixels);
}

} // namespace gpuradar::kernels::detail
