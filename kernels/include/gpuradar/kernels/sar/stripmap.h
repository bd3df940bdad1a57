/* Stripmap SAR: the acquisition parameters shared by the raw-data simulator and the
 * frequency-domain focusing (chirp scaling), and the simulator itself. */
#ifndef INCLUDED_GPURADAR_KERNELS_STRIPMAP_H
#define INCLUDED_GPURADAR_KERNELS_STRIPMAP_H

#include <gpuradar/kernels/common/backend.h>
#include <array>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpuradar::kernels {

/*!
 * \brief A straight, level, side-looking stripmap acquisition.
 *
 * Geometry (local Cartesian metres, as everywhere in the module: x east, y north, z up):
 * the antenna phase centre of pulse i is at (0, y_i, altitude) with
 * y_i = first_pulse_y + i v / PRF (flight along +y, north), looking to +x (right side).
 * Range sample k of every pulse is at slant range near_range + k c / (2 fs) (a fixed
 * range window). Echoes are uncompressed: each is the transmitted LFM pulse (chirp rate
 * K = +-B/T, centred at its delay) times exp(-j 4 pi fc R / c), with R the one-way
 * slant range at the pulse's transmit time (stop-and-hop).
 *
 * The beam points `squint` radians forward of broadside (positive: towards +y); its
 * azimuth one-way amplitude pattern is sinc(L sin(theta - squint) / lambda) (uniform
 * aperture of length L), so the one-way half-power (3 dB) beamwidth, where the two-way
 * amplitude falls to 1/2, is about 0.886 lambda / L: the beamwidth behind
 * doppler_bandwidth_hz() and aperture_pulses(). The antenna gain uses
 * sin(theta) = (y_target - y_i) / R.
 */
struct stripmap_params {
    double fc_hz = 9.6e9;          //!< carrier (Hz), > 0
    double bandwidth_hz = 100e6;   //!< chirp bandwidth (Hz), 0 < B <= fs_hz
    double pulse_width_s = 2e-6;   //!< chirp length (s), > 0, shorter than the window
    bool up_chirp = true;          //!< K > 0 when true
    double fs_hz = 120e6;          //!< complex range sampling rate (Hz), > 0
    double prf_hz = 1000.0;        //!< pulse repetition frequency (Hz), > 0
    double velocity_mps = 150.0;   //!< platform speed along +y (m/s), > 0
    double altitude_m = 3000.0;    //!< platform height (m), >= 0
    double near_range_m = 8000.0;  //!< slant range of range sample 0 (m), > altitude
    std::size_t nrange = 2048;     //!< range samples per pulse, >= 2
    double squint_rad = 0.0;       //!< beam squint forward of broadside (rad)
    double antenna_length_m = 1.0; //!< azimuth antenna length L (m), > 0

    //! Throws std::invalid_argument "gpuradar::<stage>: <param> must be ..." for a
    //! non-positive or non-finite rate, speed, bandwidth or length, a pulse longer than
    //! the range window, |squint| beyond `max_squint_rad`, or a PRF below the beam's
    //! Doppler bandwidth (azimuth aliasing).
    void validate(const char* stage = "stripmap") const;

    double wavelength_m() const;         //!< c / fc
    double chirp_rate_hz_per_s() const;  //!< K = +-B / T
    double range_spacing_m() const;      //!< c / (2 fs)
    double doppler_centroid_hz() const;  //!< 2 v sin(squint) / lambda
    double doppler_bandwidth_hz() const; //!< two-way 3 dB beam: 0.886 * 2 v / L
    //! Pulses a point target at closest-approach slant range `range_m` stays in the 3 dB
    //! beam: range_m (tan(squint + beam/2) - tan(squint - beam/2)) PRF / v.
    double aperture_pulses(double range_m) const;
    //! Slant range of the centre of the range window.
    double centre_range_m() const;
};

//! The largest |squint| the module supports (rad): 0.35 (about 20 degrees).
constexpr double max_squint_rad = 0.35;

namespace stripmap_sim {

//! A point scatterer on the ground (x east = across track, y north = along track).
struct point_target {
    double x_m = 0.0;
    double y_m = 0.0;
    double z_m = 0.0;
    std::complex<double> amplitude{ 1.0, 0.0 };
};

/*!
 * \brief A distributed scene: a ground reflectivity image on a regular grid.
 *
 * Cell (i, j), i < nx across track, j < ny along track, is one point scatterer at
 * (x0_m + i spacing_m, y0_m + j spacing_m, 0) of complex amplitude
 * reflectivity[j nx + i] (row-major, rows along y). Empty reflectivity: no scene. A
 * dense grid (spacing below the resolution) with random phases gives speckle whose mean
 * intensity follows |reflectivity|^2.
 */
struct reflectivity_grid {
    std::vector<std::complex<float>> reflectivity; //!< ny x nx, finite
    std::size_t nx = 0;                            //!< cells per row (> 0 when non-empty)
    double x0_m = 0.0;                             //!< x of cell (0, 0) (m)
    double y0_m = 0.0;                             //!< y of cell (0, 0) (m)
    double spacing_m = 1.0;                        //!< cell spacing on both axes (m), > 0

