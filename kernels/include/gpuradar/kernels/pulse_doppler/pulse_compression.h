/* Pulse compression (matched filter) over a batch of pulses, by fast convolution or FIR.
 */
#ifndef INCLUDED_GPURADAR_KERNELS_PULSE_COMPRESSION_H
#define INCLUDED_GPURADAR_KERNELS_PULSE_COMPRESSION_H

#include <gpuradar/kernels/common/backend.h>
#include <gpuradar/kernels/common/cuda_resources.h>
#include <gpuradar/kernels/common/sample_convert.h>
#include <gpuradar/kernels/common/window.h>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace gpuradar::kernels {

/*!
 * \brief Smallest n' >= n whose only prime factors are 2, 3, 5 and 7 (sizes cuFFT and
 * FFTW transform with their fastest radix kernels). n == 0 gives 1.
 */
std::size_t fast_fft_length(std::size_t n);

/*!
 * \brief The FFT length pulse_compression uses by default: the smallest n' >= n of the
 * form 2^a 3^b (n == 0 gives 1). Chosen by measurement (`gpuradar_bench
 * pulse_compression/fft_length`): on every PD shape this size was the fastest or within
 * 2% of it, while the smallest 7-smooth size (fast_fft_length) can be twice as slow and
 * 5-smooth sizes up to 1.3x. The 3-smooth sizes are at most 12.5% apart, so the
 * transform grows little.
 */
std::size_t preferred_fft_length(std::size_t n);

/*!
 * \brief Complex baseband linear-FM chirp, s[n] = exp(j pi k t^2), t = n/fs - T/2,
 * k = +-B/T (up: frequency rises from -B/2 to +B/2), L = round(T fs) samples.
 *
 * \param bandwidth_hz    swept bandwidth B, 0 < B <= sample_rate_hz
 * \param pulse_width_s   pulse duration T > 0, with T * fs >= 1 sample
 * \param sample_rate_hz  fs > 0
 * \param up              true: up-chirp, false: down-chirp
 * Throws std::invalid_argument naming the parameter.
 */
std::vector<cfloat> lfm_chirp(double bandwidth_hz,
                              double pulse_width_s,
                              double sample_rate_hz,
                              bool up = true);

/*!
 * \brief Matched filter over a batch of pulses (rows), each of `nrange` fast-time
 * samples.
 *
 * With the reference r[k] = w[k] s[k] (s the waveform of length L <= nrange, w a real
 * window of length L) and g the gain below, each row x gives
 *
 *     y[d] = g * sum_{k=0}^{L-1} x[d + k] conj(r[k]),   d = 0 .. nrange-1,
 *
 * with x[i] = 0 for i >= nrange. That is the convolution with h[n] = conj(r[L-1-n]) with
 * its L-1 sample delay removed: an echo starting at sample d peaks at output bin d, and a
 * gate of nrange samples gives nrange bins. Echoes that start less than L samples before
 * the end of the gate are only partly inside it; their bins are computed from the part
 * that is there (the tail beyond the gate counts as zeros), so they are weaker, not
 * wrapped around.
 *
 * Gain: g = 1, or with `normalize` g = 1 / sqrt(sum_k |r[k]|^2), which leaves the power
 * of white noise unchanged (and puts a matched echo of amplitude a at a*sqrt(sum|r|^2)).
 *
 * Methods:
 * - fft: fast convolution. FFT length nfft = preferred_fft_length(nrange + L - 1) (no
 *   circular wrap for any output bin; or the caller's fft_length, see make()), the
 *   reference spectrum conj(FFT(r)) * g / nfft made once, then per row pad, forward FFT,
 *   multiply, inverse FFT, keep the first nrange bins (CUDA: a kernel each for pad,
 *   multiply and strip around two cuFFT calls).
 * - fir:  direct time-domain sum (cheaper for short waveforms).
 * - overlap_save (CUDA): fast convolution in segments, one kernel. A thread block takes
 *   M = F - (L-1) outputs of one row: it loads the M + L - 1 samples they need (zeros
 *   past the gate), runs an F-point FFT in shared memory (F =
 *   overlap_save_fft_length(L, nrange), a power of two <= overlap_save_max_fft),
 * multiplies by the reference spectrum at length F, runs the inverse FFT and stores the M
 * valid outputs: the CPI is read once and written once (16 N bytes). For waveforms longer
 *   than overlap_save_max_taps it resolves to fft. The CPU backend resolves it to fft
 *   (same y).
 * - automatic: fir when L <= fir_crossover_taps(backend); on CUDA overlap_save when
 *   L <= overlap_save_auto_max_taps; else fft.
 * Both give the same y within float rounding.
 *
 * Layout: `rows` rows of nrange samples, contiguous (row stride nrange); a CPI of a
 * multi-channel pulse stream is rows = npulses * channels. Every row uses the same
 * reference. The CUDA backend takes device pointers and queues its work on `stream`
 * without waiting; plans, workspaces and the reference spectrum are made in make() and
 * in set_waveform(), never in run().
 */
