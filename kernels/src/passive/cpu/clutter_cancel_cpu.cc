/* ECA-B, CPU twin: double precision normal equations (Toeplitz recursion along the
 * diagonals), LAPACK's Cholesky (zpotrf / zpotrs) with diagonal loading, formed and
 * factored once per batch for every surveillance channel, each channel's fit
 * subtracted. Block NLMS in double, each channel's weights and the reference history
 * carried between CPIs. */
#include "common/param_check.h"
#include "passive/clutter_cancel_backends.h"
#include "passive/cpu/lapack_cholesky.h"
#include <algorithm>
#include <cmath>
#include <complex>
#include <vector>

namespace gpuradar::kernels::detail {

namespace {

using cd = std::complex<double>;

//! power / n and the cancellation of one channel's report.
void finish(clutter_cancel_result& res, std::size_t n)
{
    res.power_before /= double(n);
    res.power_after /= double(n);
    res.cancellation_db =
        res.power_after > 0 ? 10.0 * std::log10(res.power_before / res.power_after) : 0.0;
}

//! x as double, or 0 (counted in bad) when it is NaN or infinite.
cd finite_or_zero(cfloat x, std::size_t& bad)
{
    if (std::isfinite(x.real()) && std::isfinite(x.imag()))
        return cd(x);
    ++bad;
    return 0.0;
}

//! Complex products written out: std::complex's operator* checks for NaN and
//! infinities on every call (C99 Annex G), which keeps the sample loops from vectorising.
inline cd mul(cd a, cd b)
{
    return cd(a.real() * b.real() - a.imag() * b.imag(),
              a.real() * b.imag() + a.imag() * b.real());
}

//! sum_i a[i] b[i]
cd dot_plain(const cd* a, const cd* b, std::size_t n)
{
    double re = 0.0, im = 0.0;
    const double* x = reinterpret_cast<const double*>(a);
    const double* y = reinterpret_cast<const double*>(b);
    for (std::size_t i = 0; i < n; ++i) {
        re += x[2 * i] * y[2 * i] - x[2 * i + 1] * y[2 * i + 1];
        im += x[2 * i] * y[2 * i + 1] + x[2 * i + 1] * y[2 * i];
    }
    return cd(re, im);
}

//! sum_i conj(a[i]) b[i]
cd dot_conj(const cd* a, const cd* b, std::size_t n)
{
    double re = 0.0, im = 0.0;
    const double* x = reinterpret_cast<const double*>(a);
    const double* y = reinterpret_cast<const double*>(b);
    for (std::size_t i = 0; i < n; ++i) {
        re += x[2 * i] * y[2 * i] + x[2 * i + 1] * y[2 * i + 1];
        im += x[2 * i] * y[2 * i + 1] - x[2 * i + 1] * y[2 * i];
    }
    return cd(re, im);
}

class clutter_cancel_cpu final : public clutter_cancel
{
public:
    explicit clutter_cancel_cpu(const clutter_cancel_params& p)
        : clutter_cancel(p),
          d_ncols(columns(p)),
          d_r(p.nsamples),
          d_history(p.ntaps - 1),
          d_s(p.nsurv * p.nsamples),
          d_r_matrix(d_ncols * d_ncols),
          d_factor(d_ncols * d_ncols),
          d_rhs(p.nsurv * d_ncols),
          d_ext(p.nsamples / p.nbatches + p.ntaps - 1),
          d_u(p.nsamples / p.nbatches),
          d_v(p.nsamples / p.nbatches),
          d_phase(p.doppler_taps ? 3 : 1, std::vector<cd>(p.nsamples / p.nbatches))
    {
    }

