/*
 * CPU twin of the chirp-scaling focusing (csa_backends.h has the maths).
 *
 * Three passes over the matrix, each split over the CPU pool (cpu_threads.h):
 *  1. azimuth FFT, raw -> image, in blocks of `column_block` range columns: a block is
 *     transposed into a small per-thread buffer (one contiguous column after another),
 *     transformed there by one FFTW plan over its columns and transposed back, so that
 *     no transform walks the matrix with a stride of a whole row (a power-of-two stride
 *     maps every access to the same cache sets);
 *  2. per azimuth-frequency row, while the row stays in cache: phase 1, range FFT,
 *     phase 2 with the range window, range IFFT, (squint) resampling, phase 3 with the
 *     azimuth window;
 *  3. the azimuth IFFT in place, in column blocks as in 1.
 * The quadratic phases are anchored exactly every `anchor` samples and advanced between
 * anchors by complex recurrence in double (drift far below float rounding), in
 * `lanes` independent chains so that the multiplies do not wait on each other.
 */
#include "common/cpu/fftw_plan.h"
#include "common/cpu/row_pool.h"
#include "sar/csa_backends.h"
#include <gpuradar/kernels/common/cpu_threads.h>
#include <algorithm>
#include <cmath>
#include <vector>

// Run-time dispatch between the baseline x86-64 build and an AVX2 one (GCC's
// target_clones, resolved once at load time): no -march flag in the build.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define GPURADAR_CSA_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define GPURADAR_CSA_CLONES
#endif

namespace gpuradar::kernels::detail {
namespace {

using cdouble = std::complex<double>;
constexpr double two_pi = 6.28318530717958647692;
constexpr int anchor = 256;
constexpr int lanes = 4;
//! Range columns per azimuth-FFT block: 16 complex floats are two cache lines per
//! row, and the block buffer (naz x 16) stays within a core's L2 for naz <= 4096.
constexpr std::size_t column_block = 16;
//! Padding between the columns of a block buffer (complex samples): with naz a power of
//! two, unpadded columns lie a multiple of 4 KiB apart and every column's sample m
//! would fall into the same L1 set during the transposes.
constexpr std::size_t column_pad = 8;

//! The lanes' doubles: GCC/Clang vector extension, one AVX register in the AVX2 clone,
//! two SSE ones in the baseline (the same products, no FMA: identical results).
typedef double vd __attribute__((vector_size(sizeof(double) * lanes)));

cdouble turns_to_phasor(double turns)
{
    const double f = turns - std::rint(turns);
    return { std::cos(two_pi * f), std::sin(two_pi * f) };
}

/*!
 * d[i] *= scale weight(i) exp(j 2 pi q(x0 + i)), i < n; weight(i) = w ? w[i] : 1. Lane l
 * of an anchor block advances x = s + l, s + l + lanes, ...: its first difference
 * q(x + lanes) - q(x) grows by the constant 2 c lanes^2 per step. At an anchor, lane 0
 * is evaluated exactly and lanes 1.. follow from it by unit steps (three sine-cosine
 * pairs per anchor). Complex products written out: std::complex's operator* checks for
 * NaN (a library call).
 */
GPURADAR_CSA_CLONES void apply_quadratic(
    cfloat* d, std::size_t n, long long x0, csa_quadratic q, const float* w, float scale)
{
    constexpr double L = lanes;
    const cdouble rot = turns_to_phasor(2.0 * q.c * L * L);  // lane step's growth
    const cdouble unit_rot = turns_to_phasor(2.0 * q.c);     // unit step's growth
    const cdouble lane_rot = turns_to_phasor(2.0 * q.c * L); // lane step, next lane
    const double rr = rot.real(), ri = rot.imag();
    for (std::size_t s = 0; s < n; s += anchor) {
        const double x = static_cast<double>(x0 + static_cast<long long>(s));
        cdouble z[lanes], dz[lanes];
        z[0] = turns_to_phasor(q.a + q.b * x + q.c * x * x);
        dz[0] = turns_to_phasor(q.b * L + q.c * (2.0 * x * L + L * L));
        cdouble unit = turns_to_phasor(q.b + q.c * (2.0 * x + 1.0));
        for (int l = 1; l < lanes; ++l) {
            z[l] = z[l - 1] * unit;
            unit *= unit_rot;
            dz[l] = dz[l - 1] * lane_rot;
        }
        vd zr, zi, dr, di;
        for (int l = 0; l < lanes; ++l) {
            zr[l] = z[l].real();
            zi[l] = z[l].imag();
            dr[l] = dz[l].real();
            di[l] = dz[l].imag();
        }
        const std::size_t e = std::min(n, s + anchor);
        std::size_t i = s;
        for (; i + lanes <= e; i += lanes) {
            vd vr, vi, g;
            for (int l = 0; l < lanes; ++l) {
                vr[l] = d[i + l].real();
                vi[l] = d[i + l].imag();
                g[l] = w ? static_cast<double>(w[i + l]) : 1.0;
            }
            g *= static_cast<double>(scale);
            const vd outr = g * (vr * zr - vi * zi), outi = g * (vr * zi + vi * zr);
            for (int l = 0; l < lanes; ++l)
                d[i + l] =
                    cfloat(static_cast<float>(outr[l]), static_cast<float>(outi[l]));
            const vd nzr = zr * dr - zi * di, nzi = zr * di + zi * dr;
            const vd ndr = dr * rr - di * ri, ndi = dr * ri + di * rr;
            zr = nzr;
            zi = nzi;
            dr = ndr;
            di = ndi;
        }
        for (int l = 0; i + l < e; ++l) { // the row's last samples: part of the lanes
            const double g = (w ? static_cast<double>(w[i + l]) : 1.0) * scale;
            const double vr = d[i + l].real(), vi = d[i + l].imag();
            d[i + l] = cfloat(static_cast<float>(g * (vr * zr[l] - vi * zi[l])),
                              static_cast<float>(g * (vr * zi[l] + vi * zr[l])));
        }
    }
}

class csa_cpu final : public csa
{
public:
    csa_cpu(const stripmap_params& p, std::size_t naz, const options& o)
        : csa(p, naz),
          d_t(csa_make_tables(p, naz, o)),
          d_col(naz + column_pad),
          d_az_fwd(plan(naz, column_block, 1, d_col, FFTW_FORWARD)),
          d_az_inv(plan(naz, column_block, 1, d_col, FFTW_BACKWARD)),
          d_rg_fwd(plan(p.nrange, 1, 1, p.nrange, FFTW_FORWARD)),
          d_rg_inv(plan(p.nrange, 1, 1, p.nrange, FFTW_BACKWARD))
    {
        // One scratch set per pool participant: a column block and (squint) a row.
        for (int i = 0; i < cpu_threads(); ++i) {
            d_blocks.push_back(fftwf_alloc(d_col * column_block));
            d_rows.emplace_back(d_t.resample ? p.nrange : 0);
        }
    }

