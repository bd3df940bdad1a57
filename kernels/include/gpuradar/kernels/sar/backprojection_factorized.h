/* SAR fast factorized backprojection (FFBP): the backprojection stage in O(N^2 log P). */
#ifndef INCLUDED_GPURADAR_KERNELS_BACKPROJECTION_FACTORIZED_H
#define INCLUDED_GPURADAR_KERNELS_BACKPROJECTION_FACTORIZED_H

#include <gpuradar/kernels/sar/backprojection.h>
#include <memory>
#include <string>
#include <vector>

namespace gpuradar::kernels {

//! How `backprojection` forms its image: direct (every pulse to every pixel) or FFBP.
enum class bp_algorithm { direct, factorized };
//! Parses "direct" | "factorized"; throws std::invalid_argument naming `algorithm`.
bp_algorithm parse_bp_algorithm(const std::string& name);
const char* to_string(bp_algorithm a);

/*!
 * \brief Accuracy knobs of fast factorized backprojection (backprojection_factorized).
 *
 * Accuracy against direct backprojection of the same data (SER = 10 log10(sum |direct|^2
 * / sum |ffbp - direct|^2); X band, 450 MHz in 0.2 m bins, 512 pulses, side-looking at
 * 1.4 km; point targets and a random-reflectivity scene; test_backprojection.cc
 * test_030/031):
 *  - accurate (the defaults: factor 4, order_range 8, order_angle 8, oversample_range
 *    3, oversample_angle 2): SER 32.1-33.4 dB; IRW within 2 %, PSLR within 0.2 dB
 *    (a 32 dB error is ~0.3 dB at a -13 dB sidelobe), peak within 0.01 pixel of
 *    direct's;
 *  - fast (order_range 6, order_angle 6, oversample_range 2, oversample_angle 2):
 *    SER ~ 25 dB, ~2.7x fewer operations.
 * On critically sampled pulses (bandwidth = the bins' rate, gpuradar_bench's BP-A/B/C:
 * 1 GHz in 0.15 m bins) the same settings give less: accurate 25.7-26.3 dB,
 * oversample_range 4 29.7-30.5 dB, fast 21-22 dB (docs/PERFORMANCE.md).
 * The SER is bounded by the range dimension: direct backprojection interpolates the
 * pulses linearly, whose spectral images (the stronger, the closer the band is to the
 * bins' rate) FFBP's band-limited polar images reproduce only with range oversampling
 * (oversample_range 4: ~36 dB on the test scenes). Each stage interpolates once more,
 * and with few taps the kernel's passband droop compounds over the stages (order 4 at
 * oversampling 2 falls below 10 dB): raise the oversampling with a low order.
 */
struct ffbp_options {
    /*!
     * Merge stages, 0 (auto) or 1 to floor(log_factor(npulses)). With S stages the
     * aperture of P usable pulses is cut into factor^S subapertures of L0 =
     * ceil(P / factor^S) pulses, each backprojected directly onto its own polar grid
     * (cost L0 per polar sample), then merged `factor` at a time S times; the last
     * polar image is interpolated onto the Cartesian grid. Auto: the most stages that
     * leave L0 >= auto_initial_pulses (0 stages for short apertures).
     */
    int stages = 0;
    //! Subapertures merged per stage: 2 or 4 (4: half the stages, so half the
    //! interpolations, for the same accuracy per stage).
    int factor = 4;
    /*!
     * Taps in range of the Kaiser-windowed sinc interpolator (`kaiser_sinc`, weights
     * normalised to sum 1): even, min_order to max_order.
     */
    int order_range = 8;
    //! Taps in angle of the same interpolator: even, min_order to max_order.
    int order_angle = 8;
    /*!
     * Range sampling of the polar images: the pulses' bin spacing / oversample_range;
     * min_oversample to max_oversample. The Kaiser window's guard band is the margin.
     */
    double oversample_range = 3.0;
    //! Angular sampling of the polar images over their Nyquist spacing c / (2 f_max L)
    //! (L: the subaperture's length, f_max: the highest frequency in the band);
    //! min_oversample to max_oversample.
    double oversample_angle = 2.0;

