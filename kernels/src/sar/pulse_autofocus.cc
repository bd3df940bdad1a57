/* Phase-history autofocus sums: parameter checks and backend dispatch. */
#include "common/factories.h"
#include "common/param_check.h"
#include "sar/pulse_autofocus_backends.h"
#include <cmath>
#include <string>

namespace gpuradar::kernels {

namespace {

template <typename V>
[[noreturn]] void bad(const char* param, const std::string& constraint, const V& got)
{
    detail::throw_invalid("pulse_autofocus", param, constraint, got);
}

} // namespace

void pulse_autofocus::validate(std::size_t npulses,
                               std::size_t nbins,
                               std::size_t npixels)
{
    if (npulses < 3 || npulses > max_pulses)
        bad("npulses", "in [3, " + std::to_string(max_pulses) + "]", npulses);
    if (nbins < 2)
        bad("nbins", ">= 2", nbins);
    if (npixels < 1)
        bad("npixels", ">= 1", npixels);
    if (npixels > max_terms / npulses)
        bad("npixels",
            "<= " + std::to_string(max_terms / npulses) +
                " (npulses x npixels <= 2^28 terms)",
            npixels);
}

std::unique_ptr<pulse_autofocus> pulse_autofocus::make(backend b,
                                                       std::size_t npulses,
                                                       std::size_t nbins,
                                                       std::size_t npixels,
                                                       stream_ref stream)
{
    validate(npulses, nbins, npixels);
    detail::require_backend(b, "pulse_autofocus");
#ifdef GPURADAR_HAVE_CUDA
    if (b == backend::cuda)
        return detail::make_pulse_autofocus_cuda(npulses, nbins, npixels, stream);
#endif
    (void)stream;
    return detail::make_pulse_autofocus_cpu(npulses, nbins, npixels);
}

void pulse_autofocus::set_terms(const cfloat* pulses,
                                const double* geometry,
                                const grid& g,
                                const std::int32_t* pixels)
{
    for (double v : { g.x0, g.y0, g.z })
        if (!std::isfinite(v))
            bad("grid", "finite (x0, y0, z)", v);
    if (!std::isfinite(g.dx) || g.dx == 0.0)
        bad("grid.dx", "finite and non-zero", g.dx);
    if (!std::isfinite(g.dy) || g.dy == 0.0)
        bad("grid.dy", "finite and non-zero", g.dy);
    form_terms(pulses, geometry, g, pixels);
}

void pulse_autofocus::target_echoes(std::size_t ntargets,
                                    const std::int32_t* centres,
                                    const std::int32_t* start,
                                    const std::int32_t* window,
                                    const cdouble* image,
                                    cdouble* g)
{
    const auto np = static_cast<std::int64_t>(d_npixels);
    if (ntargets < 1)
        bad("ntargets", ">= 1", ntargets);
    if (start[0] != 0)
        bad("start[0]", "0", start[0]);
    for (std::size_t t = 0; t < ntargets; ++t) {
        if (centres[t] < 0 || centres[t] >= np)
            bad("centres", "pixel indices in [0, npixels)", centres[t]);
        if (start[t + 1] < start[t])
            bad("start", "non-decreasing", start[t + 1]);
    }
    for (std::int32_t k = 0; k < start[ntargets]; ++k)
        if (window[k] < 0 || window[k] >= np)
            bad("window", "pixel indices in [0, npixels)", window[k]);
    echoes(ntargets, centres, start, window, image, g);
}

} // namespace gpuradar::kernels
