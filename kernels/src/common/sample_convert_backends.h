/* Backend factories of sample_convert (internal; see factories.h for the pattern). */
#ifndef INCLUDED_GPURADAR_KERNELS_SAMPLE_CONVERT_BACKENDS_H
#define INCLUDED_GPURADAR_KERNELS_SAMPLE_CONVERT_BACKENDS_H

#include <gpuradar/kernels/common/sample_convert.h>
#include <memory>

namespace gpuradar::kernels::detail {

std::unique_ptr<sample_convert> make_sample_convert_cpu(sample_format f);
#ifdef GPURADAR_HAVE_CUDA
std::unique_ptr<sample_convert> make_sample_convert_cuda(sample_format f,
                                                         stream_ref stream);
#endif

} // namespace gpuradar::kernels::detail

#endif
