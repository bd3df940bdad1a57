/* The whole pulse-Doppler chain in one object: pulse compression -> corner turn ->
 * Doppler filter -> envelope, one CPI per run(), with the CUDA passes fused. */
#ifndef INCLUDED_GPURADAR_KERNELS_PULSE_DOPPLER_PROCESSOR_H
#define INCLUDED_GPURADAR_KERNELS_PULSE_DOPPLER_PROCESSOR_H

#include <gpuradar/kernels/common/backend.h>
#include <gpuradar/kernels/common/cuda_resources.h>
#include <gpuradar/kernels/common/sample_convert.h>
#include <gpuradar/kernels/common/window.h>
#include <gpuradar/kernels/pulse_doppler/doppler_filter.h>
#include <gpuradar/kernels/pulse_doppler/envelope.h>
#include <gpuradar/kernels/pulse_doppler/pulse_compression.h>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace gpuradar::kernels {

//! Configuration of a pulse_doppler; make() checks every field through the stages' own
//! checks (std::invalid_argument naming the parameter, prefixed by the stage).
struct pulse_doppler_processor_params {
    std::size_t npulses = 0;      //!< pulses per CPI (>= 2; >= 3 with three_pulse)
    std::size_t nrange = 0;       //!< fast-time samples per pulse and channel, >= 1
    std::size_t channels = 1;     //!< channels per pulse item, channel-major, >= 1
    std::vector<cfloat> waveform; //!< transmitted pulse, 1 <= L <= nrange
    window_spec range_window;     //!< amplitude window on the matched filter's reference
    bool normalize = false;       //!< matched-filter gain 1/sqrt(sum |w s|^2)
    pulse_compression::method pc_method = pulse_compression::method::automatic;
    std::size_t nfft = 0; //!< Doppler bins, >= npulses; 0 means npulses
    doppler_filter::mti_mode mti = doppler_filter::mti_mode::none;
    window_spec doppler_window; //!< slow-time window (length npulses - MTI order)
    bool fftshift = true;       //!< zero Doppler at bin nfft/2
    envelope::mode env_mode = envelope::mode::square_law; //!< square law for CFAR
    bool db = false;                                      //!< envelope in dB
    //! Format of run_samples()'s input (sample_convert.h: sc16 / sc8 at 1.0 = full
    //! scale); run() always takes complex float.
    sample_format input = sample_format::fc32;
};

/*!
 * Which CUDA fusions run (benchmarks measure each; results are the same within float
 * rounding). Ignored by the CPU backend. implementation() says what runs.
 */
struct pulse_doppler_processor_fusion {
    //! One kernel for corner turn + canceller + window + Doppler FFT + envelope: reads
    //! the compressed CPI once (straight from pulse compression's FFT workspace, so the
    //! strip pass goes too) and writes the power map once. Needs a power-of-two nfft in
    //! [2, 4096]; otherwise (or false) corner_turn, doppler_filter and envelope run as
    //! separate kernels.
    bool fused_doppler = true;
};

/*!
 * \brief Pulse compression -> corner turn -> Doppler filter -> envelope on one CPI.
 *
 * Input: one CPI of the pulse stream, npulses items of channels x nrange samples
 * (pulse-major, fast time contiguous). Output: the power (envelope) map in the range
 * stream layout, nrange items of channels x nfft floats,
 *
 *     out[(r * channels + c) * nfft + k] = env( DF( CT( PC(in) ) ) )
 *
 * exactly what pulse_compression (rows = npulses * channels) -> corner_turn ->
 * doppler_filter (rows = nrange * channels) -> envelope compute with the same parameters
 * (the CPU backend runs those four objects; the CUDA backend fuses their passes, see
 * pulse_doppler_processor_fusion). The map is what cfar_2d takes (nrange, ndoppler =
 * nfft, channels). Workspaces and plans are made in make(); the CUDA backend takes device
 * pointers and queues its work on `stream` without waiting. in and out must not overlap.
 */
class pulse_doppler_processor
{
public:
    using params = pulse_doppler_processor_params;
    using fusion = pulse_doppler_processor_fusion;

    static std::unique_ptr<pulse_doppler_processor> make(backend b,
                                                         const params& p,
                                                         stream_ref stream = stream_ref(),
                                                         const fusion& f = fusion());
    virtual ~pulse_doppler_processor() = default;

    /*!
     * make()'s parameter checks, allocating nothing (nfft 0 means npulses): sizes,
     * npulses against the MTI, nfft >= npulses, the waveform's length, both windows
     * (named range_window, range_nbar, ... and doppler_window, doppler_nbar, ...), and
     * the largest buffer, the Doppler map of nfft * nrange * channels complex samples,
     * within max_buffer_elements and max_buffer_bytes (buffer_size.h).
     */
    static void validate(const params& p);

    //! One CPI: npulses * channels * nrange samples in, nrange * channels * nfft out.
    virtual void run(const cfloat* in, float* out) = 0;

    /*!
     * One CPI of input_size() samples in params().input's format (device memory on the
     * CUDA backend, aligned to one sample). fc32 is run() itself. sc16 / sc8: on CUDA
     * the integers are what reaches the device and pulse compression's first kernel
     * converts them as it loads them (pulse_compression::run_samples), no separate pass;
     * on the CPU VOLK converts the CPI into a workspace made by make(), then run(). The
     * map is bit for bit run()'s on the codes' exact values.
     */
    virtual void run_samples(const void* in, float* out);

    /*!
     * Replace the waveform (pulse_compression::set_waveform: the next run() uses it;
     * throws on a bad waveform and keeps the old one).
     */
    virtual void set_waveform(const std::vector<cfloat>& waveform) = 0;

    //! What runs, e.g. "pc: fft: separate kernels; doppler: fused kernel (...)".
    virtual std::string implementation() const = 0;

    const params& get_params() const { return d_params; }
    std::size_t nfft() const { return d_params.nfft; }
    //! Samples of one input CPI and floats of one output map.
    std::size_t input_size() const
    {
        return d_params.npulses * d_params.channels * d_params.nrange;
    }
    std::size_t output_size() const
    {
        return d_params.nrange * d_params.channels * d_params.nfft;
    }

protected:
    explicit pulse_doppler_processor(const params& p) : d_params(p) {}
    params d_params; //!< with nfft resolved (never 0); waveform follows set_waveform

private:
    // CPU backend, integer input only (made by make()): VOLK's conversion and the
    // converted CPI.
    std::unique_ptr<sample_convert> d_convert;
    std::vector<cfloat> d_host_converted;
    friend std::unique_ptr<pulse_doppler_processor>
    attach_input_conversion(std::unique_ptr<pulse_doppler_processor> proc);
};

} // namespace gpuradar::kernels

#endif
