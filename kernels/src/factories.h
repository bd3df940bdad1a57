/*
 * Backend factories of each stage (internal). The public make() functions dispatch here;
 * the CUDA ones exist only in builds with CUDA (GPURADAR_HAVE_CUDA).
 */
#ifndef INCLUDED_GPURADAR_KERNELS_FACTORIES_H
#define INCLUDED_GPURADAR_KERNELS_FACTORIES_H

#include <gpuradar/kernels/envelope.h>
#include <gpuradar/kernels/multiply_const.h>
#include <memory>
#include <string>

namespace gpuradar::kernels::detail {

std::unique_ptr<envelope> make_envelope_cpu(envelope::mode m, bool db);
std::unique_ptr<multiply_const> make_multiply_const_cpu();

#ifdef GPURADAR_HAVE_CUDA
std::unique_ptr<envelope> make_envelope_cuda(envelope::mode m, bool db, stream_ref s);
std::unique_ptr<multiply_const> make_multiply_const_cuda(stream_ref s);
//! Probes the driver and device once; empty string when usable, else the reason.
std::string probe_cuda_device();
#endif

//! Throws cuda_error when `b` is cuda and no usable device exists (names the stage).
void require_backend(backend b, const char* stage);

} // namespace gpuradar::kernels::detail

#endif
