/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef INCLUDED_GPURADAR_BEAMFORMER_IMPL_H
#define INCLUDED_GPURADAR_BEAMFORMER_IMPL_H

#include "beam_geometry_tag.h"
#include "gpu_stream_owner.h"
#include <gnuradio/gpuradar/beamformer.h>
#include <gpuradar/kernels/array/beamformer.h>
#include <memory>

namespace gr {
namespace gpuradar {

//! The checked configuration make() hands to the block.
struct beamformer_config {
    unsigned int nchannels, nsamples;
    kernels::beam_directions beams;
    std::vector<kernels::cfloat> weights;
    std::vector<kernels::position_m> elements_wl; //!< element positions, wavelengths
    kernels::sample_format input = kernels::sample_format::fc32; //!< input_type
};

class beamformer_impl : public beamformer, public gpu_stream_owner
{
public:
    beamformer_impl(const beamformer_config& config,
                    kernels::backend backend,
                    int device);

    std::vector<double> beam_angles_deg() const override { return d_beams.azimuths_deg; }
    std::vector<double> beam_elevations_deg() const override
    {
        return d_beams.elevations_deg;
    }
    int device() const override { return cuda_device(); }
    std::string backend() const override { return kernels::to_string(d_backend); }

    int work(int noutput_items,
             gr_vector_const_void_star& input_items,
             gr_vector_void_star& output_items) override;

private:
    //! Tags of the items this call consumes, re-emitted on the same items (cpi updated).
    void forward_tags(int nitems);

    const kernels::beam_directions d_beams;
    const kernels::backend d_backend;
    //! What the cpi tag gains besides the channel count (beam_geometry_tag.h).
    const beam_geometry d_geometry;
    std::unique_ptr<kernels::beamformer> d_kernel;
};

} // namespace gpuradar
} // namespace gr

#endif
