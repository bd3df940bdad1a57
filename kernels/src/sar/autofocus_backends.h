/*
 * Autofocus internals shared by the neutral driver (autofocus.cc) and
 * the backends: the backend factories and the host-side steps both use (internal).
 */
#ifndef INCLUDED_GPURADAR_KERNELS_AUTOFOCUS_BACKENDS_H
#define INCLUDED_GPURADAR_KERNELS_AUTOFOCUS_BACKENDS_H

#include <gpuradar/kernels/sar/autofocus.h>
#include <cmath>
#include <complex>
#include <cstddef>
#include <memory>
#include <vector>

#if defined(__CUDACC__)
#define GPURADAR_PGA_HD __host__ __device__ __forceinline__
#else
#define GPURADAR_PGA_HD inline
#endif

namespace gpuradar::kernels::detail {

//! Index of range line r's azimuth sample n in the caller's image.
struct pga_layout {
    std::size_t nrange, naz;
    bool azimuth_contiguous;
    GPURADAR_PGA_HD std::size_t index(std::size_t r, std::size_t n) const
    {
        return azimuth_contiguous ? r * naz + n : n * nrange + r;
    }
    //! FFTW / cuFFT advanced layout of the image's azimuth transforms.
    int stride() const { return azimuth_contiguous ? 1 : int(nrange); }
    int distance() const { return azimuth_contiguous ? int(naz) : 1; }
};

//! Whether column c lies within a window of `width` columns around column 0 (circularly).
GPURADAR_PGA_HD bool pga_in_window(std::size_t c, std::size_t naz, std::size_t width)
{
    const std::size_t d = c < naz - c ? c : naz - c;
    return 2 * d < width;
}

//! The turns, in [0, 1), of the centring rotation exp(-j slope n) at sample n: in double
//! on both backends, so that only the final sine and cosine are rounded.
GPURADAR_PGA_HD double pga_centring_turns(double slope_rad, std::size_t n)
{
    const double t = -slope_rad / (2.0 * 3.14159265358979323846) * static_cast<double>(n);
    return t - ::floor(t);
}

//! -p ln p of one pixel, p = |x|^2 / energy (0 for p = 0), in double.
GPURADAR_PGA_HD double pga_entropy_term(float re, float im, double energy)
{
    const double p = (double(re) * re + double(im) * im) / energy;
    return p > 0.0 ? -p * ::log(p) : 0.0;
}

//! ln p + 1, the entropy gradient's weight of one pixel (p floored at 1e-300).
GPURADAR_PGA_HD float pga_entropy_weight(float re, float im, double energy)
{
    const double p = (double(re) * re + double(im) * im) / energy;
    return float(::log(p > 1e-300 ? p : 1e-300) + 1.0);
}

//! Window width from the centred rows' summed intensity (autofocus.h, step 2).
std::size_t pga_window_width(const std::vector<double>& profile,
                             std::size_t min_window,
                             std::size_t previous);

//! e minus its least-squares line.
std::vector<double> detrended(std::vector<double> e);
//! e with its steps brought into (-pi, pi] (phases found modulo 2 pi), then detrended.
std::vector<double> unwrapped_detrended(std::vector<double> e);

//! Step 4: the integrated, detrended phase of the sums' phase differences.
std::vector<double> pga_phase(const std::vector<std::complex<double>>& sums);

std::unique_ptr<autofocus>
make_autofocus_cpu(std::size_t nrange, std::size_t naz, const autofocus::options& o);
#ifdef GPURADAR_HAVE_CUDA
std::unique_ptr<autofocus> make_autofocus_cuda(std::size_t nrange,
                                               std::size_t naz,
                                               const autofocus::options& o,
                                               stream_ref s);
#endif

} // namespace gpuradar::kernels::detail

#endif
