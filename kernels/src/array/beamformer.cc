/* beamformer: array geometry, steering, weights and the checked factory. */
#include "array/beamformer_backends.h"
#include "common/factories.h"
#include "common/param_check.h"
#include <gpuradar/kernels/array/beamformer.h>
#include <algorithm>
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

beam_directions beam_grid_deg(const std::vector<double>& azimuths_deg,
                              const std::vector<double>& elevations_deg)
{
    check_angles(azimuths_deg);
    if (elevations_deg.empty())
        detail::throw_invalid(
            stage, "beam_elevations_deg", "at least one elevation", "none");
    beam_directions d;
    for (double el : elevations_deg) {
        check_elevation_deg(el, stage, "beam_elevations_deg");
        d.azimuths_deg.insert(
            d.azimuths_deg.end(), azimuths_deg.begin(), azimuths_deg.end());
        d.elevations_deg.insert(d.elevations_deg.end(), azimuths_deg.size(), el);
    }
    return d;
}

std::vector<double> ura_taper(const window_spec& taper, std::size_t nx, std::size_t nz)
{
    taper.validate(stage);
    // A single element along an axis is untapered (some windows are 0 at one point).
    const auto along = [&](std::size_t n) {
        return n == 1 ? std::vector<double>{ 1.0 } : window_coefficients(taper, n);
    };
    const auto wx = along(nx);
    const auto wz = along(nz);
    std::vector<double> t;
    for (double z : wz)
        for (double x : wx)
            t.push_back(x * z);
    return t;
}

std::vector<double>
array_taper(const window_spec& taper, std::size_t nelements, std::size_t rows)
{
    if (rows == 0 || nelements % rows != 0)
        detail::throw_invalid(stage,
                              "element_rows",
                              "a divisor of the " + std::to_string(nelements) +
                                  " channels (>= 1)",
                              rows);
    return ura_taper(taper, nelements / rows, rows);
}

std::vector<cfloat> steering_weights(const std::vector<position_m>& elements,
                                     double wavelength_m,
                                     const beam_directions& beams,
                                     const std::vector<double>& taper)
{
    if (elements.empty())
        detail::throw_invalid(stage, "element_positions_m", "at least one element", 0);
    if (!finite_positive(wavelength_m))
        detail::throw_invalid(stage, "wavelength_m", "> 0", wavelength_m);
    check_angles(beams.azimuths_deg);
    if (beams.elevations_deg.size() != beams.azimuths_deg.size())
        detail::throw_invalid(stage,
                              "beam_elevations_deg",
                              "one per beam azimuth (" +
                                  std::to_string(beams.azimuths_deg.size()) + ")",
                              beams.elevations_deg.size());
    for (double el : beams.elevations_deg)
        check_elevation_deg(el, stage, "beam_elevations_deg");
    if (taper.size() != elements.size())
        detail::throw_invalid(stage, "taper", "one value per element", taper.size());
    double tsum = 0.0;
    for (double v : taper)
        tsum += v;
    if (!finite_positive(tsum))
        detail::throw_invalid(stage, "taper", "a positive sum", tsum);
    const std::size_t nch = elements.size();
    std::vector<cfloat> w(beams.azimuths_deg.size() * nch);
    for (std::size_t b = 0; b < beams.azimuths_deg.size(); ++b) {
        const auto a = steering_vector(elements,
                                       wavelength_m,
                                       beams.azimuths_deg[b] * detail::pi / 180,
                                       beams.elevations_deg[b] * detail::pi / 180);
        for (std::size_t n = 0; n < nch; ++n)
            w[b * nch + n] = cfloat(taper[n] * std::conj(a[n]) / tsum);
    }
    return w;
}

std::vector<cfloat> beamformer_weights(const std::vector<position_m>& elements,
                                       double wavelength_m,
                                       const std::vector<double>& beam_angles_deg,
                                       const window_spec& taper)
{
    // The checks in their documented order before the taper's own.
    if (elements.empty())
        detail::throw_invalid(stage, "element_positions_m", "at least one element", 0);
    if (!finite_positive(wavelength_m))
        detail::throw_invalid(stage, "wavelength_m", "> 0", wavelength_m);
    check_angles(beam_angles_deg);
    taper.validate(stage);
    const beam_directions beams{ beam_angles_deg,
                                 std::vector<double>(beam_angles_deg.size(), 0.0) };
    return steering_weights(
        elements, wavelength_m, beams, window_coefficients(taper, elements.size()));
}

std::unique_ptr<beamformer> beamformer::make(backend b,
                                             std::size_t nchannels,
                                             std::size_t nbeams,
                                             std::size_t nsamples,
                                             const std::vector<cfloat>& weights,
                                             stream_ref stream,
                                             sample_format input)
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
    std::unique_ptr<beamformer> bf;
#ifdef GPURADAR_HAVE_CUDA
    if (b == backend::cuda)
        bf = detail::make_beamformer_cuda(shape, weights, stream);
#endif
    if (!bf)
        bf = detail::make_beamformer_cpu(shape, weights);
    bf->d_input = input;
    bf->d_in_item = nchannels * nsamples;
    bf->d_out_item = nbeams * nsamples;
    if (input != sample_format::fc32 && !bf->converts_on_load()) {
        bf->d_chunk_items = std::max<std::size_t>(
            1, conversion_chunk_bytes / (bf->d_in_item * sizeof(cfloat)));
        bf->d_convert = sample_convert::make(b, input, stream);
        const std::size_t n = bf->d_chunk_items * bf->d_in_item;
        if (b == backend::cuda)
            bf->d_device_converted = device_memory(n * sizeof(cfloat));
        else
            bf->d_host_converted.resize(n);
    }
    return bf;
}

void beamformer::run_samples(const void* in, cfloat* out, std::size_t nitems)
{
    if (!d_convert) {
        run(static_cast<const cfloat*>(in), out, nitems);
        return;
    }
    cfloat* ws = d_host_converted.empty() ? d_device_converted.as<cfloat>()
                                          : d_host_converted.data();
    const auto* src = static_cast<const unsigned char*>(in);
    const std::size_t in_item_bytes = d_in_item * sample_bytes(d_input);
    // Chunks queue in order on one stream (CUDA), so the next conversion into the
    // workspace waits for the GEMM that reads it.
    for (std::size_t done = 0; done < nitems;) {
        const std::size_t n = std::min(d_chunk_items, nitems - done);
        d_convert->run(src + done * in_item_bytes, ws, n * d_in_item);
        run(ws, out + done * d_out_item, n);
        done += n;
    }
}

} // namespace gpuradar::kernels
