/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef INCLUDED_GPURADAR_PULSE_DOPPLER_PROCESSOR_H
#define INCLUDED_GPURADAR_PULSE_DOPPLER_PROCESSOR_H

#include <gnuradio/gpuradar/api.h>
#include <gnuradio/hier_block2.h>
#include <gnuradio/types.h>
#include <cstdint>
#include <string>
#include <vector>

namespace gr {
namespace gpuradar {

/*!
 * \brief The pulse-Doppler chain in one block: pulse_compression -> corner_turn ->
 * doppler_filter -> envelope.
 * \ingroup gpuradar
 *
 * In: pulse stream, items of gr_complex[channels * nrange], a CPI = npulses items.
 * Out: range-Doppler map, items of float[channels * nfft] (one range bin each, Doppler
 * contiguous), a CPI = nrange items; square-law power by default (what cfar_2d expects).
 * The `cpi` tag follows the data (re-emitted with ndoppler and fftshift). On the CUDA
 * backend the four blocks pass the CPI to each other in GPU memory: only the input and
 * the output cross PCIe. Every parameter is the one of the block it belongs to (see
 * pulse_compression, corner_turn, doppler_filter, envelope); range_* parameters are the
 * pulse-compression window, doppler_* the slow-time window. The `waveform` message port
 * is pulse_compression's.
 */
class GPURADAR_API pulse_doppler_processor : virtual public gr::hier_block2
{
public:
    typedef std::shared_ptr<pulse_doppler_processor> sptr;

    static sptr make(unsigned int nrange,
                     unsigned int npulses,
                     unsigned int nfft,
                     unsigned int channels = 1,
                     const std::string& waveform = "lfm",
                     const std::vector<gr_complex>& custom_waveform = {},
                     double bandwidth = 5e6,
                     double pulse_width = 10e-6,
                     double samp_rate = 10e6,
                     bool up_chirp = true,
                     const std::string& range_window = "rectangular",
                     int range_nbar = 4,
                     double range_sll_db = 35.0,
                     double range_beta = 6.0,
                     bool normalize = false,
                     const std::string& method = "auto",
                     const std::string& mti = "none",
                     const std::string& doppler_window = "rectangular",
                     int doppler_nbar = 4,
                     double doppler_sll_db = 35.0,
                     double doppler_beta = 6.0,
                     bool fftshift = true,
                     const std::string& envelope_mode = "square_law",
                     bool db = false,
                     const std::string& backend = "auto");

    //! Replaces the waveform at the next CPI boundary (pulse_compression::set_waveform).
    virtual void set_waveform(const std::vector<gr_complex>& waveform) = 0;
    //! CPIs discarded by any of the blocks inside.
    virtual std::uint64_t dropped_cpis() const = 0;
    virtual std::string backend() const = 0;
};

} // namespace gpuradar
} // namespace gr

#endif
