/* ECA-B, CPU twin: double precision normal equations (Toeplitz recursion along the
 * diagonals), Cholesky with diagonal loading, the fit subtracted. */
#include "common/param_check.h"
#include "passive/clutter_cancel_backends.h"
#include <cmath>
#include <complex>
#include <vector>

namespace gpuradar::kernels::detail {

namespace {

using cd = std::complex<double>;

//! In-place Cholesky R = G G^H (lower G) of an n x n Hermitian matrix; false when a
//! pivot is not positive (singular or indefinite).
bool cholesky(std::vector<cd>& a, std::size_t n)
{
    for (std::size_t j = 0; j < n; ++j) {
        double d = a[j * n + j].real();
        for (std::size_t k = 0; k < j; ++k)
            d -= std::norm(a[j * n + k]);
        if (!(d > 0.0) || !std::isfinite(d))
            return false;
        const double g = std::sqrt(d);
        a[j * n + j] = g;
        for (std::size_t i = j + 1; i < n; ++i) {
            cd v = a[i * n + j];
            for (std::size_t k = 0; k < j; ++k)
                v -= a[i * n + k] * std::conj(a[j * n + k]);
            a[i * n + j] = v / g;
        }
    }
    return true;
}

//! Solves G G^H x = y in place with the factor from cholesky().
void cholesky_solve(const std::vector<cd>& g, std::size_t n, std::vector<cd>& y)
{
    for (std::size_t i = 0; i < n; ++i) {
        cd v = y[i];
        for (std::size_t k = 0; k < i; ++k)
            v -= g[i * n + k] * y[k];
        y[i] = v / g[i * n + i].real();
    }
    for (std::size_t i = n; i-- > 0;) {
        cd v = y[i];
        for (std::size_t k = i + 1; k < n; ++k)
            v -= std::conj(g[k * n + i]) * y[k];
        y[i] = v / g[i * n + i].real();
    }
}

class clutter_cancel_cpu final : public clutter_cancel
{
public:
    explicit clutter_cancel_cpu(const clutter_cancel_params& p)
        : clutter_cancel(p),
          d_ncols(columns(p)),
          d_r(p.nsamples),
          d_s(p.nsamples),
          d_r_matrix(d_ncols * d_ncols),
          d_factor(d_ncols * d_ncols),
          d_rhs(d_ncols)
    {
    }

    clutter_cancel_result
    run(const cfloat* reference, const cfloat* surveillance, cfloat* out) override
    {
        clutter_cancel_result res;
        const std::size_t n = d_params.nsamples;
        for (std::size_t i = 0; i < n; ++i) {
            d_r[i] = finite_or_zero(reference[i], res.nonfinite_samples);
            d_s[i] = finite_or_zero(surveillance[i], res.nonfinite_samples);
            res.power_before += std::norm(d_s[i]);
        }
        const std::size_t l = n / d_params.nbatches;
        for (std::size_t b = 0; b < d_params.nbatches; ++b)
            res.loaded_batches += cancel_batch(b * l, l, out) ? 1 : 0;
        for (std::size_t i = 0; i < n; ++i)
            res.power_after += std::norm(cd(out[i]));
        res.power_before /= double(n);
        res.power_after /= double(n);
        res.cancellation_db = res.power_after > 0
                                  ? 10.0 * std::log10(res.power_before / res.power_after)
                                  : 0.0;
        return res;
    }

private:
    static cd finite_or_zero(cfloat x, std::size_t& bad)
    {
        if (std::isfinite(x.real()) && std::isfinite(x.imag()))
            return cd(x);
        ++bad;
        return 0.0;
    }

    cd ref(long long i) const { return i < 0 ? cd(0.0) : d_r[std::size_t(i)]; }

    //! exp(j 2 pi q n / N) from (q n mod N) in integers.
    cd phase(int q, long long n) const
    {
        const long long nn = static_cast<long long>(d_params.nsamples);
        long long t = (static_cast<long long>(q) * n) % nn;
        if (t < 0)
            t += nn;
        return std::polar(1.0, 2.0 * pi * double(t) / double(nn));
    }

