/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_GPURADAR_SAR_AUTOFOCUS_H
#define INCLUDED_GPURADAR_SAR_AUTOFOCUS_H

#include <gnuradio/gpuradar/api.h>
#include <gnuradio/sync_block.h>
#include <string>

namespace gr {
namespace gpuradar {

/*!
 * \brief Autofocus of complex SAR images: phase-gradient (PGA) or minimum-entropy.
 * \ingroup gpuradar
 *
 * Streams: in and out gr_complex[nx], ny items per image (row iy, column ix), as
 * backprojection and sar_focus give them; each image is autofocused whole
 * (kernels::autofocus: the image's azimuth axis taken as the DFT of the pulses, a phase
 * error common to every range line estimated, from the brightest point of each line
 * (pga) or as the phases that minimise the image's entropy (entropy), and removed). An
 * image that does not converge (no point-like content) goes out unchanged. Tags pass
 * through.
 *
 * Message output `autofocus`, one per image: a dict with image (index), iterations,
 * converged, correction_rms_rad (the last iteration's), nonfinite_samples, reason (""
 * when converged) and phase_error_rad (f64vector, per azimuth sample, linear trend
 * removed).
 */
class GPURADAR_API sar_autofocus : virtual public gr::sync_block
{
public:
    typedef std::shared_ptr<sar_autofocus> sptr;

    /*!
     * \param nx             image columns (>= 1)
     * \param ny             image rows (>= 1); nx * ny <= 2^30
     * \param azimuth_axis   "x": azimuth along the columns (x), naz = nx >= 8; "y":
     *                       azimuth along the rows (sar_focus's stripmap images: y along
     *                       track), naz = ny >= 8
     * \param method         "pga" or "entropy"
     * \param max_iterations 1 to 1000
     * \param tolerance_rad  pga: > 0, converged when an iteration's correction RMS is
     *                       below (entropy: converged when a step lowers the entropy by
     *                       less than 1e-6 of itself, or none lowers it)
     * \param min_window     3 to naz: narrowest window (azimuth samples)
     * \param backend        "auto", "cuda" or "cpu"
     * \param device         CUDA device (0 to number of GPUs - 1)
     * Bad values: std::invalid_argument naming the parameter, before anything is
     * allocated.
     */
    static sptr make(unsigned int nx,
                     unsigned int ny,
                     const std::string& azimuth_axis = "x",
                     const std::string& method = "pga",
                     int max_iterations = 50,
                     double tolerance_rad = 0.01,
                     unsigned int min_window = 8,
                     const std::string& backend = "auto",
                     int device = 0);

    //! Images autofocused and converged / not converged so far.
    virtual unsigned long long converged_images() const = 0;
    virtual unsigned long long unconverged_images() const = 0;
    //! The backend actually running: "cuda" or "cpu".
    virtual std::string backend() const = 0;
    //! The `device` parameter.
    virtual int device() const = 0;
};

} // namespace gpuradar
} // namespace gr

#endif