    void run_channels(const cfloat* reference,
                      const cfloat* const* surveillance,
                      cfloat* const* out,
                      clutter_cancel_result* results) override
    {
        const std::size_t n = d_params.nsamples, ns = d_params.nsurv;
        std::size_t ref_bad = 0;
        for (std::size_t i = 0; i < n; ++i)
            d_r[i] = finite_or_zero(reference[i], ref_bad);
        for (std::size_t k = 0; k < ns; ++k) {
            clutter_cancel_result& res = results[k];
            res = clutter_cancel_result();
            res.nonfinite_samples = ref_bad; // each channel's report counts both inputs
            cd* s = d_s.data() + k * n;
            for (std::size_t i = 0; i < n; ++i) {
                s[i] = finite_or_zero(surveillance[k][i], res.nonfinite_samples);
                res.power_before += std::norm(s[i]);
            }
        }
        const std::size_t l = n / d_params.nbatches;
        std::size_t loaded = 0; // the system is the reference's: the same for all
        for (std::size_t b = 0; b < d_params.nbatches; ++b)
            loaded += cancel_batch(b * l, l, out) ? 1 : 0;
        for (std::size_t k = 0; k < ns; ++k) {
            for (std::size_t i = 0; i < n; ++i)
                results[k].power_after += std::norm(cd(out[k][i]));
            results[k].loaded_batches = loaded;
            finish(results[k], n);
        }
        // the next CPI's echoes of this one's last samples
        std::copy(d_r.end() - long(d_history.size()), d_r.end(), d_history.begin());
    }

private:
    void reset() override { std::fill(d_history.begin(), d_history.end(), cd(0.0)); }

