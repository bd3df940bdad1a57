/* corner_turn: parameter checks and dispatch. */
#include "common/factories.h"
#include "common/param_check.h"
#include "pulse_doppler/corner_turn_backends.h"
#include <gpuradar/kernels/common/buffer_size.h>

namespace gpuradar::kernels {

void corner_turn::validate(std::size_t npulses, std::size_t nrange, std::size_t channels)
{
    auto check = [](const char* param, std::size_t v) {
        if (v < 1)
            detail::throw_invalid("corner_turn", param, ">= 1", v);
    };
    check("npulses", npulses);
    check("nrange", nrange);
    check("channels", channels);
    check_buffer_size(
        "corner_turn",
        { { "npulses", npulses }, { "nrange", nrange }, { "channels", channels } },
        sizeof(cfloat),
        "the CPI");
}

std::unique_ptr<corner_turn> corner_turn::make(backend b,
                                               std::size_t npulses,
                                               std::size_t nrange,
                                               std::size_t channels,
                                               stream_ref stream)
{
    validate(npulses, nrange, channels);
    detail::require_backend(b, "corner_turn");
#ifdef GPURADAR_HAVE_CUDA
    if (b == backend::cuda)
        return detail::make_corner_turn_cuda(npulses, nrange, channels, stream);
#else
    (void)stream;
#endif
    return detail::make_corner_turn_cpu(npulses, nrange, channels);
}

} // namespace gpuradar::kernels
