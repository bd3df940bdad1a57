#include "common/factories.h"
#include "pulse_doppler/envelope_backends.h"
#include <gpuradar/kernels/pulse_doppler/envelope.h>
#include <stdexcept>

namespace gpuradar::kernels {

envelope::mode envelope::parse_mode(const std::string& name)
{
    if (name == "square_law")
        return mode::square_law;
    if (name == "linear")
        return mode::linear;
    throw std::invalid_argument(
        "gpuradar::envelope: mode must be one of square_law, linear (got '" + name +
        "')");
}

const char* envelope::to_string(mode m)
{
    return m == mode::square_law ? "square_law" : "linear";
}

std::unique_ptr<envelope> envelope::make(backend b, mode m, bool db, stream_ref stream)
{
    detail::require_backend(b, "envelope");
#ifdef GPURADAR_HAVE_CUDA
    if (b == backend::cuda)
        return detail::make_envelope_cuda(m, db, stream);
#else
    (void)stream;
#endif
    return detail::make_envelope_cpu(m, db);
}

} // namespace gpuradar::kernels
