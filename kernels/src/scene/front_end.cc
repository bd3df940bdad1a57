/* front_end: phase noise, I/Q imbalance, DC offset and ADC for the simulators. */
#include "common/param_check.h"
#include <gpuradar/kernels/scene/front_end.h>
#include <cmath>
#include <string>

namespace gpuradar::kernels {

bool front_end_config::active() const
{
    return dc_offset_i != 0.0 || dc_offset_q != 0.0 || iq_gain_db != 0.0 ||
           iq_phase_deg != 0.0 || phase_noise_linewidth_hz > 0.0 || adc_bits > 0;
}

void front_end_config::validate(double fs, const char* who) const
{
    if (!std::isfinite(dc_offset_i))
        detail::throw_invalid(who, "dc_offset_i", "finite", dc_offset_i);
    if (!std::isfinite(dc_offset_q))
        detail::throw_invalid(who, "dc_offset_q", "finite", dc_offset_q);
    if (!std::isfinite(iq_gain_db))
        detail::throw_invalid(who, "iq_gain_db", "finite (dB)", iq_gain_db);
    // At +-90 degrees the Q branch is I again: no quadrature left to correct.
    if (!(std::fabs(iq_phase_deg) < 90.0))
        detail::throw_invalid(who, "iq_phase_deg", "in (-90, 90) degrees", iq_phase_deg);
    if (!(phase_noise_linewidth_hz >= 0.0) || !(phase_noise_linewidth_hz < fs / 2.0))
        detail::throw_invalid(who,
                              "phase_noise_linewidth_hz",
                              "in [0, fs / 2 = " + std::to_string(fs / 2.0) + ") Hz",
                              phase_noise_linewidth_hz);
    if (adc_bits > 32)
        detail::throw_invalid(who, "adc_bits", "0 (no ADC) or in 1 .. 32", adc_bits);
    if (!(adc_full_scale > 0.0) || !std::isfinite(adc_full_scale))
        detail::throw_invalid(
            who, "adc_full_scale", "> 0 and finite (amplitude per rail)", adc_full_scale);
}

front_end::front_end(const front_end_config& cfg,
                     double fs,
                     std::uint64_t seed,
                     const char* who)
    : d_cfg(cfg), d_noise(seed)
{
    d_cfg.validate(fs, who);
    const double g = std::pow(10.0, d_cfg.iq_gain_db / 20.0);
    const double p = d_cfg.iq_phase_deg * detail::pi / 180.0;
    d_mu = 0.5 * (1.0 + g * std::polar(1.0, -p));
    d_nu = 0.5 * (1.0 - g * std::polar(1.0, p));
    d_step_var = 2.0 * detail::pi * d_cfg.phase_noise_linewidth_hz / fs;
}

void front_end::apply(cfloat* const* out, std::size_t nch, std::size_t n)
{
    if (!d_cfg.active() || n == 0)
        return;
    const bool pn = d_step_var > 0.0;
    if (pn) {
        // One draw per sample whatever the call sizes: the phase path does not depend on
        // how the stream is cut. complex_noise's real part of power 2 s is N(0, s).
        d_draws.resize(n);
        d_phi.resize(n);
        d_noise.fill(d_draws.data(), n, 2.0 * d_step_var);
        for (std::size_t m = 0; m < n; ++m) {
            d_phase += static_cast<double>(d_draws[m].real());
            d_phi[m] = d_phase;
        }
        // Keep the accumulator small: the rotation only needs phi modulo 2 pi.
        d_phase = std::remainder(d_phase, 2.0 * detail::pi);
    }
    const bool iq = d_cfg.iq_gain_db != 0.0 || d_cfg.iq_phase_deg != 0.0;
    const std::complex<double> dc(d_cfg.dc_offset_i, d_cfg.dc_offset_q);
    const unsigned b = d_cfg.adc_bits;
    const double step = b ? 2.0 * d_cfg.adc_full_scale / std::ldexp(1.0, b) : 0.0;
    const double qmax = b ? std::ldexp(1.0, b - 1) - 1.0 : 0.0;
    const double qmin = b ? -std::ldexp(1.0, b - 1) : 0.0;
    auto adc = [&](double u) {
        double q = std::round(u / step);
        if (q > qmax) {
            q = qmax;
            ++d_clipped;
        } else if (q < qmin) {
            q = qmin;
            ++d_clipped;
        }
        return q * step;
    };
    for (std::size_t c = 0; c < nch; ++c) {
        cfloat* x = out[c];
        for (std::size_t m = 0; m < n; ++m) {
            std::complex<double> v(x[m]);
            if (pn)
                v *= std::polar(1.0, d_phi[m]);
            if (iq)
                v = d_mu * v + d_nu * std::conj(v);
            v += dc;
            if (b)
                v = { adc(v.real()), adc(v.imag()) };
            x[m] = cfloat(static_cast<float>(v.real()), static_cast<float>(v.imag()));
        }
    }
}

} // namespace gpuradar::kernels
