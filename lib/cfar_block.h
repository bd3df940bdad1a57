/* cfar_1d_impl and cfar_2d_impl: one block logic for both (framing, kernel calls, tags,
 * PDUs) over their kernels objects (internal). */
#ifndef INCLUDED_GPURADAR_CFAR_BLOCK_H
#define INCLUDED_GPURADAR_CFAR_BLOCK_H

#include "backend_select.h"
#include "cfar_detections.h"
#include "cpi_tag.h"
#include "gpu_stream_owner.h"
#include "pending_change.h"
#include <gnuradio/gpuradar/cfar_1d.h>
#include <gnuradio/gpuradar/cfar_2d.h>
#include <gpuradar/kernels/detection/cfar_1d.h>
#include <gpuradar/kernels/detection/cfar_2d.h>
#include <type_traits>
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace gr {
namespace gpuradar {

/*!
 * What a CFAR block's setters change: the kernel's parameters and the os rank as asked
 * for (0: the usual rank of the window's training cells, re-resolved when the window
 * changes).
 */
template <class Params>
struct cfar_config {
    Params params;
    int os_k_requested = 0;
};

/*!
 * cfar_1d_impl and cfar_2d_impl: one kernels object (Kernel = kernels::cfar_1d or
 * kernels::cfar_2d, same run/collect API) run on groups of cfar_layout::group input
 * items, one run() and one detections PDU per group.
 *
 * Framing (CONVENTIONS.md, Streams and the CPI; the rules in cfar_1d.h / cfar_2d.h):
 * - a `cpi` tag inside a group discards the items before it (a partial group, counted in
 *   dropped_cpis()) so that the next group starts on the tag;
 * - a tag whose shape differs from the block's (cfar_shape_mismatch) discards its group;
 * - cfar_2d (layout.ndoppler > 0): a group is a CPI; its tag is re-emitted on its first
 *   item, or one is made (index, nrange, ndoppler) with the running index;
 * - cfar_1d (layout.ndoppler == 0): a group belongs to the CPI of the last tag, its items
 *   numbered from that tag (`item`, `first_item`); while no tag has been seen each group
 *   is a CPI of its own with a made tag (index, nrange).
 * Other tags move with their group (a dropped partial group would shift GNU Radio's 1:1
 * propagation).
 *
 * Live control: the blocks' setters go through reconfigure(), which builds the new
 * kernels object at once (its make() checks the parameters: a bad value throws and
 * changes nothing) and leaves it pending; work() swaps it in before the next group, so a
 * CPI is detected wholly with the old or wholly with the new parameters. cfar_1d_impl and
 * cfar_2d_impl derive from this class and add their setters.
 */
template <class Api, class Kernel, class Params>
class cfar_block : public Api, public gpu_stream_owner
{
public:
    std::uint64_t dropped_cpis() const override { return d_counters.dropped; }
    std::uint64_t nonfinite_cells() const override { return d_counters.nonfinite; }
    std::uint64_t overflowed_cpis() const override { return d_counters.overflowed; }
    int training_cells() const override
    {
        std::lock_guard<std::mutex> lock(d_kernel_mutex);
        return d_kernel->training_cells();
    }
    double alpha() const override
    {
        std::lock_guard<std::mutex> lock(d_kernel_mutex);
        return d_kernel->alpha();
    }
    int os_k() const override
    {
        std::lock_guard<std::mutex> lock(d_kernel_mutex);
        return d_kernel->os_k();
    }
    std::string backend() const override { return kernels::to_string(d_backend); }
    int device() const override { return cuda_device(); }

    void set_pfa(double pfa) override
    {
        reconfigure([&](cfar_config<Params>& c) { c.params.pfa = pfa; });
    }
    void set_variant(const std::string& variant) override
    {
        reconfigure([&](cfar_config<Params>& c) {
            c.params.variant = kernels::parse_cfar_variant(variant);
        });
    }

    void forecast(int noutput_items, gr_vector_int& ninput_items_required) override
    {
        ninput_items_required[0] = noutput_items;
    }

    int general_work(int noutput_items,
                     gr_vector_int& ninput_items,
                     gr_vector_const_void_star& input_items,
                     gr_vector_void_star& output_items) override
    {
        begin_work(true); // before any kernel touches the buffers; input per group below
        const auto* in = static_cast<const float*>(input_items[0]);
        auto* mask = static_cast<std::uint8_t*>(output_items[0]);
        // The threshold only when its port is connected.
        auto* thr =
            output_items.size() > 1 ? static_cast<float*>(output_items[1]) : nullptr;
        const std::size_t cells = d_layout.cells_per_item();
        const int group = static_cast<int>(d_layout.group);
        const std::uint64_t read0 = this->nitems_read(0);
        const std::uint64_t written0 = this->nitems_written(0);

        int consumed = 0, produced = 0;
        while (consumed + group <= ninput_items[0] && produced + group <= noutput_items) {
            const std::uint64_t start = read0 + consumed;
            std::vector<gr::tag_t> tags;
            this->get_tags_in_range(tags, 0, start, start + group);
            const cpi_group_tags g = split_group_tags(tags, start);
            if (g.cut) {
                // A new CPI starts inside this group: items were lost upstream. Drop the
                // partial group and realign on the tag.
                consumed += static_cast<int>(g.cut);
                ++d_counters.dropped;
                this->d_logger->warn(
                    "discarded {} items of a group cut short by a cpi tag "
                    "({} groups dropped so far)",
                    g.cut,
                    d_counters.dropped.load());
                continue;
            }
            const cfar_framer::decision f = d_framer.next(g.cpi);
            if (f.drop) {
                consumed += group;
                ++d_counters.dropped;
                this->d_logger->error("{}: group discarded", f.reason);
                continue;
            }
            const std::size_t in_off = std::size_t(consumed) * cells;
            const std::size_t out_off = std::size_t(produced) * cells;
            this->wait_for_input(start + group);
            apply_pending_change();
            d_kernel->run(in + in_off,
                          mask + out_off,
                          thr ? thr + out_off : nullptr,
                          d_layout.runs_per_group());
            // collect() waits for this group on the CUDA backend.
            const kernels::cfar_report report = d_kernel->collect();
            this->message_port_pub(detections_port(),
                                   cfar_report_pdu(report,
                                                   f,
                                                   d_layout,
                                                   d_kernel->alpha(),
                                                   this->d_logger,
                                                   d_counters,
                                                   angles_of(f.dict, in + in_off)));

            const std::uint64_t out_start = written0 + produced;
            for (unsigned port = 0; port < output_items.size(); ++port) {
                if (f.emit)
                    this->add_item_tag(port, out_start, cpi_tag_key(), f.emit);
                for (const auto& t : g.other)
                    this->add_item_tag(
                        port, out_start + (t.offset - start), t.key, t.value, t.srcid);
            }
            consumed += group;
            produced += group;
            // One group per call: collect() has waited for it, and returning now hands
            // its input space back to the writer at once instead of after the next
            // groups (the writer may be blocked on that space).
            break;
        }
        finish_work(produced);
        this->consume_each(consumed);
        return produced;
    }

protected:
    /*!
     * The monopulse of the beams that formed a CPI's map (cfar_2d with angles), or
     * nullptr: no azimuths (the default).
     */
    virtual const kernels::grid_monopulse* beam_monopulse(const pmt::pmt_t& /*cpi_dict*/)
    {
        return nullptr;
    }

    //! Fills os_k from the requested rank (0: the default for the window).
    using os_k_resolver = void (*)(Params&, int os_k_requested);

    /*!
     * `layout` describes `config.params` (the kernel's); the kernel checks every
     * parameter (std::invalid_argument naming it) before it allocates anything. The
     * derived block initialises gr::block (a virtual base) with io_signatures().
     */
    cfar_block(const char* block_name,
               const cfar_layout& layout,
               const cfar_config<Params>& config,
               os_k_resolver resolve_os_k,
               kernels::backend backend,
               int device)
        : gr::block(block_name,
                    stream_signature(backend, layout.cells_per_item() * sizeof(float)),
                    cfar_output_signature(backend, layout.cells_per_item())),
          // High priority: collect() waits for every CPI's detections on the host, and
          // with the default priority its kernel would queue behind the next CPI's
          // upstream work.
          gpu_stream_owner(backend, block_name, kernels::stream_priority::high, device),
          d_layout(layout),
          d_backend(backend),
          d_kernel(Kernel::make(backend, config.params, stream())),
          d_framer(layout),
          d_resolve_os_k(resolve_os_k),
          d_changes(config, [this](const cfar_config<Params>& c) {
              const device_guard on(*this); // a setter's thread
              return Kernel::make(d_backend, c.params, stream());
          })
    {
        set_output_multiple_and_ports();
    }

    /*!
     * A setter: edit(config) changes the newest configuration; the os rank is resolved
     * again and the kernels object built (which checks everything). Throws and keeps the
     * old configuration on a bad value; otherwise the change lands before the next group.
     */
    template <class Edit>
    void reconfigure(Edit&& edit)
    {
        d_changes.change([&](cfar_config<Params>& c) {
            edit(c);
            d_resolve_os_k(c.params, c.os_k_requested);
        });
    }

private:
    //! The angle source of a group whose map is at `map` (cfar_2d only).
    angle_source angles_of(const pmt::pmt_t& cpi_dict, const float* map)
    {
        angle_source a;
        if constexpr (std::is_same_v<Kernel, kernels::cfar_2d>) {
            a.monopulse = beam_monopulse(cpi_dict);
            if (a.monopulse)
                a.beam_powers = [this,
                                 map](const std::vector<kernels::cfar_detection>& d) {
                    return d_kernel->channel_powers(map, d);
                };
        }
        return a;
    }

    void apply_pending_change()
    {
        std::unique_ptr<Kernel> next;
        cfar_config<Params> c;
        if (!d_changes.take(next, c))
            return;
        synchronize_stream(); // collect() has waited already; nothing of the old runs
        std::lock_guard<std::mutex> lock(d_kernel_mutex);
        d_kernel = std::move(next);
        d_layout.variant = c.params.variant;
    }

    void set_output_multiple_and_ports()
    {
        // Whole groups only; GNU Radio sizes the buffers for at least two of them.
        this->set_output_multiple(static_cast<int>(d_layout.group));
        // The cpi tag is re-emitted by hand and other tags move with their group.
        this->set_tag_propagation_policy(gr::block::TPP_DONT);
        this->message_port_register_out(detections_port());
    }

    cfar_layout d_layout; //!< its variant follows the setters (the PDU reports it)
    const kernels::backend d_backend;
    std::unique_ptr<Kernel> d_kernel;
    mutable std::mutex d_kernel_mutex; //!< the swap against the getters' threads
    cfar_framer d_framer;
    cfar_counters d_counters;
    const os_k_resolver d_resolve_os_k;
    pending_change<cfar_config<Params>, Kernel> d_changes;
};

/*!
 * The make() parameters cfar_1d and cfar_2d share, checked (std::invalid_argument naming
 * the parameter) and set alike in their kernel's Params; the block sets the rest.
 */
template <class Params>
Params cfar_common_params(const char* block_name,
                          unsigned int nrange,
                          unsigned int channels,
                          unsigned int max_detections,
                          double pfa,
                          const std::string& variant,
                          int os_k,
                          bool local_max_only)
{
    check_positive(block_name, "nrange", nrange);
    check_positive(block_name, "channels", channels);
    check_positive(block_name, "max_detections", max_detections);
    Params p;
    p.nrange = nrange;
    p.channels = channels;
    p.max_detections = max_detections;
    p.pfa = pfa;
    p.variant = kernels::parse_cfar_variant(variant);
    p.os_k = os_k;
    p.local_max = local_max_only;
    return p;
}

} // namespace gpuradar
} // namespace gr

#endif
