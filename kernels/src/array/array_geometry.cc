/* Array geometry: element positions and plane-wave phases. */
#include "common/param_check.h"
#include <gpuradar/kernels/array/array_geometry.h>
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

std::vector<position_m> ura_positions(std::size_t nx,
                                      std::size_t nz,
                                      double spacing_x_wl,
                                      double spacing_z_wl,
                                      double wavelength_m,
                                      const char* who)
{
    if (nx == 0)
        detail::throw_invalid(who, "nx", ">= 1", nx);
    if (nz == 0)
        detail::throw_invalid(who, "nz", ">= 1", nz);
    if (!finite_positive(spacing_x_wl))
        detail::throw_invalid(who, "spacing_x_wl", "> 0 wavelengths", spacing_x_wl);
    if (!finite_positive(spacing_z_wl))
        detail::throw_invalid(who, "spacing_z_wl", "> 0 wavelengths", spacing_z_wl);
    const auto row = ula_positions(nx, spacing_x_wl, wavelength_m, who);
    const auto column = ula_positions(nz, spacing_z_wl, wavelength_m, who);
    std::vector<position_m> p;
    for (std::size_t iz = 0; iz < nz; ++iz)
        for (std::size_t ix = 0; ix < nx; ++ix)
            p.push_back({ row[ix][0], 0.0, column[iz][0] });
    return p;
}

void check_elevation_deg(double elevation_deg, const char* who, const char* name)
{
    if (!(std::isfinite(elevation_deg) && std::fabs(elevation_deg) <= 90.0))
        detail::throw_invalid(who, name, "in [-90, 90] degrees", elevation_deg);
}

std::array<double, 3> direction_vector(double azimuth_rad, double elevation_rad)
{
    const double ce = std::cos(elevation_rad);
    return { std::sin(azimuth_rad) * ce,
             std::cos(azimuth_rad) * ce,
             std::sin(elevation_rad) };
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

double arrival_phase_rad(const position_m& p,
                         double wavelength_m,
                         double theta_rad,
                         double phi_rad)
{
    const auto u = direction_vector(theta_rad, phi_rad);
    return 2.0 * detail::pi / wavelength_m * (p[0] * u[0] + p[1] * u[1] + p[2] * u[2]);
}

std::vector<std::complex<double>> steering_vector(const std::vector<position_m>& elements,
                                                  double wavelength_m,
                                                  double theta_rad,
                                                  double phi_rad)
{
    std::vector<std::complex<double>> a(elements.size());
    for (std::size_t n = 0; n < elements.size(); ++n)
        a[n] = std::polar(
            1.0, arrival_phase_rad(elements[n], wavelength_m, theta_rad, phi_rad));
    return a;
}

} // namespace gpuradar::kernels
