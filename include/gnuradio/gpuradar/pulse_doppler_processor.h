/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef INCLUDED_GPURADAR_PULSE_DOPPLER_PROCESSOR_H
#define INCLUDED_GPURADAR_PULSE_DOPPLER_PROCESSOR_H

#include <gnuradio/block.h>
#include <gnuradio/gpuradar/api.h>
#include <gnuradio/types.h>
#include <cstdint>
#include <string>
#include <vector>

namespace gr {
namespace gpuradar {

/*!
 * pulse_doppler_processor's parameters as named fields, for C++ callers: set what differs
 * from the defaults and pass it to pulse_doppler_processor::make(const params&). These
 * initialisers are the block's defaults: the flat make() and the Python binding take
 * theirs from here (GRC's YAML is checked against them by tools/check_defaults.py).
 * Each field is the parameter of the stage it belongs to (pulse_compression,
 * doppler_filter, envelope), checked as there, with the range_ / doppler_ prefix.
 */
struct pulse_doppler_processor_params {
    // CPI shape.
    unsigned int nrange = 0;   //!< range samples per pulse (>= 1; no default: set it)
    unsigned int npulses = 0;  //!< pulses per CPI (>= 2, >= 3 with a three-pulse MTI)
    unsigned int nfft = 0;     //!< Doppler bins (>= npulses; zero padded)
    unsigned int channels = 1; //!< receive channels per item (>= 1)

    // Pulse compression (pulse_compression's parameters).
    std::string waveform = "lfm";             //!< lfm, barker:N, frank:N, p4:N or custom
    std::vector<gr_complex> custom_waveform;  //!< the pulse when waveform is custom
    double bandwidth = 5e6;                   //!< LFM swept bandwidth (Hz)
    double pulse_width = 10e-6;               //!< pulse duration (s)
    double samp_rate = 10e6;                  //!< sample rate (Hz, > 0)
    bool up_chirp = true;                     //!< LFM direction: true +B/T
    std::string range_window = "rectangular"; //!< reference window (window.h names)
    int range_nbar = 4;                       //!< Taylor n-bar (>= 1)
    double range_sll_db = 35.0;               //!< Taylor / Chebyshev sidelobes (dB)
    double range_beta = 6.0;                  //!< Kaiser beta (>= 0)
    bool normalize = false;                   //!< keep white-noise power unchanged
    std::string method = "auto";              //!< auto, fft, overlap_save or fir

    // Doppler filter (doppler_filter's parameters).
    std::string mti = "none";                   //!< none, two_pulse or three_pulse
    std::string doppler_window = "rectangular"; //!< slow-time window
    int doppler_nbar = 4;                       //!< Taylor n-bar (>= 1)
    double doppler_sll_db = 35.0;               //!< Taylor / Chebyshev sidelobes (dB)
    double doppler_beta = 6.0;                  //!< Kaiser beta (>= 0)
    bool fftshift = true;                       //!< zero Doppler in the centre

    // Envelope and block.
    std::string envelope_mode = "square_law"; //!< square_law (|x|^2) or linear (|x|)
    bool db = false;                          //!< output in decibels
    std::string backend = "auto";             //!< auto, cuda or cpu
    unsigned int tap_every = 0; //!< publish every Nth CPI's map on `map` (0: never)
    int device = 0;             //!< CUDA device (0 to number of GPUs - 1)
    //! Input samples: fc32 (gr_complex), sc16 or sc8 (interleaved int16 / int8 I, Q as
    //! UHD / SoapySDR give with cpu_format sc16 / sc8), scaled to 1.0 = full scale (x /
    //! 32768, x / 128). CUDA: the integers are copied to the GPU and pulse compression's
    //! first kernel converts them as it loads them.
    std::string input_type = "fc32";
};

/*!
 * \brief The pulse-Doppler chain in one block: pulse compression -> corner turn ->
 * Doppler filter -> envelope.
 * \ingroup gpuradar
 *
 * In: pulse stream, items of gr_complex[channels * nrange], a CPI = npulses items.
 * Out: range-Doppler map, items of float[channels * nfft] (one range bin each, Doppler
 * contiguous), a CPI = nrange items; square-law power by default (what cfar_2d expects).
 * The output equals pulse_compression -> corner_turn -> doppler_filter -> envelope with
 * the same parameters (tested). It is one block rather than a hierarchy of the four so
 * that the CUDA backend can fuse their passes (kernels::pulse_doppler_processor: corner
 * turn, canceller, window, Doppler FFT and envelope in one kernel that reads the
 * compressed CPI once); use the four blocks to tap the signal between stages.
 *
 * Every parameter is the one of the block it belongs to (see pulse_compression,
 * doppler_filter, envelope); range_* parameters are the pulse-compression window,
 * doppler_* the slow-time window. The `waveform` message port and set_waveform() are
 * pulse_compression's: the change lands between CPIs. CPI framing and the `cpi` tag as
 * doppler_filter: re-emitted on the first output item of each CPI with ndoppler and
 * fftshift added; partial CPIs are dropped and counted.
 *
 * Map tap (tap_every = N > 0): every Nth processed CPI (the 1st, the N+1st, ...) is also
 * published on the message port `map` as a pair (meta . f32vector), so that one chain
 * feeds a GPU consumer on the stream output and a host display at once. The vector is
 * the CPI's output exactly as on the stream (channels * nrange * ndoppler floats, one
 * range bin's Doppler vector after the other, channels channel-major inside a bin). meta
 * is a dict: cpi (u64, the CPI index), nrange, ndoppler, channels (u64), fs, prf, fc
 * (Hz, doubles; fs falls back to samp_rate, prf and fc are 0 when the cpi tag lacks
 * them), fftshift, db (bools), envelope ("square_law" or "linear"), r0_m (range of bin
 * 0 in m, 0 when unknown), rx_time (seconds, double; only when the tag has it) and
 * nonfinite_samples (u64, the pulse_framer's count; only when the tag has it). On
 * the CUDA backend the map is copied to pinned host memory asynchronously on the block's
 * stream (counted in device_buffer::transfer_stats().d2h_bytes) and published once the
 * copy is complete; the stream output stays on the device.
 *
 * Non-finite input: samples with a NaN or infinite part are neither zeroed nor counted
 * here; the pulse_framer, where samples enter a pulse-Doppler chain, does both (the cpi
 * tag's nonfinite_samples). Fed directly, one such sample makes the whole CPI's map NaN
 * (the FFTs spread it), which cfar_2d counts as NaN/Inf cells and never detects.
 */
class GPURADAR_API pulse_doppler_processor : virtual public gr::block
{
public:
    typedef std::shared_ptr<pulse_doppler_processor> sptr;

