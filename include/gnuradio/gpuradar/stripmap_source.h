/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef INCLUDED_GPURADAR_STRIPMAP_SOURCE_H
#define INCLUDED_GPURADAR_STRIPMAP_SOURCE_H

#include <gnuradio/gpuradar/api.h>
#include <gnuradio/gpuradar/stripmap_acquisition.h>
#include <gnuradio/gr_complex.h>
#include <gnuradio/sync_block.h>
#include <cstdint>
#include <vector>

namespace gr {
namespace gpuradar {

/*!
 * stripmap_source's parameters as named fields, for C++ callers: pass them to
 * stripmap_source::make(const params&). These initialisers are the block's defaults:
 * the flat make() and the Python binding take theirs from here.
 */
struct stripmap_source_params {
    stripmap_acquisition acquisition; //!< the pass
    std::vector<double> target_x;     //!< point targets east (m, finite), one per target
    std::vector<double> target_y;     //!< point targets north (m, finite), one per target
    std::vector<double> target_z;     //!< heights (m): empty (all 0) or one per target
    std::vector<double> target_amplitude; //!< empty (all 1) or one per target
    double noise_sigma = 0.0;     //!< noise standard deviation per component (>= 0)
    double first_pulse_y = 0.0;   //!< along-track position of pulse 0 (m, finite)
    std::uint64_t max_pulses = 0; //!< pulses before the stream ends (0: endless)
    std::uint32_t seed = 1;       //!< noise seed
    //! distributed scene: ny x scene_nx complex amplitudes, rows along y; empty: none
    std::vector<gr_complex> scene_reflectivity;
    unsigned int scene_nx = 0;  //!< scene cells per row (dividing the cell count)
    double scene_x0 = 0.0;      //!< x of scene cell (0, 0) (m)
    double scene_y0 = 0.0;      //!< y of scene cell (0, 0) (m)
    double scene_spacing = 1.0; //!< scene cell spacing on both axes (m, > 0)
    // Navigation errors (all 0: none; kernels::stripmap_sim::motion_errors): the
    // measured track is the nominal pass, the echoes come from the true track.
    double motion_velocity_error = 0.0; //!< along-track velocity error (m/s, finite)
    double cross_track_amplitude = 0.0; //!< cross-track sinusoid amplitude (m, >= 0)
    double cross_track_period = 1.0;    //!< its period (s, > 0)
    double cross_track_phase = 0.0;     //!< its phase (rad, finite)
    double cross_track_walk = 0.0;      //!< cross-track random walk (m/sqrt(s), >= 0)
    double cross_track_noise = 0.0;     //!< cross-track white noise (m RMS, >= 0)
    double vertical_amplitude = 0.0;    //!< vertical sinusoid amplitude (m, >= 0)
    double vertical_period = 1.0;       //!< its period (s, > 0)
    double vertical_phase = 0.0;        //!< its phase (rad, finite)
    double vertical_walk = 0.0;         //!< vertical random walk (m/sqrt(s), >= 0)
    double vertical_noise = 0.0;        //!< vertical white noise (m RMS, >= 0)
    std::uint32_t motion_seed = 1;      //!< seed of the random walks and white noise
};

/*!
 * \brief Simulated raw (uncompressed) stripmap SAR echoes, one pulse per item.
 * \ingroup gpuradar
 *
 * Out: one item = nrange gr_complex, pulse i of a straight, level, side-looking pass
 * (kernels/stripmap.h): antenna at (0, first_pulse_y + i velocity / prf, altitude)
 * flying north, looking east; range sample k at slant range near_range + k c / (2 fs).
 * Each echo is the LFM pulse at its delay times exp(-j 4 pi fc R / c) (stop-and-hop),
 * weighted by the azimuth antenna pattern, plus complex white Gaussian noise of
 * standard deviation noise_sigma per component; the noise of pulse i depends only on
 * (seed, i). Pulses are computed by kernels::stripmap_sim::simulate on the host.
 *
 * Tag `stripmap` on item 0 (docs/CONVENTIONS.md, "stripmap tag"): a dict with the
 * acquisition parameters the focusing (sar_focus) needs, so a recording or a consumer
 * can check them.
 *
 * A distributed scene (optional): scene_reflectivity, scene_nx cells per row, is a
 * ground reflectivity image whose cell (i, j) is a scatterer at (scene_x0 + i
 * scene_spacing, scene_y0 + j scene_spacing, 0) of amplitude scene_reflectivity[j
 * scene_nx + i]; cells are simulated inside the antenna's main lobe only
 * (kernels::reflectivity_grid).
 *
 * max_pulses > 0: the stream ends after that many pulses (work returns WORK_DONE).
 *
 * Navigation errors (optional, off by default; kernels::stripmap_sim::motion_errors, the
 * model of gpuradar-sim's): e(t) = measured - true antenna position at t = i / prf,
 * along track motion_velocity_error t, cross track (horizontal, to the left of travel:
 * -x) and vertical each a sinusoid A sin(2 pi t / T + phase) plus a random walk
 * (m/sqrt(s)) plus white noise (m RMS), the random parts from motion_seed. The measured
 * track is the nominal straight pass above (what sar_focus assumes); the echoes are
 * those of the true track, measured - e(t). With errors on, every pulse carries a tag
 * `true_position`: the true antenna position [x, y, z] (m, f64vector).
 */
class GPURADAR_API stripmap_source : virtual public gr::sync_block
{
public:
    typedef std::shared_ptr<stripmap_source> sptr;
    using params = stripmap_source_params;