    static constexpr int min_order = 2;
    static constexpr int max_order = 16;
    static constexpr double min_oversample = 1.25;
    static constexpr double max_oversample = 8.0;
    /*!
     * Auto stages keep at least this many pulses per initial subaperture. A stage-0
     * sample costs L0 pulse terms, a merge factor x order_range x order_angle taps (256
     * at the defaults): one stage fewer costs (factor - 1) L0 more terms at stage 0 and
     * saves a merge, which pays while 3 L0 < 256 at factor 4, and one interpolation
     * fewer is also more accurate.
     */
    static constexpr int auto_initial_pulses = 32;
};

/*!
 * \brief Fast factorized backprojection (Ulander, Hellsten, Stenstroem, IEEE TAES 39(3),
 * 2003), the same image as backprojection (direct) to the accuracy of ffbp_options.
 *
 * Per run() call, over its usable pulses (skipped ones as in direct backprojection):
 *  1. subapertures of L0 consecutive pulses; each is backprojected directly onto its
 *     polar grid: slant range r and azimuth phi (around the vertical through the
 *     subaperture centre C, the mean antenna position) of points on the image plane,
 *     the value at (r, phi) (point P) being sum_i p_i(R_i) exp(j 2 pi (kt_i R_i - kt r))
 *     with R_i = |P - A_i|, p_i linearly interpolated as in direct backprojection, kt_i
 *     = 2 f0_i / c, kt that of the first usable pulse (the demodulation that keeps the
 *     polar images band-limited);
 *  2. S - 1 times: `factor` neighbouring polar images merged into one on the parent's
 *     grid, s(r, phi) = sum_children s_c(r_c, phi_c) exp(j 2 pi kt (r_c - r)), (r_c,
 *     phi_c) the child's coordinates of the parent sample's point, interpolated by the
 *     kaiser_sinc kernel of order_range x order_angle taps (weights normalised to sum
 *     1);
 *  3. the last merge made straight onto the pixels: image(P) += sum_children s_c(r_c,
 *     phi_c) exp(j 2 pi kt r_c) (with S = 0, the one polar image interpolated).
 * Cost: every polar level holds about oversample_range x oversample_angle x (the
 * image's angular extent seen from the track x its slant-range extent, at the full
 * aperture's Nyquist spacing) samples: 11-16 per pixel per level on the BP-x workloads
 * at the defaults (the angle step is one for all ranges, so near range is sampled
 * finer than the pixels). Stage 0 costs L0 pulse terms per sample, each merge factor x
 * order_range x order_angle taps per sample, against P per pixel for direct
 * backprojection: FFBP pays off only where P exceeds (samples per pixel) x (L0 +
 * (S - 1) factor order^2); gpuradar_bench's backprojection/BP-x/.../factorized entries
 * measure the curve against direct.
 * Polar grids: range spacing min(dr) / oversample_range; angle spacing c / (2 f_max L
 * oversample_angle), f_max = |f0| + c / (4 dr) the band's highest frequency, L = 2
 * max |A_i - C|; the last level's cover the image rectangle, every other the samples of
 * its parent, each with order/2 + 2 samples of margin; a subaperture whose nadir lies in
 * the region its grid covers gets the full circle.
 * Geometry is in double except the azimuth inside an interpolation (float, relative to
 * the grid's centre direction, ~1e-7 rad); polar images are complex float.
 *
 * Supported: flat images and volumes (each slice a flat image), any 3-D track, f0 and dr
 * varying per pulse (accuracy holds while f0 varies by less than the guard band). Not
 * accurate: pixels near a subaperture's nadir (a track over the image), where slant
 * range does not resolve the ground; use direct there. Not
 * supported (std::invalid_argument naming the parameter): a height map (`height`, the
 * polar images live on one plane) and several CUDA devices (`devices`). `precision` is
 * direct backprojection's; FFBP's accuracy is set by ffbp_options.
 * Bad data as direct: non-finite geometry skips the pulse (skipped_pulses()), a
 * non-finite sample is used as 0 (nonfinite_samples()), a finite dr <= 0 throws.
 * run() throws std::invalid_argument naming `stages` when factor^stages exceeds the
 * usable pulses of the call, before the image is touched.
 */
class backprojection_factorized
{
public:
    //! Checks the options: std::invalid_argument naming the field and its range.
    static void validate(const ffbp_options& o);
    //! Stages for P usable pulses: o.stages, or the auto choice when it is 0; throws
    //! naming `stages` when factor^stages > P.
    static int stages_for(const ffbp_options& o, std::size_t npulses);

    /*!
     * The samples of each polar level run() would form for `geometry` on the grid's
     * first slice, level 0 up (the last merge is made onto the pixels, so there are
     * max(stages, 1) levels): the work and the bytes of a run, for sizing and for byte
     * floors. Throws as run() does (options, geometry, `stages`); empty when no pulse is
     * usable.
     */
    static std::vector<long long> level_samples(const image_grid& grid,
                                                const double* geometry,
                                                std::size_t npulses,
                                                const ffbp_options& o);

    /*!
     * As backprojection::make (grid, nbins, stream, devices), with `o` checked first.
     * The returned object's run() / run_host_pulses() form the image by FFBP.
     */
    static std::unique_ptr<backprojection> make(backend b,
                                                const image_grid& grid,
                                                std::size_t nbins,
                                                const ffbp_options& o,
                                                stream_ref stream = stream_ref(),
                                                const std::vector<int>& devices = {});
};

} // namespace gpuradar::kernels

#endif
