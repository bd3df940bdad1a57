/*
 * Angle of a detection from adjacent beams (amplitude-comparison monopulse on the
 * strongest beam and its neighbours), with the standard deviation of the estimate.
 * Geometry and beams as in beamformer.h.
 */
#ifndef INCLUDED_GPURADAR_KERNELS_MONOPULSE_H
#define INCLUDED_GPURADAR_KERNELS_MONOPULSE_H

#include <gpuradar/kernels/array/beamformer.h>
#include <array>
#include <complex>
#include <cstddef>
#include <utility>
#include <vector>

namespace gpuradar::kernels {

struct angle_estimate {
    double angle_deg = 0; //!< estimated angle along the scan axis (array_geometry.h's
                          //!< azimuth or elevation)
    double std_deg = 0;   //!< its standard deviation (Cramer-Rao bound of the beam
                          //!< group at the estimate, with the estimated amplitude)
    std::size_t beam = 0; //!< first beam of the group used (beam .. beam + 2)
};

/*!
 * The angle a monopulse estimates across its beams: the beams' azimuths at a fixed
 * elevation (a row of an azimuth x elevation grid, or an azimuth fan), or their
 * elevations at a fixed azimuth (a column of the grid).
 */
enum class scan_axis { azimuth, elevation };

/*!
 * \brief Amplitude-comparison monopulse on the beamformer's outputs.
 *
 * A target at azimuth theta with complex amplitude A gives beam b the value
 * y_b = A g_b(theta) + n_b, g_b(theta) = sum_c W[b][c] a_c(theta) (the beam's known
 * voltage pattern), and the beams' noise has covariance sigma^2 W W^H for white channel
 * noise of power sigma^2. On the group of three adjacent beams centred on the strongest
 * (shifted inwards at the fan's edges; two beams when there are only two), the estimate
 * maximises the likelihood of the group's outputs y over theta and A:
 *   theta^ = argmax |g^H C^-1 y|^2 / (g^H C^-1 g),   C = W_group W_group^H,
 * searched between the group's outer beams widened by half a beam spacing (a grid, then
 * a golden-section refinement). This is amplitude comparison between adjacent beams
 * solved with the exact beam patterns instead of a linearised monopulse slope, so it
 * holds across the group and for any taper. Two beams alone would lose up to half the
 * array's angle information for a target on a beam's axis; three keep the RMS error
 * within about 1.1x (uniform taper) to 1.4x (Taylor) of the whole array's bound.
 *
 * std_deg = sqrt(1 / J(theta^)) with J = 2 |A^|^2 / sigma^2 (g'^H C^-1 g' -
 * |g^H C^-1 g'|^2 / (g^H C^-1 g)), the Fisher information of theta in the group with
 * the amplitude unknown.
 *
 * A target outside the fan is reported at most half a beam spacing beyond the outer
 * beam (the edge of the search), with the standard deviation there.
 *
 * Beam angles must increase with the beam index (a fan from low to high, or a sorted
 * list); needs at least two beams.
 *
 * Scanning in elevation (scan_axis::elevation), the beam angles are the beams'
 * elevations and theta an elevation; the patterns are taken along the cut at a fixed
 * azimuth. The angle the estimate holds fixed (`other_deg`: the elevation of an azimuth
 * scan, the azimuth of an elevation scan; 0 by default, the azimuth-only geometry) is an
 * argument of the estimates: grid_monopulse passes its current estimate of the other
 * angle, so the cut goes through the target.
 */
class monopulse
{
public:
    /*!
     * weights: row-major nbeams x nchannels (beamformer_weights()), beam_angles_deg their
     * steering angles. Throws std::invalid_argument naming `beam_angles_deg` (fewer than
     * 2, or not strictly increasing) or `weights` (size not nbeams * nchannels).
     */
    monopulse(const std::vector<position_m>& elements,
              double wavelength_m,
              const std::vector<cfloat>& weights,
              const std::vector<double>& beam_angles_deg,
              scan_axis axis = scan_axis::azimuth);