    int passes() const override { return 3; }

    void run(const cfloat* raw, cfloat* image) override
    {
        azimuth_fft(raw, image, *d_az_fwd);
        range_rows(image);
        azimuth_fft(image, image, *d_az_inv);
    }

private:
    static int n(std::size_t v) { return static_cast<int>(v); }

    //! An in-place plan, measured: a block is large and the plans serve every block of
    //! the stream, so the planning time pays back within a block.
    static std::unique_ptr<fftwf_plan_1d> plan(std::size_t len,
                                               std::size_t batch,
                                               std::size_t stride,
                                               std::size_t dist,
                                               int sign)
    {
        return std::make_unique<fftwf_plan_1d>(
            n(len), n(batch), n(stride), n(dist), sign, true, "csa", 1, FFTW_MEASURE);
    }
    unsigned slots() const { return static_cast<unsigned>(d_blocks.size()); }

    //! dst <- the azimuth FFT of src's columns (dst may be src).
    void azimuth_fft(const cfloat* src, cfloat* dst, const fftwf_plan_1d& plan)
    {
        const std::size_t nr = d_t.nrange, nb = (nr + column_block - 1) / column_block;
        parallel_rows(nb, 1, slots(), [&](std::size_t b0, std::size_t b1, unsigned slot) {
            cfloat* buf = d_blocks[slot].get();
            for (std::size_t b = b0; b < b1; ++b) {
                const std::size_t c0 = b * column_block;
                const std::size_t w = std::min(column_block, nr - c0);
                if (w < column_block) // the last block: unused columns transform zeros
                    std::fill(buf, buf + d_col * column_block, cfloat(0.0f, 0.0f));
                for (std::size_t m = 0; m < d_naz; ++m) {
                    const cfloat* s = src + m * nr + c0;
                    for (std::size_t c = 0; c < w; ++c)
                        buf[c * d_col + m] = s[c];
                }
                plan.execute(buf, buf);
                for (std::size_t m = 0; m < d_naz; ++m) {
                    cfloat* t = dst + m * nr + c0;
                    for (std::size_t c = 0; c < w; ++c)
                        t[c] = buf[c * d_col + m];
                }
            }
        });
    }

    //! Every range step of one azimuth-frequency row m, in place.
    void range_row(std::size_t m, cfloat* row, cfloat* tmp) const
    {
        const std::size_t nr = d_t.nrange;
        const float wa = d_t.azimuth_weight[m];
        if (wa == 0.0f) {
            std::fill(row, row + nr, cfloat(0.0f, 0.0f));
            return;
        }
        apply_quadratic(row, nr, 0, d_t.phase1[m], nullptr, 1.0f);
        d_rg_fwd->execute(row, row);
        const std::size_t pos = nr - nr / 2; // bins [0, pos): x = n; the rest x = n - nr
        const float* w = d_t.range_weight.data();
        apply_quadratic(row, pos, 0, d_t.phase2[m], w, 1.0f);
        apply_quadratic(row + pos,
                        nr - pos,
                        -static_cast<long long>(nr / 2),
                        d_t.phase2[m],
                        w + pos,
                        1.0f);
        d_rg_inv->execute(row, row);
        if (d_t.resample)
            resample_row(row, tmp);
        apply_quadratic(row, nr, 0, d_t.phase3[m], nullptr, wa);
    }

    void range_rows(cfloat* image)
    {
        const std::size_t nr = d_t.nrange;
        parallel_rows(
            d_naz, 4, slots(), [&](std::size_t m0, std::size_t m1, unsigned slot) {
                for (std::size_t m = m0; m < m1; ++m)
                    range_row(m, image + m * nr, d_rows[slot].data());
            });
    }

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
    const std::size_t d_col; //!< distance of a block buffer's columns
    const std::unique_ptr<fftwf_plan_1d> d_az_fwd, d_az_inv, d_rg_fwd, d_rg_inv;
    std::vector<fftwf_complex_array> d_blocks;
    std::vector<std::vector<cfloat>> d_rows;
};

} // namespace

std::unique_ptr<csa>
make_csa_cpu(const stripmap_params& p, std::size_t naz, const csa::options& o)
{
    return std::make_unique<csa_cpu>(p, naz, o);
}

} // namespace gpuradar::kernels::detail