    //! r[i], i >= -(K-1): before the CPI, the previous CPI's last samples
    cd ref(long long i) const
    {
        return i < 0
                   ? d_history[std::size_t(static_cast<long long>(d_history.size()) + i)]
                   : d_r[std::size_t(i)];
    }

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
        // first row: sum_i conj(x_{q1,0}[i]) x_{q2,j}[i] = sum_i u[i] ext[i+K-1-j];
        // first column: sum_i conj(x_{q1,j}[i]) x_{q2,0}[i] = sum_i conj(ext[i+K-1-j])
        // v[i]
        const cd* p1 = d_phase[shift_index(c1)].data();
        const cd* p2 = d_phase[shift_index(c2)].data();
        for (std::size_t i = 0; i < l; ++i) {
            const cd x1 = mul(d_ext[i + k - 1], p1[i]), x2 = mul(d_ext[i + k - 1], p2[i]);
            d_u[i] = mul(std::conj(x1), p2[i]);
            d_v[i] = mul(std::conj(p1[i]), x2);
        }
        for (std::size_t j = 0; j < k; ++j) {
            at(0, j) = dot_plain(d_u.data(), d_ext.data() + (k - 1 - j), l);
            if (j > 0)
                at(j, 0) = dot_conj(d_ext.data() + (k - 1 - j), d_v.data(), l);
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

    //! One batch of every channel: the reference's system formed and factored once,
    //! solved for each channel's right-hand side (d_rhs[ch m + c]). Returns whether the
    //! system needed the fallback loading.
    bool cancel_batch(std::size_t start, std::size_t l, cfloat* const* out)
    {
        const std::size_t m = d_ncols, k = d_params.ntaps, ns = d_params.nsurv;
        const std::size_t n = d_params.nsamples;
        const long long n0 = static_cast<long long>(start);
        // the batch's reference from K-1 samples before it, and its shifts' phases
        for (std::size_t j = 0; j < l + k - 1; ++j)
            d_ext[j] =
                ref(n0 - static_cast<long long>(k - 1) + static_cast<long long>(j));
        for (std::size_t qi = 0; qi < d_phase.size(); ++qi) {
            const int q = d_params.doppler_taps ? int(qi) - 1 : 0;
            for (std::size_t i = 0; i < l; ++i)
                d_phase[qi][i] =
                    q == 0 ? cd(1.0) : phase(q, n0 + static_cast<long long>(i));
        }
        for (std::size_t c1 = 0; c1 < m; c1 += k)
            for (std::size_t c2 = 0; c2 < m; c2 += k)
                gram_block(c1, c2, n0, l);
        // y[q, d] = sum_i conj(ext[i+K-1-d]) conj(ph_q[i]) s[i], per channel
        for (std::size_t ch = 0; ch < ns; ++ch) {
            const cd* s = d_s.data() + ch * n + start;
            cd* y = d_rhs.data() + ch * m;
            for (std::size_t c0 = 0; c0 < m; c0 += k) {
                const cd* ph = d_phase[shift_index(c0)].data();
                for (std::size_t i = 0; i < l; ++i)
                    d_u[i] = mul(std::conj(ph[i]), s[i]);
                for (std::size_t d = 0; d < k; ++d)
                    y[c0 + d] = dot_conj(d_ext.data() + (k - 1 - d), d_u.data(), l);
            }
        }
        double trace = 0.0;
        for (std::size_t c = 0; c < m; ++c)
            trace += d_r_matrix[c * m + c].real();
        const double mean_diag = trace > 0.0 ? trace / double(m) : 1.0;
        bool loaded = false;
        if (!factor(d_params.diagonal_loading * mean_diag)) {
            loaded = true;
            // the loading makes a finite Gram matrix positive definite; should LAPACK
            // still refuse it, nothing is fitted rather than NaN written
            if (factor((d_params.diagonal_loading + eca_fallback_loading) * mean_diag))
                lapack_cholesky_solve(d_factor.data(), int(m), d_rhs.data(), int(ns));
            else
                std::fill(d_rhs.begin(), d_rhs.end(), cd(0.0));
        } else {
            lapack_cholesky_solve(d_factor.data(), int(m), d_rhs.data(), int(ns));
        }
        for (std::size_t ch = 0; ch < ns; ++ch)
            subtract_fit(
                d_s.data() + ch * n + start, d_rhs.data() + ch * m, l, out[ch] + start);
        return loaded;
    }

    //! e[i] = s[i] - sum_q ph_q[i] sum_d a[q, d] ext[i+K-1-d] over the batch's l
    //! samples, a its solution.
    void subtract_fit(const cd* s, const cd* a, std::size_t l, cfloat* e)
    {
        const std::size_t m = d_ncols, k = d_params.ntaps;
        for (std::size_t i = 0; i < l; ++i)
            d_v[i] = s[i];
        for (std::size_t c0 = 0; c0 < m; c0 += k) {
            std::fill(d_u.begin(), d_u.begin() + long(l), cd(0.0));
            for (std::size_t d = 0; d < k; ++d) {
                const double ar = a[c0 + d].real(), ai = a[c0 + d].imag();
                const cd* x = d_ext.data() + (k - 1 - d);
                double* u = reinterpret_cast<double*>(d_u.data());
                const double* xd = reinterpret_cast<const double*>(x);
                for (std::size_t i = 0; i < l; ++i) {
                    u[2 * i] += ar * xd[2 * i] - ai * xd[2 * i + 1];
                    u[2 * i + 1] += ar * xd[2 * i + 1] + ai * xd[2 * i];
                }
            }
            const cd* ph = d_phase[shift_index(c0)].data();
            for (std::size_t i = 0; i < l; ++i)
                d_v[i] -= mul(ph[i], d_u[i]);
        }
        for (std::size_t i = 0; i < l; ++i)
            e[i] = cfloat(d_v[i]);
    }

    bool factor(double loading)
    {
        d_factor = d_r_matrix;
        for (std::size_t c = 0; c < d_ncols; ++c)
            d_factor[c * d_ncols + c] += loading;
        return lapack_cholesky(d_factor.data(), int(d_ncols));
    }

    std::size_t shift_index(std::size_t c) const { return c / d_params.ntaps; }

    std::size_t d_ncols;
    std::vector<cd> d_r;
    std::vector<cd> d_history; //!< the previous CPI's last K - 1 reference samples
    std::vector<cd> d_s;       //!< the channels' sanitised samples, channel after channel
    std::vector<cd> d_r_matrix, d_factor;
    std::vector<cd> d_rhs; //!< a batch's right-hand sides, then solutions, per channel
    std::vector<cd> d_ext, d_u, d_v; //!< a batch's reference from K-1 before it; scratch
    std::vector<std::vector<cd>>
        d_phase; //!< per shift, exp(j 2 pi q n / N) over the batch
};

//! Block NLMS (the header's equations), double precision.
class clutter_nlms_cpu final : public clutter_cancel
{
public:
    explicit clutter_nlms_cpu(const clutter_cancel_params& p)
        : clutter_cancel(p),
          d_weights(p.nsurv * p.ntaps),
          d_ext(p.nsamples + p.ntaps - 1),
          d_s(p.nsamples),
          d_e(p.nlms_block)
    {
    }

