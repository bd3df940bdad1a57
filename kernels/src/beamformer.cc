/* beamformer: array geometry, steering, weights and the checked factory. */
#include "beamformer_backends.h"
#include "factories.h"
#include "param_check.h"
#include <gpuradar/kernels/beamformer.h>
#include <cmath>

namespace gpuradar::kernels {
namespace {

constexpr const char* stage = "beamformer";

bool finite_positive(double v) { return std::isfinite(v) && v > 0.0; }

bool inside_half_space(double angle_deg)
{
    return std::isfinite(angle_deg) && angle_deg >= -90.0 && angle_deg <= 90.0;
}

void check_angles(const std::vector<double>& angles_deg)
{
    if (angles_deg.empty())
        detail::throw_invalid(stage, "beam_angles_deg", "at least one angle", "none");
    for (double a : angles_deg)
        if (!inside_half_space(a))
            detail::throw_invalid(
                stage, "beam_angles_deg", "angles in [-90, 90] degrees", a);
}

} // namespace

std::vector<double> beam_fan_deg(std::size_t nbeams, double first_deg, double last_deg)
{
    if (nbeams == 0)
        detail::throw_invalid(stage, "nbeams", ">= 1", nbeams);
    if (!inside_half_space(first_deg))
        detail::throw_invalid(stage, "fan_first_deg", "in [-90, 90] degrees", first_deg);
    if (!inside_half_space(last_deg))
        detail::throw_invalid(stage, "fan_last_deg", "in [-90, 90] degrees", last_deg);
    std::vector<double> a(nbeams, first_deg);
    for (std::size_t b = 1; b < nbeams; ++b)
        a[b] = first_deg + (last_deg - first_deg) * double(b) / double(nbeams - 1);
    return a;
}

std::vector<cfloat> beamformer_weights(const std::vector<position_m>& elements,
                                       double wavelength_m,
                                       const std::vector<double>& beam_angles_deg,
                                       const window_spec& taper)
{
    if (elements.empty())
        detail::throw_invalid(stage, "element_positions_m", "at least one element", 0);
    if (!finite_positive(wavelength_m))
        detail::throw_invalid(stage, "wavelength_m", "> 0", wavelength_m);
    check_angles(beam_angles_deg);
    taper.validate(stage);
    const auto t = window_coefficients(taper, elements.size());
    double tsum = 0.0;
    for (double v : t)
        tsum += v;
    const std::size_t nch = elements.size();
    std::vector<cfloat> w(beam_angles_deg.size() * nch);
    for (std::size_t b = 0; b < beam_angles_deg.size(); ++b) {
        const auto a = steering_vector(
            elements, wavelength_m, beam_angles_deg[b] * detail::pi / 180);
        for (std::size_t n = 0; n < nch; ++n)
            w[b * nch + n] = cfloat(t[n] * std::conj(a[n]) / tsum);
    }
    return w;
}

std::unique_ptr<beamformer> beamformer::make(backend b,
                                             std::size_t nchannels,
                                             std::size_t nbeams,
                                             std::size_t nsamples,
                                             const std::vector<cfloat>& weights,
                                             stream_ref stream)
{
    if (nchannels == 0)
        detail::throw_invalid(stage, "nchannels", ">= 1", nchannels);
    if (nbeams == 0)
        detail::throw_invalid(stage, "nbeams", ">= 1", nbeams);
    if (nsamples == 0)
        detail::throw_invalid(stage, "nsamples", ">= 1", nsamples);
    if (weights.size() != nbeams * nchannels)
        detail::throw_invalid(
            stage,
            "weights",
            "nbeams * nchannels = " + std::to_string(nbeams * nchannels) + " values",
            weights.size());
    for (const auto& w : weights)
        if (!std::isfinite(w.real()) || !std::isfinite(w.imag()))
            detail::throw_invalid(stage, "weights", "finite", w);
    detail::require_backend(b, stage);
    const detail::beamformer_shape shape{ nchannels, nbeams, nsamples };
#ifdef GPURADAR_HAVE_CUDA
    if (b == backend::cuda)
        return detail::make_beamformer_cuda(shape, weights, stream);
#else
    (void)stream;
#endif
    return detail::make_beamformer_cpu(shape, weights);
}

} // namespace gpuradar::kernels