class pulse_compression
{
public:
    enum class method { automatic, fft, fir, overlap_save };

    /*!
     * Waveform length at or below which `automatic` picks the FIR path.
     * CUDA: against overlap_save (automatic's next choice), `gpuradar_bench
     * pulse_compression/PD_overlap_save_sweep`: the FIR kernel is faster at 32 taps on
     * PD-A, PD-B and PD-C, overlap_save from 64 taps on all three; 33..63 not measured.
     * Against the cuFFT fft method alone the FIR crossover lies between 128 and 192 taps
     * (`pulse_compression/crossover`); the FIR keeps 8 outputs per thread in registers.
     * CPU, the same sweep (`pulse_compression/crossover_cpu`, 16 x 4096, one core): FIR
     * faster up to 24 taps, even at 32.
     */
    static constexpr std::size_t fir_crossover_taps_cuda = 32;
    static constexpr std::size_t fir_crossover_taps_cpu = 24;
    static std::size_t fir_crossover_taps(backend b)
    {
        return b == backend::cuda ? fir_crossover_taps_cuda : fir_crossover_taps_cpu;
    }
    /*!
     * Longest waveform the fir method takes (both backends, so they accept the same
     * inputs): the CUDA FIR kernel keeps the taps and a tile of 1024 outputs plus L
     * inputs in shared memory, 17 bytes per tap + 9 KiB, inside the 48 KiB a block gets
     * without opting in. Longer waveforms belong to the fft method anyway.
     */
    static constexpr std::size_t fir_max_taps = 2048;

