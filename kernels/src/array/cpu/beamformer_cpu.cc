/* CPU twin of beamformer: per item and beam, a weighted sum of the channel rows. */
#include "array/beamformer_backends.h"
#include <algorithm>

namespace gpuradar::kernels::detail {
namespace {

//! acc[s] += w * x[s]; written on floats so the compiler vectorises it.
void accumulate_scaled(float* acc, const float* x, cfloat w, std::size_t nsamples)
{
    const float wr = w.real(), wi = w.imag();
    for (std::size_t s = 0; s < nsamples; ++s) {
        const float xr = x[2 * s], xi = x[2 * s + 1];
        acc[2 * s] += wr * xr - wi * xi;
        acc[2 * s + 1] += wr * xi + wi * xr;
    }
}

class beamformer_cpu final : public beamformer
{
public:
    beamformer_cpu(const beamformer_shape& shape, const std::vector<cfloat>& weights)
        : d_shape(shape), d_weights(weights)
    {
    }

    void run(const cfloat* in, cfloat* out, std::size_t nitems) override
    {
        const auto [nch, nbeams, ns] = d_shape;
        for (std::size_t i = 0; i < nitems; ++i) {
            const cfloat* x = in + i * nch * ns;
            for (std::size_t b = 0; b < nbeams; ++b) {
                cfloat* y = out + (i * nbeams + b) * ns;
                std::fill(y, y + ns, cfloat(0.0f, 0.0f));
                for (std::size_t c = 0; c < nch; ++c)
                    accumulate_scaled(reinterpret_cast<float*>(y),
                                      reinterpret_cast<const float*>(x + c * ns),
                                      d_weights[b * nch + c],
                                      ns);
            }
        }
    }

private:
    const beamformer_shape d_shape;
    const std::vector<cfloat> d_weights;
};

} // namespace

std::unique_ptr<beamformer> make_beamformer_cpu(const beamformer_shape& shape,
                                                const std::vector<cfloat>& weights)
{
    return std::make_unique<beamformer_cpu>(shape, weights);
}

} // namespace gpuradar::kernels::detail
