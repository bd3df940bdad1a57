/* Live parameter changes of a running block, applied at the next CPI boundary (internal).
 */
#ifndef INCLUDED_GPURADAR_PENDING_CHANGE_H
#define INCLUDED_GPURADAR_PENDING_CHANGE_H

#include <functional>
#include <memory>
#include <mutex>
#include <utility>

namespace gr {
namespace gpuradar {

/*!
 * What a setter changes while the flowgraph runs (CONVENTIONS.md, Live control: a setter
 * takes effect at the next CPI boundary, never inside a CPI).
 *
 * A setter calls change(edit): edit() modifies a copy of the newest configuration (the
 * pending one, else the running one), then `build` makes from it what work() will run —
 * typically the kernels object, whose make() checks every parameter
 * (std::invalid_argument naming it) before it allocates. When edit or build throws
 * nothing changes: the old configuration stays, pending or running. work() calls take()
 * before it starts a CPI and swaps in what it gets. Setters may come from any thread (a
 * GUI's): a mutex guards the pending state, and a second one serialises setters, so that
 * two changes in a row both land (the second edits the first's result) while work() is
 * never held up by a build.
 */
template <class Config, class Built>
class pending_change
{
public:
    using build_fn = std::function<std::unique_ptr<Built>(const Config&)>;

    pending_change(Config running, build_fn build)
        : d_latest(std::move(running)), d_build(std::move(build))
    {
    }

    template <class Edit>
    void change(Edit&& edit)
    {
        std::lock_guard<std::mutex> one_setter(d_setter_mutex);
        Config c = latest();
        edit(c);
        auto built = d_build(c);
        std::lock_guard<std::mutex> lock(d_mutex);
        d_latest = std::move(c);
        d_pending = std::move(built);
    }

    //! work(), before a CPI: true when something changed; then `built` is what the newest
    //! change built and `config` its configuration.
    bool take(std::unique_ptr<Built>& built, Config& config)
    {
        std::lock_guard<std::mutex> lock(d_mutex);
        if (!d_pending)
            return false;
        built = std::move(d_pending);
        config = d_latest;
        return true;
    }

    //! True when a change waits for work() (a hint: take() decides).
    bool pending() const
    {
        std::lock_guard<std::mutex> lock(d_mutex);
        return d_pending != nullptr;
    }

    //! The newest configuration (pending or running).
    Config latest() const
    {
        std::lock_guard<std::mutex> lock(d_mutex);
        return d_latest;
    }

private:
    mutable std::mutex d_mutex;
    std::mutex d_setter_mutex;
    Config d_latest;
    std::unique_ptr<Built> d_pending;
    const build_fn d_build;
};

} // namespace gpuradar
} // namespace gr

#endif