    //! Largest segment FFT of the overlap_save method: one complex float transform of
    //! 4096 points is 32 KiB of shared memory, under the 48 KiB a block gets without
    //! opting in (several blocks per SM).
    static constexpr std::size_t overlap_save_max_fft = 4096;
    //! Longest waveform overlap_save takes: at F = 4096 a segment still yields
    //! F - (L-1) >= 2049 outputs (at most 2x the transform work of an infinite F).
    //! Longer waveforms resolve to fft.
    static constexpr std::size_t overlap_save_max_taps = overlap_save_max_fft / 2;
    //! Smallest segment FFT: below 512 points a 256-thread block has too little work.
    static constexpr std::size_t overlap_save_min_fft = 512;
    //! F per waveform length: the smallest power of two >= 4 L, clamped to
    //! [overlap_save_min_fft, overlap_save_max_fft] (so M = F - L + 1 >= 3/4 F up to
    //! L = 1024: the overlap costs at most 1/3 more transform work per output).
    static std::size_t overlap_save_fft_length(std::size_t L)
    {
        std::size_t f = overlap_save_min_fft;
        while (f < 4 * L && f < overlap_save_max_fft)
            f *= 2;
        return f;
    }
    /*!
     * F the overlap_save method uses for a row of nrange samples (L <=
     * overlap_save_max_taps): the power of two in [overlap_save_min_fft,
     * overlap_save_max_fft] with F >= 2 L - 1 that transforms the fewest points per row,
     * ceil(nrange / (F - L + 1)) * F; the smaller F on a tie. The CUDA kernel always runs
     * three shared-memory passes (radix F/256, 16, 16), so its cost per transformed
     * point hardly depends on F, and this minimises the work (PD-A: 4096, PD-B: 4096,
     * PD-C: 1024).
     */
    static std::size_t overlap_save_fft_length(std::size_t L, std::size_t nrange)
    {
        std::size_t best = 0, best_points = 0;
        for (std::size_t f = overlap_save_min_fft; f <= overlap_save_max_fft; f *= 2) {
            if (f + 1 < 2 * L)
                continue;
            const std::size_t m = f - L + 1;
            const std::size_t points = (nrange + m - 1) / m * f;
            if (best == 0 || points < best_points) {
                best = f;
                best_points = points;
            }
        }
        return best == 0 ? overlap_save_max_fft : best;
    }
    /*!
     * automatic on CUDA picks overlap_save for fir_crossover_taps_cuda < L <= this (every
     * length it takes): in `gpuradar_bench pulse_compression/PD_overlap_save_sweep`
     * overlap_save was faster than the cuFFT fft method at every length measured
     * (1 .. 2048 taps) on PD-A, PD-B and PD-C, by 1.5-2.7x.
     */
    static constexpr std::size_t overlap_save_auto_max_taps = overlap_save_max_taps;

    //! Parses "auto" | "fft" | "fir" | "overlap_save"; throws std::invalid_argument
    //! naming `method`.
    static method parse_method(const std::string& name);
    static const char* to_string(method m);

    /*!
     * \param b         backend
     * \param nrange    samples per row (fast-time gate), >= 1
     * \param rows      rows per run() call, >= 1
     * \param waveform  transmitted pulse s, 1 <= L <= nrange
     * \param window    amplitude window on the reference (window.h)
     * \param normalize divide by sqrt(sum |w s|^2) (white-noise power unchanged)
     * \param m         method (automatic resolves from the waveform length)
     * \param stream    CUDA stream for the CUDA backend
     * \param fft_length 0: automatic (preferred_fft_length(nrange + L - 1)); otherwise
     *                  the fft method uses max(fft_length, nrange + L - 1) exactly, for
     *                  this and every later waveform (benchmarks, callers with their own
     *                  size rule)
     * \param input     format of run_samples()'s input (fc32, or an SDR's sc16 / sc8 at
     *                  1.0 = full scale, sample_convert.h); run() always takes complex
     *                  float
     * Throws std::invalid_argument naming the parameter (nrange, rows, waveform, window
     * parameters) before allocating anything; cuda_error without a device for cuda.
     */
    static std::unique_ptr<pulse_compression>
    make(backend b,
         std::size_t nrange,
         std::size_t rows,
         const std::vector<cfloat>& waveform,
         const window_spec& window = window_spec(),
         bool normalize = false,
         method m = method::automatic,
         stream_ref stream = stream_ref(),
         std::size_t fft_length = 0,
         sample_format input = sample_format::fc32);

    virtual ~pulse_compression() = default;

    /*!
     * Compress rows() rows: in and out are rows()*nrange() samples, not overlapping
     * (device pointers on the CUDA backend, queued, not waited for).
     */
    virtual void run(const cfloat* in, cfloat* out) = 0;

    /*!
     * Compress rows() rows of input_format() samples (rows()*nrange() of them; device
     * memory on the CUDA backend, aligned to one sample). fc32 is run(). sc16 / sc8:
     * on CUDA the conversion to float (x / 32768, x / 128) happens in the first kernel's
     * load (the pad copy, the FIR tile or the overlap_save segment), so the integers are
     * all that is read; on the CPU VOLK converts into a workspace made by make(), then
     * run(). Either way the result is bit for bit run() on the codes' exact values.
     */
    virtual void run_samples(const void* in, cfloat* out);

