/* The work() of the blocks that process whole CPIs of input 0 (internal). */
#ifndef INCLUDED_GPURADAR_CPI_BLOCK_H
#define INCLUDED_GPURADAR_CPI_BLOCK_H

#include "cpi_sequencer.h"
#include "cpi_tag.h"
#include "gpu_stream_owner.h"
#include <algorithm>
#include <cstdint>
#include <string>

namespace gr {
namespace gpuradar {

//! What one item of a CPI block's stream holds, which fixes how many make a CPI.
enum class cpi_item {
    pulse,     //!< one pulse (of every channel): npulses items per CPI
    range_bin, //!< one range bin over the CPI (of every channel): nrange items per CPI
};

/*!
 * How a CPI block's input and output items make up a CPI. Set field by field (a block's
 * constructor has a small function for it), so that each figure says what it is; the
 * items per CPI follow from the item kinds and the shape, so they cannot disagree.
 */
struct cpi_framing {
    std::uint64_t npulses = 1; //!< the CPI's shape, checked against its cpi tag
    std::uint64_t nrange = 1;
    cpi_item in = cpi_item::pulse;  //!< what an input item is
    std::size_t in_elements = 1;    //!< elements (In) per input item
    cpi_item out = cpi_item::pulse; //!< what an output item is
    std::size_t out_elements = 1;   //!< elements (Out) per output item
    //! Wait for the writer of each CPI's input just before it (wait_for_input) rather
    //! than for the whole input at the start of work().
    bool wait_per_cpi = false;

    std::uint64_t items_per_cpi(cpi_item item) const
    {
        return item == cpi_item::pulse ? npulses : nrange;
    }
    std::uint64_t in_per_cpi() const { return items_per_cpi(in); }
    std::uint64_t out_per_cpi() const { return items_per_cpi(out); }
    //! What an input item is, for the drop log.
    const char* in_unit() const
    {
        return in == cpi_item::pulse ? "pulses" : "range bins";
    }
};

/*!
 * Base of pulse_compression, corner_turn, doppler_filter and pulse_doppler_processor
 * (as cfar_block is for the detectors): one general_work() for all of them. Per call it
 * runs as many whole CPIs as input and output room allow, framed by cpi_sequencer
 * (CONVENTIONS.md, Streams and the CPI: partial and mis-shaped CPIs dropped and counted),
 * with the device-stream protocol of gpu_stream_owner around them. The block supplies
 * process_cpi(), which runs its kernels on one CPI and tags its output, and may do
 * more after each call in after_work(). The derived block initialises gr::block (a
 * virtual base) and sets its output multiple, relative rate and tag policy.
 */
template <class Api, class In, class Out>
class cpi_block : public Api, public gpu_stream_owner
{
public:
    std::uint64_t dropped_cpis() const override { return d_sequencer.dropped(); }
    std::string backend() const override { return kernels::to_string(d_backend); }
    int device() const override { return cuda_device(); }

    void forecast(int noutput_items, gr_vector_int& ninput_items_required) override
    {
        ninput_items_required[0] = static_cast<int>(
            (noutput_items / d_framing.out_per_cpi()) * d_framing.in_per_cpi());
    }

    int general_work(int noutput_items,
                     gr_vector_int& ninput_items,
                     gr_vector_const_void_star& input_items,
                     gr_vector_void_star& output_items) override
    {
        begin_work(d_framing.wait_per_cpi); // before any kernel touches the buffers
        const auto* in = static_cast<const In*>(input_items[0]);
        auto* out = static_cast<Out*>(output_items[0]);
        const std::uint64_t read0 = this->nitems_read(0);
        const std::uint64_t written0 = this->nitems_written(0);
        const int ncpi = static_cast<int>(
            std::min(std::uint64_t(noutput_items) / d_framing.out_per_cpi(),
                     std::uint64_t(ninput_items[0]) / d_framing.in_per_cpi()));
        const auto r = run_whole_cpis(
            d_sequencer,
            read0,
            ncpi,
            this->d_logger,
            d_framing.in_unit(),
            [this](std::vector<gr::tag_t>& t, std::uint64_t a, std::uint64_t b) {
                this->get_tags_in_range(t, 0, a, b, cpi_tag_key());
            },
            [&](std::uint64_t consumed, int cpi, const pmt::pmt_t& dict) {
                if (d_framing.wait_per_cpi)
                    wait_for_input(read0 + consumed + d_framing.in_per_cpi());
                cpi_io io;
                io.in = in + consumed * d_framing.in_elements;
                io.out = out + std::uint64_t(cpi) * d_framing.out_per_cpi() *
                                   d_framing.out_elements;
                io.in_start = read0 + consumed;
                io.out_start = written0 + std::uint64_t(cpi) * d_framing.out_per_cpi();
                io.dict = dict;
                process_cpi(io);
            });
        const int produced = r.cpis * static_cast<int>(d_framing.out_per_cpi());
        finish_work(produced);
        after_work();
        this->consume_each(static_cast<int>(r.consumed));
        return produced;
    }

protected:
    cpi_block(const char* block_name,
              kernels::backend backend,
              int device,
              const cpi_framing& framing)
        : gpu_stream_owner(backend, block_name, kernels::stream_priority::normal, device),
          d_backend(backend),
          d_framing(framing),
          d_sequencer(framing.in_per_cpi(), framing.npulses, framing.nrange)
    {
    }

    //! One CPI: its input, where its output goes, their absolute item offsets and the
    //! CPI's dict (from its cpi tag, or made by the sequencer).
    struct cpi_io {
        const In* in = nullptr;
        Out* out = nullptr;
        std::uint64_t in_start = 0;
        std::uint64_t out_start = 0;
        pmt::pmt_t dict;
    };
    virtual void process_cpi(const cpi_io& io) = 0;
    //! After each work() call's CPIs (and finish_work()).
    virtual void after_work() {}

    const kernels::backend d_backend;
    const cpi_framing d_framing;

private:
    cpi_sequencer d_sequencer;
};

} // namespace gpuradar
} // namespace gr

#endif
