/*
 * The host samples the end-to-end benches (e2e/PD, e2e/PD/two_gpu) replay: fc32, or the
 * same quantised to sc16 as an SDR gives them with cpu_format sc16 (issue 31), and the
 * --input option's choice between them.
 */
#ifndef INCLUDED_GPURADAR_BENCH_E2E_INPUT_H
#define INCLUDED_GPURADAR_BENCH_E2E_INPUT_H

#include "bench_registry.h"
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <string>
#include <vector>

namespace gpuradar::bench::pd {

//! Whether the benches run `input_type` under --input ("" runs every type).
inline bool e2e_input_selected(const options& opt, const std::string& input_type)
{
    return opt.input.empty() || opt.input == input_type;
}

//! The host samples a chain replays, fc32 or sc16 (input_type), at `data`: the vector
//! they view must outlive this.
struct replay_data {
    const void* data;
    std::size_t nsamples;
    std::size_t sample_bytes;
    std::string input_type;
    replay_data(const std::vector<std::complex<float>>& x)
        : data(x.data()),
          nsamples(x.size()),
          sample_bytes(sizeof(std::complex<float>)),
          input_type("fc32")
    {
    }
    replay_data(const std::vector<std::int16_t>& parts)
        : data(parts.data()),
          nsamples(parts.size() / 2),
          sample_bytes(2 * sizeof(std::int16_t)),
          input_type("sc16")
    {
    }
};

//! x quantised to interleaved int16 with its largest part at 0.9 of full scale.
inline std::vector<std::int16_t> quantise_sc16(const std::vector<std::complex<float>>& x)
{
    float peak = 0;
    for (const auto& v : x)
        peak = std::max({ peak, std::abs(v.real()), std::abs(v.imag()) });
    const double scale = peak > 0 ? 0.9 * 32767.0 / peak : 1.0;
    std::vector<std::int16_t> q(2 * x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
        q[2 * i] = static_cast<std::int16_t>(std::lround(x[i].real() * scale));
        q[2 * i + 1] = static_cast<std::int16_t>(std::lround(x[i].imag() * scale));
    }
    return q;
}

} // namespace gpuradar::bench::pd

#endif
