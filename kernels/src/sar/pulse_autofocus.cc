/* Phase-history autofocus sums: parameter checks and backend dispatch. */
#include "common/factories.h"
#include "common/param_check.h"
#include "sar/pulse_autofocus_backends.h"
#include <gpuradar/kernels/common/window.h>
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

pulse_autofocus::interpolator pulse_autofocus::parse_interpolator(const std::string& name)
{
    if (name == "linear")
        return interpolator::linear;
    if (name == "sinc16")
        return interpolator::sinc16;
    bad("interpolator", "one of linear, sinc16", "'" + name + "'");
}

const char* pulse_autofocus::to_string(interpolator i)
{
    return i == interpolator::sinc16 ? "sinc16" : "linear";
}

void pulse_autofocus::validate(std::size_t npulses,
                               std::size_t nbins,
                               std::size_t npixels,
                               interpolator interp)
{
    if (interp != interpolator::linear && interp != interpolator::sinc16)
        bad("interpolator", "linear or sinc16", static_cast<int>(interp));
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
                                                       stream_ref stream,
                                                       interpolator interp)
{
    validate(npulses, nbins, npixels, interp);
    detail::require_backend(b, "pulse_autofocus");
#ifdef GPURADAR_HAVE_CUDA
    if (b == backend::cuda)
        return detail::make_pulse_autofocus_cuda(npulses, nbins, npixels, interp, stream);
#endif
    (void)stream;
    return detail::make_pulse_autofocus_cpu(npulses, nbins, npixels, interp);
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

namespace detail {

std::vector<double> pha_sinc_table()
{
    using pa = pulse_autofocus;
    constexpr int half = pa::sinc_taps / 2;
    std::vector<double> t(std::size_t(pa::sinc_steps + 1) * pa::sinc_taps);
    for (int i = 0; i <= pa::sinc_steps; ++i)
        for (int j = 0; j < pa::sinc_taps; ++j) {
            const double x = double(i) / pa::sinc_steps - double(j + 1 - half);
            t[std::size_t(i) * pa::sinc_taps + j] =
                kaiser_sinc(x, half, pa::sinc_kaiser_beta);
        }
    return t;
}

} // namespace detail

} // namespace gpuradar::kernels
