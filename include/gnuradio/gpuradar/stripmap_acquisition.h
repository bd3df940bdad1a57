/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef INCLUDED_GPURADAR_STRIPMAP_ACQUISITION_H
#define INCLUDED_GPURADAR_STRIPMAP_ACQUISITION_H

namespace gr {
namespace gpuradar {

/*!
 * \brief The acquisition of a straight, level, side-looking stripmap pass, as
 * stripmap_source and sar_focus take it (kernels/sar/stripmap.h has the geometry): the
 * first twelve arguments of their flat make(), with the same names and units.
 *
 * The antenna flies north (+y) at `velocity`, `altitude` above the ground, looking east;
 * range sample k of every pulse is at slant range near_range + k c / (2 fs).
 *
 * A field whose initialiser is 0 has no default: set it (make() refuses 0 there with
 * std::invalid_argument naming the field). up_chirp, altitude and squint have the
 * defaults shown.
 */
struct stripmap_acquisition {
    double fc = 0.0;             //!< carrier (Hz, > 0)
    double bandwidth = 0.0;      //!< chirp bandwidth (Hz, 0 < B <= fs)
    double pulse_width = 0.0;    //!< chirp length (s, > 0, shorter than the range window)
    bool up_chirp = true;        //!< chirp rate sign: true +B/T, false -B/T
    double fs = 0.0;             //!< complex range sampling rate (Hz, > 0)
    double prf = 0.0;            //!< pulse repetition frequency (Hz, above the Doppler
                                 //!< bandwidth 0.886 * 2 velocity / antenna_length)
    double velocity = 0.0;       //!< platform speed along +y (m/s, > 0)
    double altitude = 0.0;       //!< platform height (m, >= 0)
    double near_range = 0.0;     //!< slant range of range sample 0 (m, > altitude)
    unsigned int nrange = 0;     //!< range samples per pulse (>= 2)
    double squint = 0.0;         //!< beam squint forward of broadside (rad, |.| <= 0.35)
    double antenna_length = 0.0; //!< azimuth antenna length (m, > 0)
};

} // namespace gpuradar
} // namespace gr

#endif
