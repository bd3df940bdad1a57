/* Backend selection for the radar DSP core (no GNU Radio here). */
#ifndef INCLUDED_GPURADAR_KERNELS_BACKEND_H
#define INCLUDED_GPURADAR_KERNELS_BACKEND_H

#include <complex>
#include <string>

namespace gpuradar::kernels {

using cfloat = std::complex<float>;

//! Where a stage runs. Every stage has both, with the same behaviour.
enum class backend { cpu, cuda };

const char* to_string(backend b);

/*!
 * True when a usable CUDA device exists: the build has CUDA, the driver loads, at least
 * one device is visible and a context can be made on it. Probed once per process.
 */
bool cuda_available();

//! Why cuda_available() is false (empty when it is true).
std::string cuda_unavailable_reason();

} // namespace gpuradar::kernels

#endif