    /*!
     * beams: the nbeams complex beam outputs at the detection's cell; noise_power: the
     * per-channel noise power sigma^2 (> 0); other_deg: the fixed angle of the cut.
     */
    angle_estimate
    estimate(const cfloat* beams, double noise_power, double other_deg = 0.0) const;

    /*!
     * \brief Amplitude-only monopulse: the angle from the beams' powers |y_b|^2 at the
     * detection's cell, as a square-law range-Doppler map holds them (no phases).
     *
     * The same group (the strongest beam and its neighbours) and the same search as
     * estimate(). With the phases gone, the data are the amplitudes
     * m_b = sqrt(max(P_b - sigma^2 C_bb, 0)) (the noise's mean power taken out of each
     * beam's power). At high SNR m_b = |A| h_b(theta) + e_b, h = |g| the group's
     * amplitude patterns, and e_b the noise's component in phase with the beam's signal,
     * Gaussian with covariance (sigma^2 / 2) Ca, Ca_ij = Re(C_ij exp(-j (psi_i -
     * psi_j))), psi = arg g(theta). The estimate minimises the weighted residual
     *   m^T Ca^-1 m - (h^T Ca^-1 m)^2 / (h^T Ca^-1 h)
     * over theta (|A| eliminated), the maximum-likelihood estimate from the amplitudes
     * at high SNR. std_deg = sqrt(1 / J) with J = 2 |A^|^2 / sigma^2 (h'^T Ca^-1 h' -
     * (h^T Ca^-1 h')^2 / (h^T Ca^-1 h)), the Fisher information of these amplitudes.
     *
     * How much the phases are worth: for a centred ULA (or any array symmetric about its
     * centre) with a symmetric taper the beams' patterns g and C are real, so the
     * quadrature components carry nothing about theta and J equals estimate()'s; the
     * powers lose nothing at high SNR. Arrays without that symmetry lose some.
     *
     * powers: the nbeams powers at the cell; noise_beam and beam_noise_power: the noise
     * power of one beam in the same units (a CFAR's interference estimate for the beam
     * it detected in), from which sigma^2 = beam_noise_power / C_bb. Throws
     * std::invalid_argument naming `beam_noise_power` (not finite and > 0) or
     * `noise_beam` (>= nbeams).
     */
    angle_estimate estimate_from_powers(const float* powers,
                                        std::size_t noise_beam,
                                        double beam_noise_power,
                                        double other_deg = 0.0) const;

    std::size_t nbeams() const { return d_angles_deg.size(); }
    //! Beam b's noise power over the channels' (sum of |W[b][c]|^2).
    double noise_gain(std::size_t b) const { return d_noise_gain.at(b); }

private:
    using cvec = std::vector<std::complex<double>>;
    //! The group's patterns g at theta (the cut's other angle fixed at other_rad), and
    //! their derivative along the scan axis when d != nullptr.
    void group_pattern(
        std::size_t b, double theta_rad, double other_rad, cvec& g, cvec* d) const;
    //! |g^H C^-1 y|^2 / (g^H C^-1 g) for the group starting at b.
    double
    likelihood(std::size_t b, double theta_rad, double other_rad, const cvec& y) const;
    //! The first beam of the group around the largest of nbeams values |v|^2.
    template <class T>
    std::size_t group_of(const T* beams) const;
    //! The group's amplitude patterns h = |g|, their derivative (when dh != nullptr) and
    //! the inverse of the amplitudes' noise covariance Ca (over sigma^2 / 2) at theta.
    void amplitude_model(std::size_t b,
                         double theta_rad,
                         double other_rad,
                         cvec& h,
                         cvec* dh,
                         cvec& cainv) const;
    //! Minus the weighted residual of the amplitudes m for the group starting at b.
    double
    amplitude_fit(std::size_t b, double theta_rad, double other_rad, const cvec& m) const;
    //! The searched interval of the group starting at b (radians).
    std::pair<double, double> search_interval(std::size_t b) const;

