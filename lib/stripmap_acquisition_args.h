/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The acquisition from the twelve leading arguments of the stripmap blocks' flat make()
 * (stripmap_source, sar_focus): one place maps the positional arguments onto the named
 * fields, so the blocks cannot drift apart in their order. */
#ifndef INCLUDED_GPURADAR_STRIPMAP_ACQUISITION_ARGS_H
#define INCLUDED_GPURADAR_STRIPMAP_ACQUISITION_ARGS_H

#include <gnuradio/gpuradar/stripmap_acquisition.h>

namespace gr {
namespace gpuradar {

//! stripmap_acquisition's fields in their declaration order (its header has the units).
inline stripmap_acquisition acquisition_from_args(double fc,
                                                  double bandwidth,
                                                  double pulse_width,
                                                  bool up_chirp,
                                                  double fs,
                                                  double prf,
                                                  double velocity,
                                                  double altitude,
                                                  double near_range,
                                                  unsigned int nrange,
                                                  double squint,
                                                  double antenna_length)
{
    stripmap_acquisition a;
    a.fc = fc;
    a.bandwidth = bandwidth;
    a.pulse_width = pulse_width;
    a.up_chirp = up_chirp;
    a.fs = fs;
    a.prf = prf;
    a.velocity = velocity;
    a.altitude = altitude;
    a.near_range = near_range;
    a.nrange = nrange;
    a.squint = squint;
    a.antenna_length = antenna_length;
    return a;
}

} // namespace gpuradar
} // namespace gr

#endif
