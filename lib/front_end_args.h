/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The receiver front end from the seven arguments of the simulators' flat make()
 * (radar_channel, radar_scene_source) that describe it: one place maps the positional
 * arguments onto the named fields, so the blocks cannot drift apart in their order. */
#ifndef INCLUDED_GPURADAR_FRONT_END_ARGS_H
#define INCLUDED_GPURADAR_FRONT_END_ARGS_H

#include <gpuradar/kernels/scene/front_end.h>

namespace gr {
namespace gpuradar {

//! front_end_config's fields in their declaration order (its header has the units and
//! ranges; the kernels validate them).
inline ::gpuradar::kernels::front_end_config
front_end_from_args(double dc_offset_i,
                    double dc_offset_q,
                    double iq_gain_db,
                    double iq_phase_deg,
                    double phase_noise_linewidth_hz,
                    unsigned int adc_bits,
                    double adc_full_scale)
{
    ::gpuradar::kernels::front_end_config f;
    f.dc_offset_i = dc_offset_i;
    f.dc_offset_q = dc_offset_q;
    f.iq_gain_db = iq_gain_db;
    f.iq_phase_deg = iq_phase_deg;
    f.phase_noise_linewidth_hz = phase_noise_linewidth_hz;
    f.adc_bits = adc_bits;
    f.adc_full_scale = adc_full_scale;
    return f;
}

} // namespace gpuradar
} // namespace gr

#endif