    using params = pulse_doppler_processor_params;

    /*!
     * The block from named parameters (pulse_doppler_processor_params): checked as the
     * flat make() checks them, std::invalid_argument naming the parameter.
     */
    static sptr make(const params& p);

    /*!
     * The same, one argument per field, in the order GRC and Python use; the defaults
     * are pulse_doppler_processor_params's.
     * The parameters are pulse_compression's, doppler_filter's and envelope's; `device`
     * is the CUDA device index (0 to number of GPUs - 1) the block's stream, plans and
     * memory live on, checked before anything is allocated (std::invalid_argument naming
     * `device` and the range); the CPU backend refuses a negative index and logs and
     * ignores any other. `input_type` is "fc32", "sc16" or "sc8" (the input item is
     * channels * nrange samples of that format; any other name throws
     * std::invalid_argument naming `input_type` and the three).
     */
    static sptr
    make(unsigned int nrange,
         unsigned int npulses,
         unsigned int nfft,
         unsigned int channels = params{}.channels,
         const std::string& waveform = params{}.waveform,
         const std::vector<gr_complex>& custom_waveform = params{}.custom_waveform,
         double bandwidth = params{}.bandwidth,
         double pulse_width = params{}.pulse_width,
         double samp_rate = params{}.samp_rate,
         bool up_chirp = params{}.up_chirp,
         const std::string& range_window = params{}.range_window,
         int range_nbar = params{}.range_nbar,
         double range_sll_db = params{}.range_sll_db,
         double range_beta = params{}.range_beta,
         bool normalize = params{}.normalize,
         const std::string& method = params{}.method,
         const std::string& mti = params{}.mti,
         const std::string& doppler_window = params{}.doppler_window,
         int doppler_nbar = params{}.doppler_nbar,
         double doppler_sll_db = params{}.doppler_sll_db,
         double doppler_beta = params{}.doppler_beta,
         bool fftshift = params{}.fftshift,
         const std::string& envelope_mode = params{}.envelope_mode,
         bool db = params{}.db,
         const std::string& backend = params{}.backend,
         unsigned int tap_every = params{}.tap_every,
         int device = params{}.device,
         const std::string& input_type = params{}.input_type);

    /*!
     * Live control (GRC callbacks). Each setter checks its values as make() does
     * (std::invalid_argument naming the parameter; the old value stays) and the change
     * takes effect at the next CPI boundary: every CPI is processed wholly with the old
     * or wholly with the new configuration. Setters may be called from any thread.
     */
    //! Replaces the waveform (pulse_compression::set_waveform).
    virtual void set_waveform(const std::vector<gr_complex>& waveform) = 0;
    //! MTI canceller: "none", "two_pulse" or "three_pulse".
    virtual void set_mti(const std::string& mti) = 0;
    //! Pulse-compression reference window and its Taylor n-bar, sidelobe level (dB) and
    //! Kaiser beta (the range_* parameters of make()).
    virtual void
    set_range_window(const std::string& window, int nbar, double sll_db, double beta) = 0;
    //! Slow-time window and its parameters (the doppler_* parameters of make()).
    virtual void set_doppler_window(const std::string& window,
                                    int nbar,
                                    double sll_db,
                                    double beta) = 0;
    //! Envelope in dB (true) or linear (false).
    virtual void set_db(bool db) = 0;
    //! CPIs discarded (a cpi tag inside a CPI, or a tag of another shape).
    virtual std::uint64_t dropped_cpis() const = 0;
    //! What runs, e.g. which CUDA passes are fused (kernels::pulse_doppler_processor).
    virtual std::string implementation() const = 0;
    virtual std::string backend() const = 0;
    //! The `device` parameter.
    virtual int device() const = 0;
};

} // namespace gpuradar
} // namespace gr

#endif