    cd column(std::size_t c, long long n) const
    {
        const std::size_t d = c % d_params.ntaps;
        const int q = eca_column_shift(c, d_params.ntaps, d_params.doppler_taps);
        const cd x = ref(n - static_cast<long long>(d));
        return q == 0 ? x : x * phase(q, n);
    }

    //! One (shift q1, shift q2) block of X^H X over [n0, n0 + l): the first row and
    //! column summed, the rest by R[i+1][j+1] = e^{j theta} (R[i][j] + the sample that
    //! enters at n0 - 1 - the one that leaves at n0 + l - 1), theta = 2 pi (q2 - q1) / N.
    void gram_block(std::size_t c1, std::size_t c2, long long n0, std::size_t l)
    {
        const std::size_t k = d_params.ntaps, m = d_ncols;
        auto at = [&](std::size_t i, std::size_t j) -> cd& {
            return d_r_matrix[(c1 + i) * m + (c2 + j)];
        };
        auto term = [&](std::size_t i, std::size_t j, long long nn) {
            return std::conj(column(c1 + i, nn)) * column(c2 + j, nn);
        };
        for (std::size_t j = 0; j < k; ++j) {
            cd row = 0.0, col = 0.0;
            for (long long nn = n0; nn < n0 + static_cast<long long>(l); ++nn) {
                row += term(0, j, nn);
                if (j > 0)
                    col += term(j, 0, nn);
            }
            at(0, j) = row;
            if (j > 0)
                at(j, 0) = col;
        }
        const int dq = eca_column_shift(c2, k, d_params.doppler_taps) -
                       eca_column_shift(c1, k, d_params.doppler_taps);
        const cd rot = phase(dq, 1);
        const long long first = n0 - 1, last = n0 + static_cast<long long>(l) - 1;
        for (std::size_t i = 0; i + 1 < k; ++i)
            for (std::size_t j = 0; j + 1 < k; ++j)
                at(i + 1, j + 1) =
                    rot * (at(i, j) + term(i, j, first) - term(i, j, last));
    }

    //! Returns whether the system needed the fallback loading.
    bool cancel_batch(std::size_t start, std::size_t l, cfloat* out)
    {
        const std::size_t m = d_ncols, k = d_params.ntaps;
        const long long n0 = static_cast<long long>(start);
        for (std::size_t c1 = 0; c1 < m; c1 += k)
            for (std::size_t c2 = 0; c2 < m; c2 += k)
                gram_block(c1, c2, n0, l);
        for (std::size_t c = 0; c < m; ++c) {
            cd y = 0.0;
            for (std::size_t i = 0; i < l; ++i)
                y +=
                    std::conj(column(c, n0 + static_cast<long long>(i))) * d_s[start + i];
            d_rhs[c] = y;
        }
        double trace = 0.0;
        for (std::size_t c = 0; c < m; ++c)
            trace += d_r_matrix[c * m + c].real();
        const double mean_diag = trace > 0.0 ? trace / double(m) : 1.0;
        bool loaded = false;
        if (!factor(d_params.diagonal_loading * mean_diag)) {
            loaded = true;
            factor((d_params.diagonal_loading + eca_fallback_loading) * mean_diag);
        }
        cholesky_solve(d_factor, m, d_rhs);
        for (std::size_t i = 0; i < l; ++i) {
            cd e = d_s[start + i];
            for (std::size_t c = 0; c < m; ++c)
                e -= d_rhs[c] * column(c, n0 + static_cast<long long>(i));
            out[start + i] = cfloat(e);
        }
        return loaded;
    }

    bool factor(double loading)
    {
        d_factor = d_r_matrix;
        for (std::size_t c = 0; c < d_ncols; ++c)
            d_factor[c * d_ncols + c] += loading;
        return cholesky(d_factor, d_ncols);
    }

    std::size_t d_ncols;
    std::vector<cd> d_r, d_s, d_r_matrix, d_factor, d_rhs;
};

} // namespace

std::unique_ptr<clutter_cancel> make_clutter_cancel_cpu(const clutter_cancel_params& p)
{
    return std::make_unique<clutter_cancel_cpu>(p);
}

} // namespace gpuradar::kernels::detail
