/*
 * Chirp-scaling internals shared by the CPU twin and the CUDA kernels: the backend
 * factories and the phase functions, reduced at construction (in double, on the host)
 * to a few numbers per azimuth-frequency row so that both backends evaluate the same
 * formulas.
 *
 * Every phase function of the algorithm is, along one row of constant Doppler
 * frequency, a quadratic in an integer index x (range sample, or signed range-frequency
 * bin): phase = 2 pi (a + b x + c x^2) turns. With x an integer, a, b and c are reduced
 * modulo 1 without changing the phase, which keeps the products small; the x^2 term is
 * still evaluated in double on both backends.
 *
 * With Doppler frequency f of azimuth bin m (the bin's frequency unwrapped into
 * [f_dc - PRF/2, f_dc + PRF/2): the FFT shift folded in), D(f) = sqrt(1 - (lambda f /
 * 2V)^2), D_ref = D(f_dc), reference range R_ref and modified chirp rate
 * K_m = K / (1 - K c R_ref f^2 / (2 V^2 fc^3 D^3)) (secondary range compression):
 *   phase 1 (range-Doppler, sample k at tau_k = 2 near/c + k/fs):
 *     pi K_m (D_ref/D - 1) (tau_k - 2 R_ref/(c D))^2                   (chirp scaling)
 *   phase 2 (2-D frequency, range frequency f_r = x fs/nr, x in [-nr/2, nr/2)):
 *     pi D f_r^2 / (K_m D_ref) + 4 pi R_ref f_r (1/D - 1/D_ref) / c   (range
 *     compression with SRC, bulk RCMC), times the range window over |f_r| <= B/2
 *   after the range IFFT a target at closest approach R0 lies at tau = 2 R0/(c D_ref)
 *   for every f. With squint (D_ref < 1) each row is resampled (windowed-sinc, baseband
 *   there) onto the zero-Doppler grid R_j = near + j dr; then
 *   phase 3 (range-Doppler, R_j):
 *     4 pi fc D R_j / c - 4 pi K_m (1 - D/D_ref) (R_j - R_ref)^2 / (c D)^2
 *     (azimuth compression, residual phase), times the azimuth window over
 *     |f - f_dc| <= B_dop/2 and 1/(naz nrange) (the unnormalised FFTs).
 */
#ifndef INCLUDED_GPURADAR_KERNELS_CSA_BACKENDS_H
#define INCLUDED_GPURADAR_KERNELS_CSA_BACKENDS_H

#include <gpuradar/kernels/sar/csa.h>
#include <cstddef>
#include <memory>
#include <vector>

namespace gpuradar::kernels::detail {

//! Taps of the range resampler (squinted geometry only).
constexpr int csa_resample_taps = 32;

//! phase(x) = 2 pi (a + b x + c x^2), the three reduced modulo 1.
struct csa_quadratic {
    double a, b, c;
};

//! Everything a backend needs, computed once from the parameters (csa.cc).
struct csa_tables {
    std::size_t naz = 0, nrange = 0;
    std::vector<csa_quadratic> phase1; //!< per azimuth bin, over range sample k
    std::vector<csa_quadratic> phase2; //!< per azimuth bin, over signed range bin x
    std::vector<csa_quadratic> phase3; //!< per azimuth bin, over output column j
    std::vector<float> range_weight;   //!< per range FFT bin (0 outside the band)
    std::vector<float> azimuth_weight; //!< per azimuth FFT bin, with 1/(naz nrange)
    //! Squint: column j = sum_t taps[j*T + t] * in[first[j] + t] (zero outside the row).
    bool resample = false;
    std::vector<int> resample_first;
    std::vector<float> resample_taps;
};

csa_tables
csa_make_tables(const stripmap_params& p, std::size_t naz, const csa::options& o);

std::unique_ptr<csa>
make_csa_cpu(const stripmap_params& p, std::size_t naz, const csa::options& o);
#ifdef GPURADAR_HAVE_CUDA
std::unique_ptr<csa> make_csa_cuda(const stripmap_params& p,
                                   std::size_t naz,
                                   const csa::options& o,
                                   stream_ref s);
#endif

} // namespace gpuradar::kernels::detail

#endif
