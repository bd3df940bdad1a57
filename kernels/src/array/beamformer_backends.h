/* Backend factories of beamformer (internal; see factories.h for the pattern). */
#ifndef INCLUDED_GPURADAR_KERNELS_BEAMFORMER_BACKENDS_H
#define INCLUDED_GPURADAR_KERNELS_BEAMFORMER_BACKENDS_H

#include <gpuradar/kernels/array/beamformer.h>
#include <memory>

namespace gpuradar::kernels::detail {

//! The shape and weights every backend gets, checked by beamformer::make().
struct beamformer_shape {
    std::size_t nchannels, nbeams, nsamples;
};

std::unique_ptr<beamformer> make_beamformer_cpu(const beamformer_shape& shape,
                                                const std::vector<cfloat>& weights);
#ifdef GPURADAR_HAVE_CUDA
std::unique_ptr<beamformer> make_beamformer_cuda(const beamformer_shape& shape,
                                                 const std::vector<cfloat>& weights,
                                                 stream_ref s);
#endif

} // namespace gpuradar::kernels::detail

#endif