    std::vector<position_m> d_elements;
    double d_wavenumber;
    scan_axis d_axis;
    std::vector<std::complex<double>> d_weights;
    std::vector<double> d_angles_deg;
    std::size_t d_group = 0; //!< beams per group
    //! Per group start b: W_group W_group^H (row-major) and its inverse.
    std::vector<std::vector<std::complex<double>>> d_c, d_cinv;
    //! Per beam: its noise power over the channels' (sum of |W[b][c]|^2).
    std::vector<double> d_noise_gain;
};

/*!
 * The shape of a beam-major azimuth x elevation grid (beamformer.h's beam_grid_deg()):
 * beam r * naz + c at the c-th azimuth and the r-th elevation.
 */
struct beam_grid_shape {
    std::size_t naz = 0; //!< beams per row (azimuths)
    std::size_t nel = 0; //!< rows (elevations)
};

/*!
 * The grid the beams form: the first row is the leading beams at beam 0's elevation;
 * every row must repeat its azimuths at one elevation per row. A pure azimuth fan (all
 * elevations equal) is one row. Throws std::invalid_argument naming
 * `beam_elevations_deg` (not one per beam, or beams that form no such grid).
 */
beam_grid_shape find_beam_grid(const beam_directions& beams);

//! A direction from a beam grid: each axis estimated when the grid spans it.
struct direction_estimate {
    bool has_azimuth = false, has_elevation = false;
    angle_estimate azimuth;   //!< beam: the grid's index of the group's first beam
    angle_estimate elevation; //!< beam: the grid's index of the group's first beam
};

/*!
 * \brief Azimuth and elevation of a detection from an azimuth x elevation grid of beams
 * (amplitude-comparison monopulse along the grid's rows and columns).
 *
 * The strongest beam's row (beams at its elevation) gives the azimuth and its column
 * (beams at its azimuth) the elevation, each by monopulse::estimate_from_powers on the
 * strongest beam and its two neighbours along that axis. Each 1-D estimate holds the
 * other angle fixed: the row's cut is taken at the current elevation estimate and the
 * column's at the current azimuth estimate (starting from the strongest beam's
 * direction), alternating until neither angle moves by 1e-4 degrees (at most 20 passes;
 * each shrinks the error by the axes' coupling, of the order sin(az) sin(el)), so each
 * cut passes through the target and the beams' patterns are exact (not the separable
 * approximation of a row at its beams' elevation). Each std_deg is its axis's bound with
 * the other angle known; for a centred planar array the two are nearly uncoupled (the
 * cross-information of azimuth and elevation scales with sin(theta) sin(phi)).
 *
 * A grid of one row (an azimuth fan) gives the azimuth only, with exactly
 * monopulse::estimate_from_powers' numbers; a grid of one column the elevation only.
 */
class grid_monopulse
{
public:
    /*!
     * weights: nbeams x nchannels row-major (beamformer_weights()); beams: the beams'
     * directions, forming a grid (find_beam_grid()). Throws std::invalid_argument
     * naming `beam_elevations_deg`, `beam_angles_deg` (fewer than 2 beams, or a row or
     * column not strictly increasing) or `weights`.
     */
    grid_monopulse(const std::vector<position_m>& elements,
                   double wavelength_m,
                   const std::vector<cfloat>& weights,
                   const beam_directions& beams);

    //! As monopulse::estimate_from_powers, over the whole grid's nbeams powers.
    direction_estimate estimate_from_powers(const float* powers,
                                            std::size_t noise_beam,
                                            double beam_noise_power) const;

    std::size_t nbeams() const { return d_shape.naz * d_shape.nel; }
    beam_grid_shape shape() const { return d_shape; }

private:
    //! Beam b's noise power over the channels'.
    double noise_gain(std::size_t b) const;

    beam_grid_shape d_shape;
    beam_directions d_beams;
    std::vector<monopulse> d_rows;    //!< per elevation row, when naz >= 2
    std::vector<monopulse> d_columns; //!< per azimuth column, when nel >= 2
};

} // namespace gpuradar::kernels

#endif
