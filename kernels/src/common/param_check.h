/* Parameter errors and constants shared by the stages' host code (internal). */
#ifndef INCLUDED_GPURADAR_KERNELS_PARAM_CHECK_H
#define INCLUDED_GPURADAR_KERNELS_PARAM_CHECK_H

#include <sstream>
#include <stdexcept>
#include <string>

namespace gpuradar::kernels::detail {

constexpr double pi = 3.14159265358979323846;

//! Throws std::invalid_argument "gpuradar::<stage>: <param> must be <constraint> (got
//! <got>)".
template <typename T>
[[noreturn]] void throw_invalid(const char* stage,
                                const char* param,
                                const std::string& constraint,
                                const T& got)
{
    std::ostringstream s;
    s << "gpuradar::" << stage << ": " << param << " must be " << constraint << " (got "
      << got << ")";
    throw std::invalid_argument(s.str());
}

} // namespace gpuradar::kernels::detail

#endif