    /*!
     * The block from named parameters (stripmap_source_params), checked as the flat
     * make() checks them.
     */
    static sptr make(const params& p);

    /*!
     * The same, one argument per field (the acquisition's first), in the order GRC and
     * Python use; the defaults are stripmap_source_params's.
     * \param fc             carrier (Hz, > 0)
     * \param bandwidth      chirp bandwidth (Hz, 0 < B <= fs)
     * \param pulse_width    chirp length (s, > 0, shorter than the range window)
     * \param up_chirp       chirp rate sign: true +B/T, false -B/T
     * \param fs             complex range sampling rate (Hz, > 0)
     * \param prf            pulse repetition frequency (Hz, above the Doppler bandwidth)
     * \param velocity       platform speed along +y (m/s, > 0)
     * \param altitude       platform height (m, >= 0)
     * \param near_range     slant range of range sample 0 (m, > altitude)
     * \param nrange         range samples per pulse (>= 2)
     * \param squint         beam squint forward of broadside (rad, |squint| <= 0.35)
     * \param antenna_length azimuth antenna length (m, > 0)
     * \param target_x       target positions east (m, finite), one per target
     * \param target_y       target positions north (m, finite), one per target
     * \param target_z       target heights (m, finite): empty (all 0) or one per target
     * \param target_amplitude  target amplitudes (finite): empty (all 1) or one per
     *                       target
     * \param noise_sigma    noise standard deviation per component (>= 0)
     * \param first_pulse_y  along-track position of pulse 0 (m, finite)
     * \param max_pulses     pulses before the stream ends (0: endless)
     * \param seed           noise seed
     * \param scene_reflectivity  distributed scene: ny x scene_nx complex amplitudes,
     *                       rows along y (finite); empty: none
     * \param scene_nx       scene cells per row (> 0 and a divisor of the cell count
     *                       when there is a scene)
     * \param scene_x0       x of scene cell (0, 0) (m, finite)
     * \param scene_y0       y of scene cell (0, 0) (m, finite)
     * \param scene_spacing  scene cell spacing on both axes (m, > 0)
     * \param motion_velocity_error  along-track velocity error (m/s, finite)
     * \param cross_track_amplitude  cross-track sinusoid amplitude (m, >= 0)
     * \param cross_track_period  its period (s, > 0)
     * \param cross_track_phase  its phase (rad, finite)
     * \param cross_track_walk  cross-track random walk (m/sqrt(s), >= 0)
     * \param cross_track_noise  cross-track white noise (m RMS, >= 0)
     * \param vertical_amplitude  vertical sinusoid amplitude (m, >= 0)
     * \param vertical_period  its period (s, > 0)
     * \param vertical_phase  its phase (rad, finite)
     * \param vertical_walk  vertical random walk (m/sqrt(s), >= 0)
     * \param vertical_noise  vertical white noise (m RMS, >= 0)
     * \param motion_seed  seed of the random walks and white noise
     * Throws std::invalid_argument naming the parameter (or the target entry, e.g.
     * "target_y[2]") before anything is allocated.
     */
    static sptr
    make(double fc,
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
         double antenna_length,
         const std::vector<double>& target_x,
         const std::vector<double>& target_y,
         const std::vector<double>& target_z = params{}.target_z,
         const std::vector<double>& target_amplitude = params{}.target_amplitude,
         double noise_sigma = params{}.noise_sigma,
         double first_pulse_y = params{}.first_pulse_y,
         std::uint64_t max_pulses = params{}.max_pulses,
         std::uint32_t seed = params{}.seed,
         const std::vector<gr_complex>& scene_reflectivity = params{}.scene_reflectivity,
         unsigned int scene_nx = params{}.scene_nx,
         double scene_x0 = params{}.scene_x0,
         double scene_y0 = params{}.scene_y0,
         double scene_spacing = params{}.scene_spacing,
         double motion_velocity_error = params{}.motion_velocity_error,
         double cross_track_amplitude = params{}.cross_track_amplitude,
         double cross_track_period = params{}.cross_track_period,
         double cross_track_phase = params{}.cross_track_phase,
         double cross_track_walk = params{}.cross_track_walk,
         double cross_track_noise = params{}.cross_track_noise,
         double vertical_amplitude = params{}.vertical_amplitude,
         double vertical_period = params{}.vertical_period,
         double vertical_phase = params{}.vertical_phase,
         double vertical_walk = params{}.vertical_walk,
         double vertical_noise = params{}.vertical_noise,
         std::uint32_t motion_seed = params{}.motion_seed);

    //! Pulses in the synthetic aperture (3 dB beam) at the far edge of the range window.
    virtual double far_aperture_pulses() const = 0;
    //! Pulses emitted so far.
    virtual std::uint64_t pulses() const = 0;
};

} // namespace gpuradar
} // namespace gr

#endif
