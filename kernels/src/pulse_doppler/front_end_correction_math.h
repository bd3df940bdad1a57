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

GPURADAR_FEC_HD iq_matrix iq_matrix_from(const iq_sums& s)
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
    m.gain_db = 10.0 * std::log10(pq / pi);
    m.phase_deg = -std::asin(rho) * rad_to_deg;
    if (!(std::fabs(m.gain_db) <= iq_max_gain_db) ||
        !(std::fabs(m.phase_deg) <= iq_max_phase_deg))
        return m;
    const double r = 1.0 / std::sqrt(det);
    m.a = -c * r;
    m.b = pi * r;
    m.ok = true;
    return m;
}

} // namespace gpuradar::kernels::detail

#endif