    void reset() override
    {
        std::fill(d_weights.begin(), d_weights.end(), cd(0.0));
        std::fill(d_ext.begin(), d_ext.end(), cd(0.0));
    }

    void run_channels(const cfloat* reference,
                      const cfloat* const* surveillance,
                      cfloat* const* out,
                      clutter_cancel_result* results) override
    {
        const std::size_t n = d_params.nsamples, k = d_params.ntaps;
        // d_ext[k - 1 + i] = r[i]; its first k - 1 entries the previous CPI's tail
        std::copy(d_ext.end() - long(k - 1), d_ext.end(), d_ext.begin());
        std::size_t ref_bad = 0;
        for (std::size_t i = 0; i < n; ++i)
            d_ext[k - 1 + i] = finite_or_zero(reference[i], ref_bad);
        for (std::size_t ch = 0; ch < d_params.nsurv; ++ch) {
            results[ch] = clutter_cancel_result();
            results[ch].nonfinite_samples = ref_bad;
            adapt(surveillance[ch], d_weights.data() + ch * k, out[ch], results[ch]);
        }
    }

private:
    //! One channel's CPI: its weights w (K) adapted over the blocks, e into out.
    void adapt(const cfloat* surveillance, cd* w, cfloat* out, clutter_cancel_result& res)
    {
        const std::size_t n = d_params.nsamples, k = d_params.ntaps;
        for (std::size_t i = 0; i < n; ++i) {
            d_s[i] = finite_or_zero(surveillance[i], res.nonfinite_samples);
            res.power_before += std::norm(d_s[i]);
        }
        const std::size_t blk = d_params.nlms_block;
        std::vector<cd>& e = d_e;
        for (std::size_t n0 = 0; n0 < n; n0 += blk) {
            double norm = 0.0;
            for (std::size_t i = 0; i < blk; ++i) {
                // x_d = r[n0 + i - d] = d_ext[k - 1 + n0 + i - d]
                const cd* x = d_ext.data() + n0 + i;
                cd fit = 0.0;
                for (std::size_t d = 0; d < k; ++d) {
                    fit += mul(w[d], x[k - 1 - d]);
                    norm += std::norm(x[k - 1 - d]);
                }
                e[i] = d_s[n0 + i] - fit;
                out[n0 + i] = cfloat(e[i]);
                res.power_after += std::norm(e[i]);
            }
            if (!(norm > 0.0))
                continue; // a silent reference teaches nothing
            const double step = d_params.nlms_step / norm;
            for (std::size_t d = 0; d < k; ++d)
                w[d] += step * dot_conj(d_ext.data() + n0 + k - 1 - d, e.data(), blk);
        }
        finish(res, n);
    }

    std::vector<cd> d_weights; //!< each channel's K weights, carried between CPIs
    std::vector<cd> d_ext;     //!< K - 1 samples of history, then the CPI's reference
    std::vector<cd> d_s;
    std::vector<cd> d_e; //!< one block's residual
};

} // namespace

std::unique_ptr<clutter_cancel> make_clutter_cancel_cpu(const clutter_cancel_params& p)
{
    if (p.method == cancel_method::nlms)
        return std::make_unique<clutter_nlms_cpu>(p);
    return std::make_unique<clutter_cancel_cpu>(p);
}

} // namespace gpuradar::kernels::detail
