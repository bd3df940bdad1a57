/*
 * Angle of a detection from adjacent beams (amplitude-comparison monopulse on the
 * strongest beam and its neighbours), with the standard deviation of the estimate.
 * Geometry and beams as in beamformer.h.
 */
#ifndef INCLUDED_GPURADAR_KERNELS_MONOPULSE_H
#define INCLUDED_GPURADAR_KERNELS_MONOPULSE_H

#include <gpuradar/kernels/beamformer.h>
#include <array>
#include <complex>
#include <cstddef>
#include <utility>
#include <vector>

namespace gpuradar::kernels {

struct angle_estimate {
    double azimuth_deg = 0; //!< estimated azimuth (beamformer.h's convention)
    double std_deg = 0;     //!< its standard deviation (Cramer-Rao bound of the beam
                            //!< beam group at the estimate, with the estimated amplitude)
    std::size_t beam = 0;   //!< first beam of the group used (beam .. beam + 2)
};

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
              const std::vector<double>& beam_angles_deg);

    /*!
     * beams: the nbeams complex beam outputs at the detection's cell; noise_power: the
     * per-channel noise power sigma^2 (> 0).
     */
    angle_estimate estimate(const cfloat* beams, double noise_power) const;

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
                                        double beam_noise_power) const;

    std::size_t nbeams() const { return d_angles_deg.size(); }

private:
    using cvec = std::vector<std::complex<double>>;
    //! The group's patterns g at theta, and their derivative when d != nullptr.
    void group_pattern(std::size_t b, double theta_rad, cvec& g, cvec* d) const;
    //! |g^H C^-1 y|^2 / (g^H C^-1 g) for the group starting at b.
    double likelihood(std::size_t b, double theta_rad, const cvec& y) const;
    //! The first beam of the group around the largest of nbeams values |v|^2.
    template <class T>
    std::size_t group_of(const T* beams) const;
    //! The group's amplitude patterns h = |g|, their derivative (when dh != nullptr) and
    //! the inverse of the amplitudes' noise covariance Ca (over sigma^2 / 2) at theta.
    void amplitude_model(
        std::size_t b, double theta_rad, cvec& h, cvec* dh, cvec& cainv) const;
    //! Minus the weighted residual of the amplitudes m for the group starting at b.
    double amplitude_fit(std::size_t b, double theta_rad, const cvec& m) const;
    //! The searched interval of the group starting at b (radians).
    std::pair<double, double> search_interval(std::size_t b) const;

    std::vector<position_m> d_elements;
    double d_wavenumber;
    std::vector<std::complex<double>> d_weights;
    std::vector<double> d_angles_deg;
    std::size_t d_group = 0; //!< beams per group
    //! Per group start b: W_group W_group^H (row-major) and its inverse.
    std::vector<std::vector<std::complex<double>>> d_c, d_cinv;
    //! Per beam: its noise power over the channels' (sum of |W[b][c]|^2).
    std::vector<double> d_noise_gain;
};

} // namespace gpuradar::kernels

#endif
