/*
 * Fast factorized backprojection internals shared by the CPU twin and the CUDA kernels:
 * the plan of a run (subaperture tree and polar grids, made on the host in double), the
 * interpolation kernel table, and the per-sample maths written once for host and device
 * so that both backends compute every sample the same way
 * (backprojection_factorized.h gives the algorithm).
 */
#ifndef INCLUDED_GPURADAR_KERNELS_BACKPROJECTION_FACTORIZED_BACKENDS_H
#define INCLUDED_GPURADAR_KERNELS_BACKPROJECTION_FACTORIZED_BACKENDS_H

#include "sar/backprojection_common.h"
#include <gpuradar/kernels/sar/backprojection_factorized.h>
#include <type_traits>
#include <cmath>
#include <cstddef>
#include <memory>
#include <vector>

namespace gpuradar::kernels::detail {

#if !defined(__CUDA_ARCH__)
using std::atan2;
using std::cos;
using std::sin;
#endif

//! A complex float in host and device code (std::complex is host-only), aligned so that
//! CUDA reads each tap with one 8-byte load.
struct alignas(8) ffbp_cf {
    float re, im;
};

//! The flat grid's placement, trivially copyable for kernel arguments.
struct image_grid_view {
    double x0, y0, dx, dy;
    long long nx, ny;
};

//! Kernel table entries per sample of offset: the table's linear interpolation error,
//! ~ (pi / 256)^2 / 8 ~ 2e-5 of the peak, stays below the 30 dB target by far.
constexpr int ffbp_table_per_sample = 256;
constexpr double ffbp_pi = 3.14159265358979323846;

/*!
 * One polar image: samples (ia, ir) at slant range r = r0 + ir dr from the centre C and
 * azimuth phi = phic + a0 + ia da (around the vertical through C) of points on the image
 * plane z = zp. Stored as na rows of nr range samples from `offset` of its level.
 * wrap: the full circle (phic = 0, a0 = -pi, na da = 2 pi), angle indices modulo na.
 */
struct ffbp_polar {
    double cx, cy, cz; //!< centre (m)
    double h2;         //!< (cz - zp)^2 (m^2)
    double r0, dr, inv_dr;
    double phic, a0, da, inv_da;
    double cos_phic, sin_phic; //!< of phic: the float azimuth is taken relative to it
    float a0f, inv_daf;        //!< a0 and inv_da in float
    long long offset;          //!< first sample in the level's buffer
    int nr, na;
    int wrap;
    int first, count; //!< level 0: prepared pulses [first, first+count); else children
};

//! The subaperture tree of one run for one image plane.
struct ffbp_plan {
    //! Polar levels 0 .. max(stages - 1, 0): the last merge (of the last level's <=
    //! factor images) is made straight onto the pixels (ffbp_pixel).
    std::vector<std::vector<ffbp_polar>> levels;
    std::vector<long long> level_samples; //!< samples of each level's buffer
    double kt = 0;                        //!< demodulation, turns per metre
    double zp = 0;                        //!< image plane height (m)
};

/*!
 * Plans a run over the prepared pulses (bp_prepare's, in the caller's order) for the
 * image plane at height zp: stages from backprojection_factorized::stages_for (may
 * throw naming `stages`).
 */
ffbp_plan ffbp_make_plan(const std::vector<bp_pulse>& pulses,
                         const image_grid& g,
                         double zp,
                         const ffbp_options& o);

//! Entries of one kernel's table: offsets 0 to order/2, and one past for the lerp.
inline int ffbp_table_length(int order) { return order / 2 * ffbp_table_per_sample + 2; }

/*!
 * The kaiser_sinc interpolation kernels sampled for offsets 0 to order/2: the range
 * kernel's ffbp_table_length(order_range) entries, then the angle kernel's.
 */
std::vector<float> ffbp_kernel_table(const ffbp_options& o);

//! The two interpolation kernels as the per-sample functions take them.
struct ffbp_kernels {
    const float* range; //!< table of the range kernel
    const float* angle; //!< table of the angle kernel
    int order_range, order_angle;
};
//! The kernels of `o` in `table` (ffbp_kernel_table's layout, host or device memory).
inline ffbp_kernels ffbp_kernels_in(const float* table, const ffbp_options& o)
{
    return {
        table, table + ffbp_table_length(o.order_range), o.order_range, o.order_angle
    };
}

//! Largest sample count of any level (the two buffers a run ping-pongs between).
long long ffbp_max_level_samples(const ffbp_plan& p);

//! The polar image whose samples hold sample index s of a level: upper bound on offsets.
GPURADAR_BP_HD int ffbp_find_node(const ffbp_polar* nodes, int n, long long s)
{
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        const int mid = (lo + hi + 1) / 2;
        if (nodes[mid].offset <= s)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/*!
 * Sample s of a level (its polar images `nodes`): the polar image holding it (returned),
 * the sample's point (px, py) on the plane and its slant range r from that image's
 * centre.
 */
GPURADAR_BP_HD const ffbp_polar& ffbp_locate(
    const ffbp_polar* nodes, int nnodes, long long s, double& px, double& py, double& r)
{
    const ffbp_polar& g = nodes[ffbp_find_node(nodes, nnodes, s)];
    const long long k = s - g.offset;
    const int ia = static_cast<int>(k / g.nr), ir = static_cast<int>(k % g.nr);
    r = g.r0 + ir * g.dr;
    const double phi = g.phic + g.a0 + ia * g.da;
    const double rho2 = r * r - g.h2;
    const double rho = rho2 > 0 ? sqrt(rho2) : 0.0;
    px = g.cx + rho * cos(phi);
    py = g.cy + rho * sin(phi);
    return g;
}

//! Kernel weight at offset x (|x| < order/2) from one half of the table.
GPURADAR_BP_HD float ffbp_kernel(const float* table, float x)
{
    const float t = (x < 0 ? -x : x) * float(ffbp_table_per_sample);
    const int i = static_cast<int>(t);
    const float f = t - float(i);
    return table[i] + f * (table[i + 1] - table[i]);
}

/*!
 * Interpolates polar image g (its samples from img[g.offset]) at the point (px, py, zp);
 * returns false with v = 0 when the point is outside the grid. r_out: |P - C|.
 * The slant range (the phase needs it to a micrometre at kilometres) is in double; the
 * azimuth is taken in float relative to the grid's centre direction phic (the point's
 * offset rotated by -phic, then atan2f): |rel| stays within the grid's span, so float
 * gives it to ~1e-7 rad, a few thousandths of the finest angle step (~4e-5 rad on the
 * BP-C workload), and the kernel weights are float too.
 */
template <int OR, int OA>
GPURADAR_BP_HD bool ffbp_interpolate(const ffbp_polar& g,
                                     const ffbp_cf* img,
                                     const ffbp_kernels& k,
                                     double px,
                                     double py,
                                     double zp,
                                     double& r_out,
                                     float& vr,
                                     float& vi)
{
    const double ex = px - g.cx, ey = py - g.cy, ez = zp - g.cz;
    const double r = sqrt(ex * ex + ey * ey + ez * ez);
    r_out = r;
    vr = vi = 0.0f;
    const float rel = atan2f(static_cast<float>(ey * g.cos_phic - ex * g.sin_phic),
                             static_cast<float>(ex * g.cos_phic + ey * g.sin_phic));
    const double u = (r - g.r0) * g.inv_dr;
    const float v = (rel - g.a0f) * g.inv_daf;
    // Tap counts compiled in (OR, OA > 0) unroll the loops and keep the weights in
    // registers; 0 reads them from k.
    const int nrt = OR > 0 ? OR : k.order_range, nat = OA > 0 ? OA : k.order_angle;
    const int hr = nrt / 2, ha = nat / 2;
    const double fu = floor(u);
    const float fv = floorf(v);
    // Far outside: nothing (also keeps the int conversions in range).
    if (!(fu >= -hr && fu < g.nr + hr) || !(fv >= -ha - g.na && fv < 2 * g.na + ha))
        return false;
    const int iu = static_cast<int>(fu), iv = static_cast<int>(fv);
    const float du = static_cast<float>(u - fu), dv = v - fv;
    constexpr int max_taps = ffbp_options::max_order;
    float wr[OR > 0 ? OR : max_taps], wa[OA > 0 ? OA : max_taps];
    float sr = 0, sa = 0;
    for (int t = 0; t < nrt; ++t) {
        wr[t] = ffbp_kernel(k.range, du + float(hr - 1 - t));
        sr += wr[t];
    }
    for (int t = 0; t < nat; ++t) {
        wa[t] = ffbp_kernel(k.angle, dv + float(ha - 1 - t));
        sa += wa[t];
    }
    const float norm = 1.0f / (sr * sa);
    const ffbp_cf* base = img + g.offset;
    const int j0 = iu - hr + 1;
    float ar = 0, ai = 0;
    for (int ta = 0; ta < nat; ++ta) {
        int ja = iv - ha + 1 + ta;
        if (g.wrap)
            ja = ((ja % g.na) + g.na) % g.na;
        else if (ja < 0 || ja >= g.na)
            continue;
        const ffbp_cf* row = base + static_cast<long long>(ja) * g.nr;
        float rr = 0, ri = 0;
        for (int tr = 0; tr < nrt; ++tr) {
            const int jr = j0 + tr;
            if (jr >= 0 && jr < g.nr) {
                const ffbp_cf q = row[jr];
                rr += wr[tr] * q.re;
                ri += wr[tr] * q.im;
            }
        }
        ar += wa[ta] * rr;
        ai += wa[ta] * ri;
    }
    vr = ar * norm;
    vi = ai * norm;
    return true;
}

//! e^{j 2 pi turns} applied to (vr, vi): turns reduced to [-1/2, 1/2) in double, so that
//! the angle's float sine and cosine (~1e-7 rad) are all the rotation loses.
GPURADAR_BP_HD void ffbp_rotate(double turns, float& vr, float& vi)
{
    const double f = turns - floor(turns + 0.5);
    const float a = static_cast<float>(2 * ffbp_pi * f);
#if defined(__CUDA_ARCH__)
    float s, c;
    sincosf(a, &s, &c);
#else
    const float c = std::cos(a), s = std::sin(a);
#endif
    const float r = vr * c - vi * s;
    vi = vr * s + vi * c;
    vr = r;
}

//! A sample part that is NaN or +-Inf read as 0 (x - x is NaN exactly then), as direct
//! backprojection does (the sample is counted elsewhere).
GPURADAR_BP_HD float ffbp_finite_or_0(float x) { return x - x == 0.0f ? x : 0.0f; }

/*!
 * Level-0 sample s of `nodes`: the direct sum over the node's pulses (linear
 * interpolation in range as direct backprojection, a non-finite sample part read as 0),
 * demodulated by kt r.
 */
GPURADAR_BP_HD ffbp_cf ffbp_stage0_sample(const ffbp_polar* nodes,
                                          int nnodes,
                                          long long s,
                                          const bp_pulse* pulses,
                                          const float* data,
                                          long long nbins,
                                          double kt,
                                          double zp)
{
    double px, py, r;
    const ffbp_polar& g = ffbp_locate(nodes, nnodes, s, px, py, r);
    float ar = 0, ai = 0;
    for (int i = g.first; i < g.first + g.count; ++i) {
        const bp_pulse& p = pulses[i];
        const double ex = px - p.ax, ey = py - p.ay, ez = zp - p.az;
        const double R = sqrt(ex * ex + ey * ey + ez * ez);
        const double b = (R - p.r0) * p.inv_dr;
        if (!(b >= 0 && b <= double(nbins - 1)))
            continue;
        long long j = static_cast<long long>(b);
        if (j > nbins - 2)
            j = nbins - 2;
        const float w = static_cast<float>(b - double(j));
        const float* q = data + 2 * (static_cast<long long>(p.index) * nbins + j);
        const float q0r = ffbp_finite_or_0(q[0]), q0i = ffbp_finite_or_0(q[1]);
        const float q1r = ffbp_finite_or_0(q[2]), q1i = ffbp_finite_or_0(q[3]);
        float vr = q0r + w * (q1r - q0r);
        float vi = q0i + w * (q1i - q0i);
        ffbp_rotate(p.kt * R - kt * r, vr, vi);
        ar += vr;
        ai += vi;
    }
    return ffbp_cf{ ar, ai };
}

/*!
 * The polar images children[first, first + count) interpolated at the point (px, py, zp)
 * and summed, each re-demodulated from its own range to r: sum s_c(r_c, phi_c) exp(j 2
 * pi kt (r_c - r)). A merged sample (r: its own range) and a pixel (r = 0) alike.
 */
template <int OR, int OA>
GPURADAR_BP_HD ffbp_cf ffbp_gather(const ffbp_polar* children,
                                   int first,
                                   int count,
                                   const ffbp_cf* child_img,
                                   const ffbp_kernels& kern,
                                   double kt,
                                   double px,
                                   double py,
                                   double zp,
                                   double r)
{
    float ar = 0, ai = 0;
    for (int c = first; c < first + count; ++c) {
        double rc;
        float vr, vi;
        if (!ffbp_interpolate<OR, OA>(
                children[c], child_img, kern, px, py, zp, rc, vr, vi))
            continue;
        ffbp_rotate(kt * (rc - r), vr, vi);
        ar += vr;
        ai += vi;
    }
    return ffbp_cf{ ar, ai };
}

//! Sample s of a merged level: its children interpolated and re-demodulated.
template <int OR, int OA>
GPURADAR_BP_HD ffbp_cf ffbp_merge_sample(const ffbp_polar* nodes,
                                         int nnodes,
                                         long long s,
                                         const ffbp_polar* children,
                                         const ffbp_cf* child_img,
                                         const ffbp_kernels& kern,
                                         double kt,
                                         double zp)
{
    double px, py, r;
    const ffbp_polar& g = ffbp_locate(nodes, nnodes, s, px, py, r);
    return ffbp_gather<OR, OA>(
        children, g.first, g.count, child_img, kern, kt, px, py, zp, r);
}

/*!
 * Pixel (px, py) on plane zp: the last level's polar images (`top`, ntop of them)
 * merged straight onto it, which spares the polar image a last merge would make (the
 * largest level) and one interpolation.
 */
template <int OR, int OA>
GPURADAR_BP_HD ffbp_cf ffbp_pixel(const ffbp_polar* top,
                                  int ntop,
                                  const ffbp_cf* img,
                                  const ffbp_kernels& k,
                                  double kt,
                                  double px,
                                  double py,
                                  double zp)
{
    return ffbp_gather<OR, OA>(top, 0, ntop, img, k, kt, px, py, zp, 0.0);
}

template <int N>
using ffbp_taps = std::integral_constant<int, N>;

/*!
 * Calls f(ffbp_taps<R>{}, ffbp_taps<A>{}) with the interpolator's tap counts compiled in
 * for the common pairs (so that the interpolation unrolls and its weights stay in
 * registers), else with 0, 0 (read at run time). The same sums in the same order either
 * way.
 */
template <typename F>
void ffbp_with_taps(int order_range, int order_angle, F&& f)
{
    switch (order_range * 100 + order_angle) {
    case 808:
        return f(ffbp_taps<8>{}, ffbp_taps<8>{});
    case 806:
        return f(ffbp_taps<8>{}, ffbp_taps<6>{});
    case 608:
        return f(ffbp_taps<6>{}, ffbp_taps<8>{});
    case 606:
        return f(ffbp_taps<6>{}, ffbp_taps<6>{});
    case 406:
        return f(ffbp_taps<4>{}, ffbp_taps<6>{});
    case 408:
        return f(ffbp_taps<4>{}, ffbp_taps<8>{});
    case 404:
        return f(ffbp_taps<4>{}, ffbp_taps<4>{});
    default:
        return f(ffbp_taps<0>{}, ffbp_taps<0>{});
    }
}

std::unique_ptr<backprojection> make_backprojection_factorized_cpu(const image_grid& g,
                                                                   std::size_t nbins,
                                                                   const ffbp_options& o);
#ifdef GPURADAR_HAVE_CUDA
std::unique_ptr<backprojection> make_backprojection_factorized_cuda(const image_grid& g,
                                                                    std::size_t nbins,
                                                                    const ffbp_options& o,
                                                                    stream_ref s);
#endif

} // namespace gpuradar::kernels::detail

#endif