    bool empty() const { return reflectivity.empty(); }
    std::size_t ny() const { return nx ? reflectivity.size() / nx : 0; }
    //! Throws std::invalid_argument "gpuradar::<stage>: scene_<field> ..." for nx not
    //! dividing the cell count, a non-positive or non-finite spacing, a non-finite
    //! origin or reflectivity.
    void validate(const char* stage) const;
};

/*!
 * Pulses [first_pulse, first_pulse + npulses) of the raw (uncompressed) echoes of
 * `targets`, npulses x p.nrange, pulse-major, with the antenna at y_i = first_pulse_y +
 * i v / PRF. Complex white Gaussian noise of standard deviation `noise_sigma` per
 * component is added; the noise of pulse i depends only on (seed, i), so a stream made in
 * chunks equals one made at once (pulse i is always the antenna at first_pulse_y + i v /
 * PRF, whatever first_pulse). Phases in double with exact reduction. Throws
 * std::invalid_argument for invalid parameters, a negative noise_sigma or a non-finite
 * target position.
 */
std::vector<cfloat> simulate(const stripmap_params& p,
                             const std::vector<point_target>& targets,
                             std::size_t first_pulse,
                             std::size_t npulses,
                             double first_pulse_y = 0.0,
                             double noise_sigma = 0.0,
                             std::uint32_t seed = 1);

//! Closest-approach slant range and the along-track position (y) of closest approach.
struct zero_doppler {
    double range_m;
    double y_m;
};
zero_doppler closest_approach(const stripmap_params& p, const point_target& t);

//! A sinusoidal track error amplitude_m sin(2 pi t / period_s + phase_rad) (m).
struct track_sinusoid {
    double amplitude_m = 0.0; //!< >= 0
    double period_s = 1.0;    //!< > 0 (a period of P metres along track: P / velocity)
    double phase_rad = 0.0;
};

//! Cross-track or vertical error: sinusoids, a random walk and white noise.
struct axis_errors {
    std::vector<track_sinusoid> sinusoids;
    double random_walk = 0.0; //!< m / sqrt(s), >= 0
    double white_m = 0.0;     //!< m RMS, >= 0
};

/*!
 * \brief Navigation errors of a stripmap pass, the model of gnuradio.gpuradar.sar_sim's
 * MotionErrors: e(t) = measured minus true antenna position.
 *
 * Pulse i is at time t_i = i / PRF (from pulse 0 of the stream). Components, in metres,
 * on the track's axes (flight along +y):
 *  - along track (+y): velocity_error_mps x t_i;
 *  - cross track (horizontal, to the left of travel: -x, away from the scene) and
 *    vertical (+z): each the sum of its sinusoids A sin(2 pi t_i / T + phi), a random
 *    walk (sigma m/sqrt(s): the sum of independent N(0, sigma^2 / PRF) steps, 0 at pulse
 *    0) and white noise (m RMS, independent per pulse), drawn from `seed` so that pulse
 *    i's draws depend only on (seed, i).
 * The measured track is the nominal straight pass (what sar_focus assumes); the echoes
 * come from the true track, measured - e(t_i).
 */
struct motion_errors {
    double velocity_error_mps = 0.0; //!< along track (m/s), finite
    axis_errors cross_track, vertical;
    std::uint32_t seed = 1;
    //! Any error switched on (else the pass is exactly the nominal one).
    bool any() const;
    //! std::invalid_argument "gpuradar::<stage>: <param> must be ..." naming the field
    //! (motion_velocity_error, cross_track_amplitude, vertical_period, ...).
    void validate(const char* stage) const;
};

/*!
 * e(t_i) of successive pulses: the random walks are running sums, kept between calls
 * (asking for an earlier pulse starts them again from pulse 0).
 */
class track_errors
{
public:
    track_errors(const stripmap_params& p, const motion_errors& m);
    //! {along (y), cross (-x), up (z)} of pulse i (m).
    std::array<double, 3> at(std::size_t pulse);
    //! True antenna position {x, y, z} of pulse i for nominal along-track y_nominal.
    std::array<double, 3> true_position(std::size_t pulse, double y_nominal);
    const motion_errors& model() const { return d_m; }

private:
    stripmap_params d_p;
    motion_errors d_m;
    std::size_t d_next = 0;
    double d_walk_cross = 0.0, d_walk_up = 0.0;
};

/*!
 * simulate() above, plus the echoes of `scene`'s cells. Each cell contributes only while
 * it lies inside the antenna's main lobe (between the first nulls of the two-way
 * pattern): the sidelobes, at most -26 dB two-way, are left out so that the cost grows
 * with cells x aperture, not cells x pulses x window. Point targets keep the whole
 * pattern. With navigation errors (`motion`), pulse i's echoes are those of the antenna
 * at `motion`'s true position (nominal (0, y_i, altitude) minus e(t_i)); nullptr or no
 * error: the nominal pass, the same samples as without.
 */
std::vector<cfloat> simulate(const stripmap_params& p,
                             const std::vector<point_target>& targets,
                             const reflectivity_grid& scene,
                             std::size_t first_pulse,
                             std::size_t npulses,
                             double first_pulse_y = 0.0,
                             double noise_sigma = 0.0,
                             std::uint32_t seed = 1,
                             track_errors* motion = nullptr);

} // namespace stripmap_sim
} // namespace gpuradar::kernels

#endif
