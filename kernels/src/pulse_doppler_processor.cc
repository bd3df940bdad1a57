/* pulse_doppler_processor: parameter checks, dispatch. */
#include "factories.h"
#include "param_check.h"
#include "pulse_doppler_processor_backends.h"
#include <cmath>
#include <complex>
#include <string>

namespace gpuradar::kernels {

namespace {
constexpr const char* who = "pulse_doppler_processor";
} // namespace

std::unique_ptr<pulse_doppler_processor> pulse_doppler_processor::make(backend b,
                                                                       const params& p_in,
                                                                       stream_ref stream,
                                                                       const fusion& f)
{
    params p = p_in;
    if (p.nfft == 0)
        p.nfft = p.npulses;
    // The stages check the rest (waveform, windows, nfft, npulses against the MTI) when
    // the backend makes them, before they allocate; these are the ones this class
    // combines (CPI sizes).
    if (p.nrange < 1)
        detail::throw_invalid(who, "nrange", ">= 1", p.nrange);
    if (p.channels < 1)
        detail::throw_invalid(who, "channels", ">= 1", p.channels);
    const std::size_t min_pulses = doppler_filter::mti_order(p.mti) +
                                   (p.mti == doppler_filter::mti_mode::none ? 2 : 1);
    if (p.npulses < min_pulses)
        detail::throw_invalid(
            who,
            "npulses",
            ">= " + std::to_string(min_pulses) +
                (p.mti == doppler_filter::mti_mode::none
                     ? std::string()
                     : std::string(" with mti ") + doppler_filter::to_string(p.mti)),
            p.npulses);
    if (p.nfft < p.npulses)
        detail::throw_invalid(
            who, "nfft", ">= npulses (" + std::to_string(p.npulses) + ") or 0", p.nfft);
    if (p.waveform.empty() || p.waveform.size() > p.nrange)
        detail::throw_invalid(who,
                              "waveform",
                              "1 to nrange (" + std::to_string(p.nrange) + ") samples",
                              std::to_string(p.waveform.size()) + " samples");
    p.range_window.validate(who);
    p.doppler_window.validate(who);
    detail::require_backend(b, who);
#ifdef GPURADAR_HAVE_CUDA
    if (b == backend::cuda)
        return detail::make_pulse_doppler_processor_cuda(p, stream, f);
#else
    (void)stream;
    (void)f;
#endif
    return detail::make_pulse_doppler_processor_cpu(p);
}

} // namespace gpuradar::kernels
