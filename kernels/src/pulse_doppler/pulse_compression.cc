/* pulse_compression: parameter checks, reference and spectrum (shared), dispatch. */
#include "common/factories.h"
#include "common/host_fft.h"
#include "common/param_check.h"
#include "pulse_doppler/pulse_compression_backends.h"
#include <gpuradar/kernels/common/buffer_size.h>
#include <gpuradar/kernels/pulse_doppler/pulse_compression.h>
#include <gpuradar/kernels/waveform/waveform.h>
#include <algorithm>
#include <cmath>
#include <limits>

namespace gpuradar::kernels {

namespace {
constexpr const char* who = "pulse_compression";
} // namespace

std::size_t fast_fft_length(std::size_t n)
{
    for (std::size_t m = std::max<std::size_t>(n, 1);; ++m) {
        std::size_t r = m;
        for (std::size_t p : { 2, 3, 5, 7 })
            while (r % p == 0)
                r /= p;
        if (r == 1)
            return m;
    }
}

std::size_t preferred_fft_length(std::size_t n)
{
    for (std::size_t m = std::max<std::size_t>(n, 1);; ++m) {
        std::size_t r = m;
        for (std::size_t p : { 2, 3 })
            while (r % p == 0)
                r /= p;
        if (r == 1)
            return m;
    }
}

std::vector<cfloat>
lfm_chirp(double bandwidth_hz, double pulse_width_s, double sample_rate_hz, bool up)
{
    constexpr const char* stage = "lfm_chirp";
    if (!(sample_rate_hz > 0.0 && std::isfinite(sample_rate_hz)))
        detail::throw_invalid(stage, "sample_rate_hz", "> 0", sample_rate_hz);
    if (!(bandwidth_hz > 0.0 && bandwidth_hz <= sample_rate_hz))
        detail::throw_invalid(stage,
                              "bandwidth_hz",
                              "> 0 and <= sample_rate_hz (" +
                                  std::to_string(sample_rate_hz) + ")",
                              bandwidth_hz);
    if (!(pulse_width_s > 0.0 && std::isfinite(pulse_width_s)))
        detail::throw_invalid(stage, "pulse_width_s", "> 0", pulse_width_s);
    const double samples = std::round(pulse_width_s * sample_rate_hz);
    if (samples < 1.0)
        detail::throw_invalid(
            stage,
            "pulse_width_s",
            "at least one sample (pulse_width_s * sample_rate_hz >= 0.5)",
            pulse_width_s);
    check_waveform_length(samples, stage, "pulse_width_s");
    using detail::pi;
    const auto n = static_cast<std::size_t>(samples);
    const double k = (up ? 1.0 : -1.0) * bandwidth_hz / pulse_width_s;
    std::vector<cfloat> s(n);
    for (std::size_t i = 0; i < n; ++i) {
        const double t = static_cast<double>(i) / sample_rate_hz - pulse_width_s / 2;
        // Phase in double, reduced modulo 2 pi before the float conversion.
        const double phase = std::remainder(pi * k * t * t, 2 * pi);
        s[i] = cfloat(static_cast<float>(std::cos(phase)),
                      static_cast<float>(std::sin(phase)));
    }
    return s;
}

pulse_compression::method pulse_compression::parse_method(const std::string& name)
{
    if (name == "auto")
        return method::automatic;
    if (name == "fft")
        return method::fft;
    if (name == "fir")
        return method::fir;
    if (name == "overlap_save")
        return method::overlap_save;
    detail::throw_invalid(
        who, "method", "one of auto, fft, fir, overlap_save", "'" + name + "'");
}

const char* pulse_compression::to_string(method m)
{
    switch (m) {
    case method::automatic:
        return "auto";
    case method::fft:
        return "fft";
    case method::fir:
        return "fir";
    case method::overlap_save:
        return "overlap_save";
    }
    return "?";
}

pulse_compression::pulse_compression(backend b,
                                     std::size_t nrange,
                                     std::size_t rows,
                                     const window_spec& window,
                                     bool normalize,
                                     method m,
                                     std::size_t requested_fft_length,
                                     sample_format input)
    : d_backend(b),
      d_nrange(nrange),
      d_rows(rows),
      d_window(window),
      d_normalize(normalize),
      d_requested(m),
      d_requested_fft_length(requested_fft_length),
      d_input(input)
{
}

pulse_compression::reference
pulse_compression::make_reference(const std::vector<cfloat>& waveform) const
{
    if (waveform.empty())
        detail::throw_invalid(who, "waveform", "non-empty", "0 samples");
    if (waveform.size() > d_nrange)
        detail::throw_invalid(who,
                              "waveform",
                              "no longer than the pulse (nrange = " +
                                  std::to_string(d_nrange) + " samples)",
                              std::to_string(waveform.size()) + " samples");
    if (d_requested == method::fir && waveform.size() > fir_max_taps)
        detail::throw_invalid(who,
                              "waveform",
                              "at most fir_max_taps = " + std::to_string(fir_max_taps) +
                                  " samples with method fir (use fft or auto)",
                              std::to_string(waveform.size()) + " samples");
    const auto w = window_coefficients(d_window, waveform.size());
    double energy = 0.0;
    for (std::size_t k = 0; k < waveform.size(); ++k)
        energy += w[k] * w[k] * std::norm(std::complex<double>(waveform[k]));
    if (!(energy > 0.0) || !std::isfinite(energy))
        detail::throw_invalid(
            who, "waveform", "finite with non-zero energy after the window", energy);
    reference ref;
    ref.gain = d_normalize ? 1.0 / std::sqrt(energy) : 1.0;
    ref.taps.resize(waveform.size());
    for (std::size_t k = 0; k < waveform.size(); ++k)
        ref.taps[k] =
            cfloat(std::conj(std::complex<double>(waveform[k])) * (w[k] * ref.gain));
    const std::size_t linear = d_nrange + waveform.size() - 1;
    ref.fft_length = d_requested_fft_length == 0
                         ? preferred_fft_length(linear)
                         : std::max(d_requested_fft_length, linear);
    const std::size_t L = waveform.size();
    const bool os_possible = d_backend == backend::cuda && L <= overlap_save_max_taps;
    switch (d_requested) {
    case method::automatic:
        ref.resolved = L <= fir_crossover_taps(d_backend) ? method::fir
                       : os_possible && L <= overlap_save_auto_max_taps
                           ? method::overlap_save
                           : method::fft;
        break;
    case method::overlap_save:
        // The CPU twin and waveforms too long for one segment: the fft method (same y).
        ref.resolved = os_possible ? method::overlap_save : method::fft;
        break;
    default:
        ref.resolved = d_requested;
    }
    if (ref.resolved == method::fft) // the workspace of the fft method, rows x fft_length
        check_buffer_size(who,
                          { { "rows", d_rows }, { "fft_length", ref.fft_length } },
                          sizeof(cfloat),
                          "the FFT workspace (fft_length >= nrange + waveform - 1)");
    return ref;
}

std::vector<cfloat> pulse_compression::make_spectrum(const reference& ref)
{
    const std::size_t n = ref.fft_length;
    std::vector<cfloat> h(n, cfloat(0.0f, 0.0f));
    // conj(taps) = g w s = g r.
    for (std::size_t k = 0; k < ref.taps.size(); ++k)
        h[k] = std::conj(ref.taps[k]);
    detail::host_fft_forward(h, who);
    const float inv_n = 1.0f / static_cast<float>(n);
    for (auto& v : h)
        v = std::conj(v) * inv_n;
    return h;
}

void pulse_compression::adopt(const reference& ref)
{
    d_waveform_length = ref.taps.size();
    d_gain = ref.gain;
    d_resolved = ref.resolved;
    d_fft_length = ref.fft_length;
}

std::unique_ptr<pulse_compression>
pulse_compression::make(backend b,
                        std::size_t nrange,
                        std::size_t rows,
                        const std::vector<cfloat>& waveform,
                        const window_spec& window,
                        bool normalize,
                        method m,
                        stream_ref stream,
                        std::size_t fft_length,
                        sample_format input)
{
    if (nrange < 1)
        detail::throw_invalid(who, "nrange", ">= 1", nrange);
    if (rows < 1)
        detail::throw_invalid(who, "rows", ">= 1", rows);
    check_buffer_size(
        who, { { "rows", rows }, { "nrange", nrange } }, sizeof(cfloat), "one run()");
    // cuFFT and FFTW take int lengths.
    if (fft_length > std::size_t(std::numeric_limits<int>::max()))
        detail::throw_invalid(who, "fft_length", "<= 2^31 - 1", fft_length);
    window.validate(who);
    detail::require_backend(b, who);
#ifdef GPURADAR_HAVE_CUDA
    if (b == backend::cuda)
        return detail::make_pulse_compression_cuda(
            nrange, rows, waveform, window, normalize, m, stream, fft_length, input);
#else
    (void)stream;
#endif
    auto pc = detail::make_pulse_compression_cpu(
        nrange, rows, waveform, window, normalize, m, fft_length, input);
    if (input != sample_format::fc32) {
        pc->d_convert = sample_convert::make(backend::cpu, input);
        pc->d_converted.resize(rows * nrange);
    }
    return pc;
}

void pulse_compression::run_samples(const void* in, cfloat* out)
{
    if (!d_convert) {
        run(static_cast<const cfloat*>(in), out);
        return;
    }
    d_convert->run(in, d_converted.data(), d_converted.size());
    run(d_converted.data(), out);
}

} // namespace gpuradar::kernels
