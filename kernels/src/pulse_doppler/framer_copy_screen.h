/* framer_copy's per-sample screening (internal), one definition for the CPU twin and the
 * CUDA kernel so that both write the same bits and count the same samples. */
#ifndef INCLUDED_GPURADAR_KERNELS_FRAMER_COPY_SCREEN_H
#define INCLUDED_GPURADAR_KERNELS_FRAMER_COPY_SCREEN_H

#include <cmath>

#ifdef __CUDACC__
#define GPURADAR_SCREEN_HD __host__ __device__ __forceinline__
#else
#define GPURADAR_SCREEN_HD inline
#endif

namespace gpuradar::kernels::detail {

//! Samples of one thread's share, by kind (framer_sample_counts).
struct screen_tally {
    unsigned int nonfinite = 0, clamped = 0, saturated = 0;
};

/*!
 * One sample (re, im) in place: a non-finite part makes it 0 (nonfinite); a finite part
 * beyond +-clamp is clamped (clamped); a part with |x| >= sat is noted (saturated).
 */
GPURADAR_SCREEN_HD void
screen_sample(float& re, float& im, float clamp, float sat, screen_tally& t)
{
#ifdef __CUDA_ARCH__
    const bool finite = isfinite(re) && isfinite(im);
    const float ar = fabsf(re), ai = fabsf(im);
#else
    const bool finite = std::isfinite(re) && std::isfinite(im);
    const float ar = std::fabs(re), ai = std::fabs(im);
#endif
    if (!finite) {
        re = 0.0f;
        im = 0.0f;
        ++t.nonfinite;
        return;
    }
    t.saturated += (ar >= sat || ai >= sat) ? 1u : 0u;
    if (ar > clamp || ai > clamp) {
        ++t.clamped;
        re = re > clamp ? clamp : (re < -clamp ? -clamp : re);
        im = im > clamp ? clamp : (im < -clamp ? -clamp : im);
    }
}

} // namespace gpuradar::kernels::detail

#endif
