/* Complex white Gaussian noise for the simulators (radar_scene, radar_channel). */
#ifndef INCLUDED_GPURADAR_KERNELS_COMPLEX_NOISE_H
#define INCLUDED_GPURADAR_KERNELS_COMPLEX_NOISE_H

#include <gpuradar/kernels/common/backend.h>
#include <cstddef>
#include <cstdint>

namespace gpuradar::kernels {

/*!
 * \brief Circular complex Gaussian samples of a given power, reproducible from a seed.
 *
 * xoshiro256+ (Blackman & Vigna) seeded through SplitMix64, and Marsaglia's polar method
 * on the two 32-bit halves of each draw: no trigonometry, several times the rate of
 * std::mt19937_64 + std::normal_distribution (the simulators' bottleneck otherwise).
 */
class complex_noise
{
public:
    explicit complex_noise(std::uint64_t seed);

    //! out[i] = noise of E|out[i]|^2 = power (zeros when power == 0), i < n.
    void fill(cfloat* out, std::size_t n, double power);

private:
    std::uint64_t next();
    std::uint64_t d_state[4];
};

} // namespace gpuradar::kernels

#endif
