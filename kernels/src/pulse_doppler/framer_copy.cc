#include "common/factories.h"
#include "common/param_check.h"
#include "pulse_doppler/framer_copy_backends.h"
#include <gpuradar/kernels/common/buffer_size.h>
#include <cmath>
#include <stdexcept>
#include <string>

namespace gpuradar::kernels {

void detail::require_whole_cpi(const front_end_correction& c,
                               std::size_t n,
                               const char* who)
{
    const std::size_t cpi = c.config().npulses * c.config().nrange;
    if (n != cpi)
        throw std::invalid_argument(std::string(who) +
                                    ": copy_finite with corrections takes one whole CPI "
                                    "of " +
                                    std::to_string(cpi) + " samples (got " +
                                    std::to_string(n) + ")");
}

float saturation_level(sample_format f)
{
    // 2^(bits-1) - 1 codes over 2^(bits-1): exact in float (1 - 2^-15, 1 - 2^-7).
    switch (f) {
    case sample_format::sc16:
        return (sc16_full_scale_code - 1.0f) / sc16_full_scale_code;
    case sample_format::sc8:
        return (sc8_full_scale_code - 1.0f) / sc8_full_scale_code;
    case sample_format::fc32:
    default:
        return INFINITY;
    }
}

std::unique_ptr<framer_copy> framer_copy::make(backend b,
                                               std::size_t cpi_samples,
                                               stream_ref stream,
                                               sample_format input,
                                               std::unique_ptr<front_end_correction> corr)
{
    detail::require_backend(b, "framer_copy");
    if (cpi_samples == 0)
        detail::throw_invalid("framer_copy", "cpi_samples", ">= 1", cpi_samples);
    check_buffer_size("framer_copy",
                      { { "cpi_samples", cpi_samples } },
                      sizeof(cfloat),
                      "the staging CPI");
    if (corr && corr->where() != b)
        detail::throw_invalid("framer_copy",
                              "corrections",
                              std::string("made for the copy's backend, ") + to_string(b),
                              to_string(corr->where()));
    if (corr && corr->config().npulses * corr->config().nrange != cpi_samples)
        detail::throw_invalid(
            "framer_copy",
            "corrections",
            "made for a CPI of cpi_samples = " + std::to_string(cpi_samples) + " samples",
            corr->config().npulses * corr->config().nrange);
#ifdef GPURADAR_HAVE_CUDA
    if (b == backend::cuda)
        return detail::make_framer_copy_cuda(cpi_samples, stream, input, std::move(corr));
#endif
    (void)stream;
    return detail::make_framer_copy_cpu(cpi_samples, input, std::move(corr));
}

} // namespace gpuradar::kernels
