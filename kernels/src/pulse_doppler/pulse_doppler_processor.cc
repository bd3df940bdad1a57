/* pulse_doppler_processor: parameter checks, dispatch. */
#include "common/factories.h"
#include "common/param_check.h"
#include "pulse_doppler/pulse_doppler_processor_backends.h"
#include <gpuradar/kernels/common/buffer_size.h>
#include <cmath>
#include <complex>
#include <string>

namespace gpuradar::kernels {

namespace {
constexpr const char* who = "pulse_doppler_processor";
} // namespace

// Gives the CPU engine VOLK's conversion of integer input (run_samples) and its
// workspace; the CUDA engine converts inside pulse compression's load instead.
std::unique_ptr<pulse_doppler_processor>
attach_input_conversion(std::unique_ptr<pulse_doppler_processor> proc);

void pulse_doppler_processor::validate(const params& p)
{
    const std::size_t nfft = p.nfft == 0 ? p.npulses : p.nfft;
    if (p.nrange < 1)
        detail::throw_invalid(who, "nrange", ">= 1", p.nrange);
    if (p.channels < 1)
        detail::throw_invalid(who, "channels", ">= 1", p.channels);
    doppler_filter::check_npulses(p.npulses, p.mti, who);
    if (nfft < p.npulses)
        detail::throw_invalid(
            who, "nfft", ">= npulses (" + std::to_string(p.npulses) + ") or 0", nfft);
    check_buffer_size(
        who,
        { { "nfft", nfft }, { "nrange", p.nrange }, { "channels", p.channels } },
        sizeof(cfloat),
        "the Doppler map of one CPI");
    if (p.waveform.empty() || p.waveform.size() > p.nrange)
        detail::throw_invalid(who,
                              "waveform",
                              "1 to nrange (" + std::to_string(p.nrange) + ") samples",
                              std::to_string(p.waveform.size()) + " samples");
    p.range_window.validate(who, "range_");
    p.doppler_window.validate(who, "doppler_");
}

std::unique_ptr<pulse_doppler_processor> pulse_doppler_processor::make(backend b,
                                                                       const params& p_in,
                                                                       stream_ref stream,
                                                                       const fusion& f)
{
    // The stages check their own parameters again when the backend makes them.
    validate(p_in);
    params p = p_in;
    if (p.nfft == 0)
        p.nfft = p.npulses;
    detail::require_backend(b, who);
#ifdef GPURADAR_HAVE_CUDA
    if (b == backend::cuda)
        return detail::make_pulse_doppler_processor_cuda(p, stream, f);
#else
    (void)stream;
    (void)f;
#endif
    return attach_input_conversion(detail::make_pulse_doppler_processor_cpu(p));
}

std::unique_ptr<pulse_doppler_processor>
attach_input_conversion(std::unique_ptr<pulse_doppler_processor> proc)
{
    const sample_format f = proc->d_params.input;
    if (f == sample_format::fc32)
        return proc;
    proc->d_convert = sample_convert::make(backend::cpu, f);
    proc->d_host_converted.resize(proc->input_size());
    return proc;
}

void pulse_doppler_processor::run_samples(const void* in, float* out)
{
    if (!d_convert) {
        run(static_cast<const cfloat*>(in), out);
        return;
    }
    d_convert->run(in, d_host_converted.data(), input_size());
    run(d_host_converted.data(), out);
}

} // namespace gpuradar::kernels
