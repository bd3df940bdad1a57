/*
 * The I/Q correction's arithmetic, shared by the CPU twin, the CUDA kernels and the
 * host's report (internal): both backends turn the same fp64 sums into the same matrix
 * and make the same usable / degenerate decision.
 */
#ifndef INCLUDED_GPURADAR_KERNELS_FRONT_END_CORRECTION_MATH_H
#define INCLUDED_GPURADAR_KERNELS_FRONT_END_CORRECTION_MATH_H

#include <gpuradar/kernels/pulse_doppler/front_end_correction.h>
#include <cmath>

#ifdef __CUDACC__
#define GPURADAR_FEC_HD __host__ __device__ __forceinline__
#else
#define GPURADAR_FEC_HD inline
#endif

namespace gpuradar::kernels::detail {

//! Sums over a CPI: sum I^2, sum Q^2, sum I Q (fp64).
struct iq_sums {
    double ii = 0, qq = 0, iq = 0;
};

//! I' = I, Q' = a I + b Q when ok; the receiver's gain (dB) and phase (degrees).
struct iq_matrix {
    bool ok = false;
    bool degenerate = true; //!< no estimate at all (gain_db, phase_deg 0)
    double a = 0, b = 1;
    double gain_db = 0, phase_deg = 0;
};

GPURADAR_FEC_HD bool iq_finite(double v)
{
#ifdef __CUDA_ARCH__
    return isfinite(v);
#else
    return std::isfinite(v);
#endif
}

//! Below this det / (P_I P_Q) = 1 - rho^2 the I and Q rails are (numerically) one rail.
constexpr double iq_min_relative_det = 1e-9;

/*!
 * The limits iq_max_gain_db and iq_max_phase_deg as the decision takes them, without a
 * logarithm or an arcsine (the CUDA estimate makes it on one thread, on the chain's
 * critical path): |10 log10(P_Q / P_I)| <= iq_max_gain_db is P_Q / P_I within
 * [1 / r, r] with r = 10^(iq_max_gain_db / 10), and |asin(rho)| <= iq_max_phase_deg is
 * |rho| <= sin(iq_max_phase_deg). test_front_end_correction checks them against the
 * limits.
 */
constexpr double iq_max_power_ratio = 3.9810717055349722; // 10^(6 / 10)
constexpr double iq_max_abs_rho = 0.5;                    // sin(30 degrees)

/*!
 * The I/Q matrix of the sums and whether it is used. `angles`: also the receiver's gain
 * and phase (degrees) for the report; the decision does not depend on them.
 */
GPURADAR_FEC_HD iq_matrix iq_matrix_from(const iq_sums& s, bool angles = true)
{
    constexpr double rad_to_deg = 57.295779513082320876798;
    iq_matrix m;
    // Means are not needed: scaling all three sums alike changes neither the matrix
    // nor the estimate.
    const double pi = s.ii, pq = s.qq, c = s.iq;
    if (!(iq_finite(pi) && iq_finite(pq) && iq_finite(c)) || !(pi > 0) || !(pq > 0))
        return m;
    const double det = pi * pq - c * c;
    if (!(det > iq_min_relative_det * pi * pq))
        return m;
    m.degenerate = false;
    const double rho = c / std::sqrt(pi * pq); // |rho| < 1 here
    if (angles) {
        m.gain_db = 10.0 * std::log10(pq / pi);
        m.phase_deg = -std::asin(rho) * rad_to_deg;
    }
    const double ratio = pq / pi;
    if (!(ratio <= iq_max_power_ratio && ratio * iq_max_power_ratio >= 1.0) ||
        !(std::fabs(rho) <= iq_max_abs_rho))
        return m;
    const double r = 1.0 / std::sqrt(det);
    m.a = -c * r;
    m.b = pi * r;
    m.ok = true;
    return m;
}

/*!
 * The I/Q statistics of the corrected CPI y = x - d_p - M_r (y = 0 on a blanked gate),
 * from sums of the raw CPI x taken in the one read pass, so that no pass over the
 * corrected CPI is needed before its correction is applied. Over the samples G that are
 * not blanked (n_G per pulse), with a = d_p + M_r, for components u, v of I and Q:
 *   sum y_u y_v = sum x_u x_v - sum_p (d_pu R_pv + d_pv R_pu) - sum_r (M_ru C_rv +
 *                 M_rv C_ru) + n_G sum_p d_pu d_pv + npulses sum_r M_ru M_rv
 *                 + D_u Ms_v + D_v Ms_u
 * with R_p pulse p's sum over G, C_r range sample r's sum over the pulses, D = sum_p d_p
 * and Ms = sum_r M_r (mean_pulse and blank are exclusive, so C and M meet no blanked
 * sample). Exact in real arithmetic; in fp64 the cancellation costs the digits of the
 * ratio of raw to corrected power (30 dB of DC: 3 of 16).
 */
struct iq_terms {
    double raw[3] = { 0, 0, 0 };   //!< sum over G of x_I^2, x_Q^2, x_I x_Q
    double dr[4] = { 0, 0, 0, 0 }; //!< sum_p d_I R_I, d_Q R_Q, d_I R_Q, d_Q R_I
    double dd[3] = { 0, 0, 0 };    //!< sum_p d_I^2, d_Q^2, d_I d_Q
    double d[2] = { 0, 0 };        //!< D
    double mc[4] = { 0, 0, 0, 0 }; //!< sum_r M_I C_I, M_Q C_Q, M_I C_Q, M_Q C_I
    double mm[3] = { 0, 0, 0 };    //!< sum_r M_I^2, M_Q^2, M_I M_Q
    double m[2] = { 0, 0 };        //!< Ms
};
constexpr int iq_terms_count = 21; //!< doubles in iq_terms, in the order above

/*!
 * Below this fraction of the raw power the corrected power is the rounding residue of
 * the subtraction (a CPI that was all DC or all repeated pulse): no power, so the
 * estimate is degenerate on both backends alike rather than a matrix fitted to rounding.
 */
constexpr double iq_min_relative_power = 1e-10;

GPURADAR_FEC_HD iq_sums iq_sums_from(const iq_terms& t, double n_g, double npulses)
{
    iq_sums s;
    s.ii = t.raw[0] - 2.0 * t.dr[0] - 2.0 * t.mc[0] + n_g * t.dd[0] + npulses * t.mm[0] +
           2.0 * t.d[0] * t.m[0];
    s.qq = t.raw[1] - 2.0 * t.dr[1] - 2.0 * t.mc[1] + n_g * t.dd[1] + npulses * t.mm[1] +
           2.0 * t.d[1] * t.m[1];
    s.iq = t.raw[2] - t.dr[2] - t.dr[3] - t.mc[2] - t.mc[3] + n_g * t.dd[2] +
           npulses * t.mm[2] + t.d[0] * t.m[1] + t.d[1] * t.m[0];
    if (!(s.ii > iq_min_relative_power * t.raw[0]))
        s.ii = 0;
    if (!(s.qq > iq_min_relative_power * t.raw[1]))
        s.qq = 0;
    if (!iq_finite(t.raw[0] + t.raw[1] + t.raw[2])) // NaN stays NaN: degenerate
        s.ii = t.raw[0] + t.raw[1] + t.raw[2];
    return s;
}

/*!
 * One screened sample (re, im) of pulse p, range sample r, corrected in place by the
 * CPI's map (front_end_map): 0 when blanked; else less the pulse's DC (dre, dim) and
 * the mean pulse's (mre, mim) (0 where off), then Q' = a I + b Q when iq.ok. One
 * definition for the CPU twin and the CUDA copy, so that both apply the same floats in
 * the same order.
 */
GPURADAR_FEC_HD void correct_sample(float& re,
                                    float& im,
                                    bool blanked,
                                    float dre,
                                    float dim,
                                    float mre,
                                    float mim,
                                    const front_end_iq_map& iq)
{
    if (blanked) {
        re = 0.0f;
        im = 0.0f;
        return;
    }
    re -= dre;
    im -= dim;
    re -= mre;
    im -= mim;
    if (iq.ok)
        im = iq.a * re + iq.b * im;
}

} // namespace gpuradar::kernels::detail

#endif
