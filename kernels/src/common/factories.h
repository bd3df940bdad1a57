/*
 * What every stage's backend factories share (internal).
 *
 * The pattern, one per stage X: X_backends.h declares make_X_cpu(...) and, in builds
 * with CUDA (GPURADAR_HAVE_CUDA), make_X_cuda(..., stream); X.cc's public X::make()
 * checks the parameters, calls require_backend() and dispatches to one of them. cfar_1d
 * and cfar_2d share one engine, whose factories cfar_plan.h declares.
 */
#ifndef INCLUDED_GPURADAR_KERNELS_FACTORIES_H
#define INCLUDED_GPURADAR_KERNELS_FACTORIES_H

#include <gpuradar/kernels/common/backend.h>
#include <string>

namespace gpuradar::kernels::detail {

#ifdef GPURADAR_HAVE_CUDA
//! Probes the driver and device once; empty string when usable, else the reason.
std::string probe_cuda_device();
#endif

/*!
 * Why the CUDA runtime cannot be used, in a user's words, from what the probe saw:
 * `error_name` the runtime's error (cudaGetErrorName), `driver_version` what
 * cudaDriverGetVersion reported (0: no driver at all) and `runtime_version` the runtime
 * built in (1000 * major + 10 * minor), `visible_devices` CUDA_VISIBLE_DEVICES (may be
 * null). The error's name ends the text, for searches and bug reports.
 */
std::string explain_cuda_unavailable(const std::string& error_name,
                                     int driver_version,
                                     int runtime_version,
                                     const char* visible_devices);

//! Throws cuda_error when `b` is cuda and no usable device exists (names the stage).
void require_backend(backend b, const char* stage);

} // namespace gpuradar::kernels::detail

#endif
