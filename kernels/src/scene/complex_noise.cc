/* complex_noise: xoshiro256+ and Marsaglia's polar method. */
#include <gpuradar/kernels/scene/complex_noise.h>
#include <algorithm>
#include <cmath>

namespace gpuradar::kernels {

namespace {
//! SplitMix64: expands the seed into the generator's state (its authors' advice).
std::uint64_t splitmix64(std::uint64_t& x)
{
    std::uint64_t z = (x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
} // namespace

complex_noise::complex_noise(std::uint64_t seed)
{
    for (auto& w : d_state)
        w = splitmix64(seed);
}

//! xoshiro256+: 64 random bits per call; the upper bits used here are its strongest.
std::uint64_t complex_noise::next()
{
    std::uint64_t* s = d_state;
    const std::uint64_t r = s[0] + s[3];
    const std::uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = (s[3] << 45) | (s[3] >> 19);
    return r;
}

void complex_noise::fill(cfloat* out, std::size_t n, double power)
{
    if (!(power > 0.0)) {
        std::fill(out, out + n, cfloat(0.0f, 0.0f));
        return;
    }
    // A point (u, v) uniform in the unit disc from one 64-bit draw (s = u^2 + v^2, 21% of
    // tries rejected); then (u, v) sqrt(-2 ln s / s) are two independent N(0, 1).
    const float sigma = static_cast<float>(std::sqrt(power / 2.0));
    constexpr float two_pow_m31 = 1.0f / 2147483648.0f;
    for (std::size_t i = 0; i < n; ++i) {
        float u, v, q;
        do {
            const std::uint64_t r = next();
            u = static_cast<float>(static_cast<std::int32_t>(r >> 32)) * two_pow_m31;
            v = static_cast<float>(static_cast<std::int32_t>(r & 0xFFFFFFFFull)) *
                two_pow_m31;
            q = u * u + v * v;
        } while (q >= 1.0f || q == 0.0f);
        const float f = sigma * std::sqrt(-2.0f * std::log(q) / q);
        out[i] = cfloat(u * f, v * f);
    }
}

} // namespace gpuradar::kernels
