#include "common/factories.h"
#include "common/sample_convert_backends.h"
#include <stdexcept>

namespace gpuradar::kernels {

sample_format
parse_sample_format(const std::string& name, const char* stage, const char* param)
{
    if (name == "fc32")
        return sample_format::fc32;
    if (name == "sc16")
        return sample_format::sc16;
    if (name == "sc8")
        return sample_format::sc8;
    throw std::invalid_argument(std::string("gpuradar::") + stage + ": " + param +
                                " must be one of fc32, sc16, sc8 (got '" + name + "')");
}

const char* to_string(sample_format f)
{
    switch (f) {
    case sample_format::sc16:
        return "sc16";
    case sample_format::sc8:
        return "sc8";
    case sample_format::fc32:
    default:
        return "fc32";
    }
}

std::size_t sample_bytes(sample_format f)
{
    switch (f) {
    case sample_format::sc16:
        return 2 * sizeof(std::int16_t);
    case sample_format::sc8:
        return 2 * sizeof(std::int8_t);
    case sample_format::fc32:
    default:
        return sizeof(cfloat);
    }
}

float full_scale_code(sample_format f)
{
    switch (f) {
    case sample_format::sc16:
        return sc16_full_scale_code;
    case sample_format::sc8:
        return sc8_full_scale_code;
    case sample_format::fc32:
    default:
        return 1.0f;
    }
}

std::unique_ptr<sample_convert>
sample_convert::make(backend b, sample_format f, stream_ref stream)
{
    detail::require_backend(b, "sample_convert");
#ifdef GPURADAR_HAVE_CUDA
    if (b == backend::cuda)
        return detail::make_sample_convert_cuda(f, stream);
#else
    (void)stream;
#endif
    return detail::make_sample_convert_cpu(f);
}

} // namespace gpuradar::kernels
