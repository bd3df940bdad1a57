/* The chirp-scaling phase evaluated on the device (internal; csa_backends.h has the
 * maths): shared by the elementwise phase kernels and the fused range pass. */
#ifndef INCLUDED_GPURADAR_KERNELS_CSA_PHASE_CUH
#define INCLUDED_GPURADAR_KERNELS_CSA_PHASE_CUH

#include "sar/csa_backends.h"
#include <cuda_runtime.h>

namespace gpuradar::kernels::detail {

//! exp(j 2 pi (a + b x + c x^2)): the polynomial in double, the reduced turn in float.
//! The turn lies in [-1/2, 1/2], so the angle is inside [-pi, pi], where the hardware
//! sine and cosine (__sincosf) are within about 5e-7 absolute: below the float rounding
//! of the FFTs around them, at a fraction of sincospif's instructions (the phasors are
//! most of the fused range pass's arithmetic).
__device__ __forceinline__ float2 csa_phasor(const csa_quadratic& q, double x)
{
    constexpr float two_pi = 6.28318530717958647692f;
    const double t = fma(fma(q.c, x, q.b), x, q.a);
    const float f = static_cast<float>(t - rint(t));
    float s, c;
    __sincosf(two_pi * f, &s, &c);
    return make_float2(c, s);
}

//! The signed range-frequency bin of FFT bin k of an nr-point transform: k for
//! k < nr - nr/2, k - nr above (phase 2's x).
__device__ __forceinline__ double csa_signed_bin(unsigned k, unsigned nr)
{
    const long long n = static_cast<long long>(k);
    return static_cast<double>(
        n < static_cast<long long>(nr - nr / 2) ? n : n - static_cast<long long>(nr));
}

} // namespace gpuradar::kernels::detail

#endif
