/* Array geometry: element positions and plane-wave phases. */
#include "param_check.h"
#include <gpuradar/kernels/array_geometry.h>
#include <cmath>
#include <string>

namespace gpuradar::kernels {
namespace {

bool finite_positive(double v) { return std::isfinite(v) && v > 0.0; }

} // namespace

std::vector<position_m> ula_positions(std::size_t nelements,
                                      double spacing_wl,
                                      double wavelength_m,
                                      const char* who)
{
    if (nelements == 0)
        detail::throw_invalid(who, "nchannels", ">= 1", nelements);
    if (!finite_positive(spacing_wl))
        detail::throw_invalid(who, "element_spacing_wl", "> 0 wavelengths", spacing_wl);
    if (!finite_positive(wavelength_m))
        detail::throw_invalid(who, "wavelength_m", "> 0", wavelength_m);
    std::vector<position_m> p(nelements);
    const double centre = 0.5 * double(nelements - 1);
    for (std::size_t n = 0; n < nelements; ++n)
        p[n] = { (double(n) - centre) * spacing_wl * wavelength_m, 0.0, 0.0 };
    return p;
}

std::vector<position_m>
positions_from_xyz(const std::vector<double>& xyz, std::size_t nchannels, const char* who)
{
    if (xyz.size() != 3 * nchannels)
        detail::throw_invalid(who,
                              "element_positions_m",
                              "3 * nchannels = " + std::to_string(3 * nchannels) +
                                  " numbers (x, y, z per channel)",
                              std::to_string(xyz.size()) + " numbers");
    std::vector<position_m> p(nchannels);
    for (std::size_t n = 0; n < nchannels; ++n) {
        for (std::size_t k = 0; k < 3; ++k) {
            if (!std::isfinite(xyz[3 * n + k]))
                detail::throw_invalid(
                    who, "element_positions_m", "finite", xyz[3 * n + k]);
            p[n][k] = xyz[3 * n + k];
        }
    }
    return p;
}

double arrival_phase_rad(const position_m& p, double wavelength_m, double theta_rad)
{
    return 2.0 * detail::pi / wavelength_m *
           (p[0] * std::sin(theta_rad) + p[1] * std::cos(theta_rad));
}

std::vector<std::complex<double>> steering_vector(const std::vector<position_m>& elements,
                                                  double wavelength_m,
                                                  double theta_rad)
{
    std::vector<std::complex<double>> a(elements.size());
    for (std::size_t n = 0; n < elements.size(); ++n)
        a[n] = std::polar(1.0, arrival_phase_rad(elements[n], wavelength_m, theta_rad));
    return a;
}

} // namespace gpuradar::kernels
