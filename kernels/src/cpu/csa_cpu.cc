/*
 * CPU twin of the chirp-scaling focusing (csa_backends.h has the maths).
 *
 * The image buffer is the only work array: azimuth FFT raw -> image (FFTW, strided
 * columns), then everything in place. Phase multiplies run over rows on std::threads;
 * FFTW splits each transform over its own threads where the build links them. The
 * quadratic phases are anchored exactly every `anchor` samples and advanced between
 * anchors by complex recurrence in double (drift far below float rounding).
 */
#include "../csa_backends.h"
#include "fftw_plan.h"
#include <algorithm>
#include <cmath>
#include <thread>
#include <vector>

namespace gpuradar::kernels::detail {
namespace {

using cdouble = std::complex<double>;
constexpr double two_pi = 6.28318530717958647692;
constexpr int anchor = 64;

cdouble turns_to_phasor(double turns)
{
    const double f = turns - std::rint(turns);
    return { std::cos(two_pi * f), std::sin(two_pi * f) };
}

//! d[i] *= weight(i) exp(j 2 pi q(x0 + i)), i < n; weight(i) = w ? w[i] : 1. Complex
//! products written out: std::complex's operator* checks for NaN (a library call).
void apply_quadratic(
    cfloat* d, std::size_t n, long long x0, csa_quadratic q, const float* w)
{
    const cdouble rot = turns_to_phasor(2.0 * q.c); // second difference of the phase
    const double rr = rot.real(), ri = rot.imag();
    for (std::size_t s = 0; s < n; s += anchor) {
        const double x = static_cast<double>(x0 + static_cast<long long>(s));
        const cdouble z0 = turns_to_phasor(q.a + q.b * x + q.c * x * x);
        const cdouble dz0 = turns_to_phasor(q.b + q.c * (2.0 * x + 1.0));
        double zr = z0.real(), zi = z0.imag(), dr = dz0.real(), di = dz0.imag();
        const std::size_t e = std::min(n, s + anchor);
        for (std::size_t i = s; i < e; ++i) {
            const double g = w ? static_cast<double>(w[i]) : 1.0;
            const double vr = d[i].real(), vi = d[i].imag();
            d[i] = cfloat(static_cast<float>(g * (vr * zr - vi * zi)),
                          static_cast<float>(g * (vr * zi + vi * zr)));
            const double nzr = zr * dr - zi * di, nzi = zr * di + zi * dr;
            const double ndr = dr * rr - di * ri, ndi = dr * ri + di * rr;
            zr = nzr;
            zi = nzi;
            dr = ndr;
            di = ndi;
        }
    }
}

//! d[i] *= scale exp(j 2 pi q(i)) over a whole row.
void apply_quadratic_scaled(cfloat* d, std::size_t n, csa_quadratic q, float scale)
{
    for (std::size_t i = 0; i < n; ++i)
        d[i] *= scale;
    apply_quadratic(d, n, 0, q, nullptr);
}

//! fn(row) for rows [0, nrows) split into contiguous blocks over `threads`.
template <typename F>
void parallel_rows(std::size_t nrows, unsigned threads, F&& fn)
{
    const unsigned t = static_cast<unsigned>(std::min<std::size_t>(threads, nrows));
    auto block = [&](unsigned b) {
        const std::size_t r0 = nrows * b / t, r1 = nrows * (b + 1) / t;
        for (std::size_t r = r0; r < r1; ++r)
            fn(r, b);
    };
    std::vector<std::thread> pool;
    for (unsigned b = 1; b < t; ++b)
        pool.emplace_back(block, b);
    block(0);
    for (auto& th : pool)
        th.join();
}

class csa_cpu final : public csa
{
public:
    csa_cpu(const stripmap_params& p, std::size_t naz, const options& o)
        : csa(p, naz, o),
          d_t(csa_make_tables(p, naz, o)),
          d_threads(std::max(1u, std::thread::hardware_concurrency())),
          d_az_fwd(n(naz), n(p.nrange), n(p.nrange), 1, FFTW_FORWARD, false, "csa", nt()),
          d_rg_fwd(n(p.nrange), n(naz), 1, n(p.nrange), FFTW_FORWARD, true, "csa", nt()),
          d_rg_inv(n(p.nrange), n(naz), 1, n(p.nrange), FFTW_BACKWARD, true, "csa", nt()),
          d_az_inv(n(naz), n(p.nrange), n(p.nrange), 1, FFTW_BACKWARD, true, "csa", nt()),
          d_rows(d_threads * (d_t.resample ? p.nrange : 0))
    {
    }

    void run(const cfloat* raw, cfloat* image) override
    {
        const std::size_t nr = d_t.nrange;
        d_az_fwd.execute(raw, image);
        parallel_rows(d_naz, d_threads, [&](std::size_t m, unsigned) {
            cfloat* row = image + m * nr;
            if (d_t.azimuth_weight[m] == 0.0f)
                std::fill(row, row + nr, cfloat(0.0f, 0.0f));
            else
                apply_quadratic(row, nr, 0, d_t.phase1[m], nullptr);
        });
        d_rg_fwd.execute(image, image);
        const std::size_t pos = nr - nr / 2; // bins [0, pos): x = n; the rest x = n - nr
        parallel_rows(d_naz, d_threads, [&](std::size_t m, unsigned) {
            if (d_t.azimuth_weight[m] == 0.0f)
                return;
            cfloat* row = image + m * nr;
            const float* w = d_t.range_weight.data();
            apply_quadratic(row, pos, 0, d_t.phase2[m], w);
            apply_quadratic(row + pos,
                            nr - pos,
                            -static_cast<long long>(nr / 2),
                            d_t.phase2[m],
                            w + pos);
        });
        d_rg_inv.execute(image, image);
        parallel_rows(d_naz, d_threads, [&](std::size_t m, unsigned b) {
            cfloat* row = image + m * nr;
            const float wa = d_t.azimuth_weight[m];
            if (wa == 0.0f)
                return;
            if (d_t.resample)
                resample_row(row, &d_rows[b * nr]);
            apply_quadratic_scaled(row, nr, d_t.phase3[m], wa);
        });
        d_az_inv.execute(image, image);
    }

private:
    static int n(std::size_t v) { return static_cast<int>(v); }
    int nt() const { return static_cast<int>(d_threads); }

    //! row <- the zero-Doppler grid's samples of row (tmp: nrange scratch).
    void resample_row(cfloat* row, cfloat* tmp) const
    {
        constexpr int T = csa_resample_taps;
        const std::size_t nr = d_t.nrange;
        std::copy(row, row + nr, tmp);
        for (std::size_t j = 0; j < nr; ++j) {
            const cfloat* src = tmp + d_t.resample_first[j];
            const float* h = &d_t.resample_taps[j * T];
            float ar = 0.0f, ai = 0.0f;
            for (int t = 0; t < T; ++t) {
                ar += h[t] * src[t].real();
                ai += h[t] * src[t].imag();
            }
            row[j] = cfloat(ar, ai);
        }
    }

    const csa_tables d_t;
    const unsigned d_threads;
    fftwf_plan_1d d_az_fwd, d_rg_fwd, d_rg_inv, d_az_inv;
    std::vector<cfloat> d_rows;
};

} // namespace

std::unique_ptr<csa>
make_csa_cpu(const stripmap_params& p, std::size_t naz, const csa::options& o)
{
    return std::make_unique<csa_cpu>(p, naz, o);
}

} // namespace gpuradar::kernels::detail
