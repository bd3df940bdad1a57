#include "common/factories.h"
#include "common/param_check.h"
#include "pulse_doppler/front_end_correction_backends.h"
#include <gpuradar/kernels/common/buffer_size.h>
#include <cmath>
#include <stdexcept>

namespace gpuradar::kernels {

dc_removal parse_dc_removal(const std::string& name, const char* who)
{
    if (name == "off")
        return dc_removal::off;
    if (name == "pulse")
        return dc_removal::pulse;
    if (name == "running")
        return dc_removal::running;
    throw std::invalid_argument(std::string("gpuradar::") + who +
                                ": dc_removal must be one of off, pulse, running (got '" +
                                name + "')");
}

leakage_suppression parse_leakage(const std::string& name, const char* who)
{
    if (name == "off")
        return leakage_suppression::off;
    if (name == "mean_pulse")
        return leakage_suppression::mean_pulse;
    if (name == "blank")
        return leakage_suppression::blank;
    throw std::invalid_argument(std::string("gpuradar::") + who +
                                ": leakage must be one of off, mean_pulse, blank (got '" +
                                name + "')");
}

const char* to_string(dc_removal m)
{
    switch (m) {
    case dc_removal::pulse:
        return "pulse";
    case dc_removal::running:
        return "running";
    default:
        return "off";
    }
}

const char* to_string(leakage_suppression m)
{
    switch (m) {
    case leakage_suppression::mean_pulse:
        return "mean_pulse";
    case leakage_suppression::blank:
        return "blank";
    default:
        return "off";
    }
}

void front_end_correction_config::validate(const char* who) const
{
    if (npulses < 1)
        detail::throw_invalid(who, "npulses", ">= 1", npulses);
    if (nrange < 1)
        detail::throw_invalid(who, "nrange", ">= 1", nrange);
    if (dc == dc_removal::running &&
        !(std::isfinite(dc_time_constant) && dc_time_constant >= 1.0))
        detail::throw_invalid(
            who, "dc_time_constant", "finite and >= 1 pulse", dc_time_constant);
    if (leakage == leakage_suppression::mean_pulse &&
        !(leakage_alpha > 0.0 && leakage_alpha <= 1.0))
        detail::throw_invalid(who, "leakage_alpha", "in (0, 1]", leakage_alpha);
    if (leakage == leakage_suppression::blank &&
        !(leakage_gate >= 1 && leakage_gate <= nrange))
        detail::throw_invalid(who,
                              "leakage_gate",
                              "in [1, nrange = " + std::to_string(nrange) + "] samples",
                              leakage_gate);
}

std::unique_ptr<front_end_correction> front_end_correction::make(
    backend b, const front_end_correction_config& cfg, stream_ref stream, const char* who)
{
    cfg.validate(who);
    check_buffer_size(who,
                      { { "npulses", cfg.npulses }, { "nrange", cfg.nrange } },
                      sizeof(cfloat),
                      "the CPI");
    detail::require_backend(b, who);
#ifdef GPURADAR_HAVE_CUDA
    if (b == backend::cuda)
        return detail::make_front_end_correction_cuda(cfg, stream);
#endif
    (void)stream;
    return detail::make_front_end_correction_cpu(cfg);
}

} // namespace gpuradar::kernels
