/* Transmit waveforms by name: LFM and the phase codes (Barker, Frank, P4). */
#include "common/param_check.h"
#include <gpuradar/kernels/pulse_doppler/pulse_compression.h>
#include <gpuradar/kernels/waveform/waveform.h>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace gpuradar::kernels {

const char* const waveform_codes = "lfm, barker:N (N = 2, 3, 4, 5, 7, 11, 13), frank:N "
                                   "(N = M^2, M >= 2), p4:N (N >= 2)";

namespace {

std::string allowed(const std::string& other_codes)
{
    return std::string("one of ") + waveform_codes +
           (other_codes.empty() ? "" : ", " + other_codes);
}

//! "name:N" -> N; 0 when `code` is not of that form or N is not a positive integer.
std::size_t code_length(const std::string& code, const std::string& name)
{
    const std::string prefix = name + ":";
    if (code.compare(0, prefix.size(), prefix) != 0 || code.size() == prefix.size())
        return 0;
    std::size_t n = 0;
    for (std::size_t i = prefix.size(); i < code.size(); ++i) {
        if (code[i] < '0' || code[i] > '9' || n > 1000000)
            return 0;
        n = n * 10 + static_cast<std::size_t>(code[i] - '0');
    }
    return n;
}

} // namespace

void check_waveform_length(double samples, const char* stage, const char* param)
{
    if (samples <= static_cast<double>(max_waveform_samples))
        return;
    std::ostringstream limit;
    limit << "at most " << max_waveform_samples << " samples long ("
          << (max_waveform_samples * sizeof(cfloat) >> 20) << " MiB); the pulse would be "
          << samples << " samples, " << samples * sizeof(cfloat) / double(1 << 30)
          << " GiB";
    detail::throw_invalid(stage, param, limit.str(), samples);
}

std::vector<int> barker_code(std::size_t n, const char* stage)
{
    switch (n) {
    case 2:
        return { 1, -1 };
    case 3:
        return { 1, 1, -1 };
    case 4:
        return { 1, 1, -1, 1 };
    case 5:
        return { 1, 1, 1, -1, 1 };
    case 7:
        return { 1, 1, 1, -1, -1, 1, -1 };
    case 11:
        return { 1, 1, 1, -1, -1, -1, 1, -1, -1, 1, -1 };
    case 13:
        return { 1, 1, 1, 1, 1, -1, -1, 1, 1, -1, 1, -1, 1 };
    default:
        detail::throw_invalid(stage,
                              "waveform",
                              "a Barker code barker:N with N in 2, 3, 4, 5, 7, 11, 13",
                              "barker:" + std::to_string(n));
    }
}

std::vector<double> frank_phases(std::size_t n, const char* stage)
{
    const auto m =
        static_cast<std::size_t>(std::llround(std::sqrt(static_cast<double>(n))));
    if (m < 2 || m * m != n)
        detail::throw_invalid(stage,
                              "waveform",
                              "a Frank code frank:N with N = M^2, M >= 2 (4, 9, 16, ...)",
                              "frank:" + std::to_string(n));
    check_waveform_length(static_cast<double>(n), stage, "waveform");
    std::vector<double> ph(n);
    for (std::size_t p = 0; p < m; ++p)
        for (std::size_t q = 0; q < m; ++q) {
            // Reduce p q modulo M in integers: the phase stays exact for long codes.
            const double r = static_cast<double>((p * q) % m) / static_cast<double>(m);
            ph[p * m + q] = 2.0 * detail::pi * r;
        }
    return ph;
}

std::vector<double> p4_phases(std::size_t n, const char* stage)
{
    if (n < 2)
        detail::throw_invalid(
            stage, "waveform", "a P4 code p4:N with N >= 2", "p4:" + std::to_string(n));
    check_waveform_length(static_cast<double>(n), stage, "waveform");
    std::vector<double> ph(n);
    for (std::size_t k = 0; k < n; ++k) {
        // pi k^2 / N - pi k = pi (k^2 mod 2N) / N - pi k, reduced exactly in integers.
        const double a = static_cast<double>((k * k) % (2 * n)) / static_cast<double>(n);
        const double b = static_cast<double>(k % 2);
        ph[k] = detail::pi * (a - b);
    }
    return ph;
}

std::size_t samples_per_chip(std::size_t nchips,
                             double pulse_width_s,
                             double sample_rate_hz,
                             const char* stage)
{
    if (!(sample_rate_hz > 0.0 && std::isfinite(sample_rate_hz)))
        detail::throw_invalid(stage, "samp_rate", "> 0 and finite (Hz)", sample_rate_hz);
    const double per_chip = pulse_width_s * sample_rate_hz / static_cast<double>(nchips);
    if (!(per_chip >= 0.5) || !std::isfinite(per_chip))
        detail::throw_invalid(stage,
                              "pulse_width",
                              ">= " + std::to_string(nchips) + " chips / samp_rate = " +
                                  std::to_string(0.5 * nchips / sample_rate_hz) +
                                  " s (at least one sample per chip)",
                              pulse_width_s);
    check_waveform_length(
        std::round(per_chip) * static_cast<double>(nchips), stage, "pulse_width");
    return static_cast<std::size_t>(std::llround(per_chip));
}

std::vector<cfloat> phase_coded_pulse(const std::vector<cfloat>& chips,
                                      double pulse_width_s,
                                      double sample_rate_hz,
                                      const char* stage)
{
    const std::size_t spc =
        samples_per_chip(chips.size(), pulse_width_s, sample_rate_hz, stage);
    std::vector<cfloat> s;
    s.reserve(chips.size() * spc);
    for (const cfloat& c : chips)
        s.insert(s.end(), spc, c);
    return s;
}

std::vector<cfloat> make_waveform(const std::string& code,
                                  double bandwidth_hz,
                                  double pulse_width_s,
                                  double sample_rate_hz,
                                  bool up,
                                  const char* stage,
                                  const std::string& other_codes)
{
    if (code == "lfm") {
        try {
            return lfm_chirp(bandwidth_hz, pulse_width_s, sample_rate_hz, up);
        } catch (const std::invalid_argument& e) {
            // Name the block as well as the chirp parameter.
            throw std::invalid_argument(std::string("gpuradar::") + stage +
                                        " (lfm): " + e.what());
        }
    }
    std::vector<cfloat> chips;
    const auto add_phases = [&chips](const std::vector<double>& phases) {
        for (const double ph : phases)
            chips.emplace_back(static_cast<float>(std::cos(ph)),
                               static_cast<float>(std::sin(ph)));
    };
    if (const std::size_t n = code_length(code, "barker")) {
        for (const int c : barker_code(n, stage))
            chips.emplace_back(static_cast<float>(c), 0.0f); // exactly +-1
    } else if (const std::size_t n = code_length(code, "frank")) {
        add_phases(frank_phases(n, stage));
    } else if (const std::size_t n = code_length(code, "p4")) {
        add_phases(p4_phases(n, stage));
    } else {
        detail::throw_invalid(stage, "waveform", allowed(other_codes), "'" + code + "'");
    }
    return phase_coded_pulse(chips, pulse_width_s, sample_rate_hz, stage);
}

} // namespace gpuradar::kernels
