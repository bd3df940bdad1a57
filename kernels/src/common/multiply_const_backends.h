/* Backend factories of multiply_const (internal; see factories.h for the pattern). */
#ifndef INCLUDED_GPURADAR_KERNELS_MULTIPLY_CONST_BACKENDS_H
#define INCLUDED_GPURADAR_KERNELS_MULTIPLY_CONST_BACKENDS_H

#include <gpuradar/kernels/common/multiply_const.h>
#include <memory>

namespace gpuradar::kernels::detail {

std::unique_ptr<multiply_const> make_multiply_const_cpu();
#ifdef GPURADAR_HAVE_CUDA
std::unique_ptr<multiply_const> make_multiply_const_cuda(stream_ref s);
#endif

} // namespace gpuradar::kernels::detail

#endif
