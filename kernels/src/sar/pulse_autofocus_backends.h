/*
 * Phase-history autofocus internals shared by the neutral code (pulse_autofocus.cc) and
 * the backends: one term's maths, the same on host and device, and the factories.
 */
#ifndef INCLUDED_GPURADAR_KERNELS_PULSE_AUTOFOCUS_BACKENDS_H
#define INCLUDED_GPURADAR_KERNELS_PULSE_AUTOFOCUS_BACKENDS_H

#include <gpuradar/kernels/common/constants.h>
#include <gpuradar/kernels/sar/pulse_autofocus.h>
#include <cmath>
#include <cstddef>
#include <memory>
#include <vector>

#if defined(__CUDACC__)
#define GPURADAR_PHA_HD __host__ __device__ __forceinline__
#else
#define GPURADAR_PHA_HD inline
#endif

namespace gpuradar::kernels::detail {

//! One pulse's term of one pixel (pulse_autofocus.h): D and U as (re, im), b.
struct pha_term {
    float d_re, d_im, u_re, u_im, b;
};

//! b of a pulse that contributes nothing: far from every bin, so tri() of any
//! difference with a usable pulse's b is 0 (and U = 0 makes the term 0 anyway).
constexpr float pha_no_bin = -1e9f;

template <typename T>
GPURADAR_PHA_HD bool pha_finite(T v)
{
#if defined(__CUDA_ARCH__)
    return isfinite(v);
#else
    return std::isfinite(v);
#endif
}

GPURADAR_PHA_HD bool pha_usable(const double* geo)
{
    for (int i = 0; i < 6; ++i)
        if (!pha_finite(geo[i]))
            return false;
    return geo[4] > 0.0 && geo[5] > 0.0;
}

GPURADAR_PHA_HD float pha_finite_or_0(float v) { return pha_finite(v) ? v : 0.0f; }

//! Row `row` (re/im interleaved) read linearly at b in [0, nbins - 1]: the bin clamped
//! to [0, nbins - 2].
GPURADAR_PHA_HD void
pha_read_linear(const float* row, std::size_t nbins, double b, double& vr, double& vi)
{
    double fk = ::floor(b);
    if (fk > double(nbins - 2))
        fk = double(nbins - 2);
    const std::size_t i = std::size_t(fk);
    const double w = b - fk;
    vr = (1.0 - w) * pha_finite_or_0(row[2 * i]) + w * pha_finite_or_0(row[2 * i + 2]);
    vi =
        (1.0 - w) * pha_finite_or_0(row[2 * i + 1]) + w * pha_finite_or_0(row[2 * i + 3]);
}

/*!
 * Row `row` read at b in [0, nbins - 1] by sinc16 (pulse_autofocus.h) with `table`
 * (pha_sinc_table's): taps at floor(b) - 7 .. floor(b) + 8, those beyond the row 0.
 */
GPURADAR_PHA_HD void pha_read_sinc16(const float* row,
                                     std::size_t nbins,
                                     double b,
                                     const double* table,
                                     double& vr,
                                     double& vi)
{
    constexpr int taps = pulse_autofocus::sinc_taps;
    const double fk = ::floor(b);
    // rint: the nearest step, ties to even, as the NumPy reference's np.rint.
    const int step = int(::rint((b - fk) * pulse_autofocus::sinc_steps));
    const double* h = table + std::ptrdiff_t(step) * taps;
    const std::ptrdiff_t first = std::ptrdiff_t(fk) + 1 - taps / 2;
    vr = 0.0;
    vi = 0.0;
    for (int j = 0; j < taps; ++j) {
        const std::ptrdiff_t k = first + j;
        if (k >= 0 && k < std::ptrdiff_t(nbins)) {
            vr += h[j] * pha_finite_or_0(row[2 * k]);
            vi += h[j] * pha_finite_or_0(row[2 * k + 1]);
        }
    }
}

/*!
 * The term of pixel (px, py, z) for pulse `row` (nbins samples, re/im interleaved) with
 * geometry `geo` (6 values), as the Python references form it: D zero outside
 * [0, nbins - 1], the pulse read there by interpolator I (`sinc_table`: sinc16's table,
 * unused by linear), the phase k R taken in double.
 */
template <pulse_autofocus::interpolator I>
GPURADAR_PHA_HD pha_term pha_make_term(const float* row,
                                       std::size_t nbins,
                                       const double* geo,
                                       double px,
                                       double py,
                                       double z,
                                       const double* sinc_table)
{
    pha_term t{ 0.0f, 0.0f, 0.0f, 0.0f, pha_no_bin };
    if (!pha_usable(geo))
        return t;
    const double ex = px - geo[0], ey = py - geo[1], ez = z - geo[2];
    const double r = ::sqrt(ex * ex + ey * ey + ez * ez);
    const double b = (r - geo[3]) / geo[4];
    const double k = 4.0 * 3.14159265358979323846 * geo[5] / speed_of_light;
    double s, c;
    ::sincos(k * r, &s, &c);
    t.u_re = float(c);
    t.u_im = float(s);
    t.b = float(b);
    if (b >= 0.0 && b <= double(nbins - 1)) {
        double vr, vi;
        if constexpr (I == pulse_autofocus::interpolator::sinc16)
            pha_read_sinc16(row, nbins, b, sinc_table, vr, vi);
        else
            pha_read_linear(row, nbins, b, vr, vi);
        t.d_re = float(vr * c - vi * s);
        t.d_im = float(vr * s + vi * c);
    }
    return t;
}

GPURADAR_PHA_HD float pha_tri(float x)
{
    const float a = 1.0f - ::fabsf(x);
    return a > 0.0f ? a : 0.0f;
}

//! sinc16's taps, (sinc_steps + 1) x sinc_taps: row i for the fractional bin
//! i / sinc_steps, tap j at sample offset j + 1 - sinc_taps / 2.
std::vector<double> pha_sinc_table();

std::unique_ptr<pulse_autofocus>
make_pulse_autofocus_cpu(std::size_t npulses,
                         std::size_t nbins,
                         std::size_t npixels,
                         pulse_autofocus::interpolator interp);
#ifdef GPURADAR_HAVE_CUDA
std::unique_ptr<pulse_autofocus>
make_pulse_autofocus_cuda(std::size_t npulses,
                          std::size_t nbins,
                          std::size_t npixels,
                          pulse_autofocus::interpolator interp,
                          stream_ref s);
#endif

} // namespace gpuradar::kernels::detail

#endif