    /*!
     * Replace the waveform (same window, gain rule and requested method). Rebuilds the
     * reference, and the plans and workspace only when the FFT length or the resolved
     * method changes. CUDA: the new reference is ordered on the stream after the work
     * already queued, so the next run() uses it (a CPI boundary when the caller runs one
     * CPI per call); the call waits for its own upload. Throws like make() on a bad
     * waveform and then keeps the old one.
     */
    virtual void set_waveform(const std::vector<cfloat>& waveform) = 0;

    /*!
     * What run() does, for logs and benchmarks: "fir", "fft" (CPU), "fft: separate
     * kernels" (CUDA, five passes) or "overlap_save: F = <segment FFT>, M = <outputs per
     * segment>" (CUDA, one kernel).
     */
    virtual std::string implementation() const { return to_string(d_resolved); }

    std::size_t nrange() const { return d_nrange; }
    std::size_t rows() const { return d_rows; }
    std::size_t waveform_length() const { return d_waveform_length; }
    //! The FFT length of the fft method (computed for the current waveform either way).
    std::size_t fft_length() const { return d_fft_length; }
    //! The segment FFT length F of the overlap_save method for the current waveform.
    std::size_t overlap_save_fft() const
    {
        return overlap_save_fft_length(d_waveform_length, d_nrange);
    }
    //! The format run_samples() takes.
    sample_format input_format() const { return d_input; }
    //! The fft_length argument of make() (0: automatic).
    std::size_t requested_fft_length() const { return d_requested_fft_length; }
    method requested_method() const { return d_requested; }
    //! fft, fir or overlap_save: what run() does for the current waveform.
    method resolved_method() const { return d_resolved; }
    const window_spec& window() const { return d_window; }
    bool normalize() const { return d_normalize; }
    //! The gain g applied (1 unless normalize).
    double gain() const { return d_gain; }

protected:
    pulse_compression(backend b,
                      std::size_t nrange,
                      std::size_t rows,
                      const window_spec& window,
                      bool normalize,
                      method m,
                      std::size_t requested_fft_length = 0,
                      sample_format input = sample_format::fc32);

    //! What a waveform turns into; computed (and validated) before any state changes.
    struct reference {
        std::vector<cfloat> taps; //!< c[k] = g conj(w[k] s[k]), k = 0..L-1
        double gain = 1.0;        //!< g
        method resolved = method::fft;
        std::size_t fft_length = 1;
    };

    //! Validates `waveform` (throws std::invalid_argument naming it) and builds its
    //! reference.
    reference make_reference(const std::vector<cfloat>& waveform) const;

    /*!
     * The fft method's multiplier: H = conj(FFT_nfft(g r)) / nfft, so that
     * y = IFFT_unnormalised(FFT(x) H) (host computation with FFTW in single precision,
     * shared by both backends).
     */
    static std::vector<cfloat> make_spectrum(const reference& ref);

    //! Records a reference once the backend has rebuilt everything for it.
    void adopt(const reference& ref);

    const backend d_backend;
    const std::size_t d_nrange;
    const std::size_t d_rows;
    const window_spec d_window;
    const bool d_normalize;
    const method d_requested;
    const std::size_t d_requested_fft_length;
    const sample_format d_input;
    std::size_t d_waveform_length = 0;
    std::size_t d_fft_length = 1;
    method d_resolved = method::fft;
    double d_gain = 1.0;

private:
    // CPU backend, integer input (made by make()): VOLK's conversion and its workspace.
    std::unique_ptr<sample_convert> d_convert;
    std::vector<cfloat> d_converted;
};

} // namespace gpuradar::kernels

#endif
