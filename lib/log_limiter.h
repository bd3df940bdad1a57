/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Rate-limited warnings for events that can repeat once per message or per CPI
 * (internal). */
#ifndef INCLUDED_GPURADAR_LOG_LIMITER_H
#define INCLUDED_GPURADAR_LOG_LIMITER_H

#include <chrono>
#include <cstdint>
#include <string>

namespace gr {
namespace gpuradar {

/*!
 * Decides which of a run of repeated events gets a log line, so that a stream of garbage
 * (1000 bad messages) costs a few lines instead of one each, while the first one is
 * always seen and the count is never lost: the block counts every event itself and says
 * the total in each line it does log.
 *
 * Logged: the first event; then the event that makes `every` since the last line, or the
 * first one at least `interval` after the last line (so a slow trickle is still seen,
 * once per interval). Each logged event reports how many were silent before it.
 *
 * Not synchronised: one limiter per thread of events (a block's message handler, or its
 * work()).
 */
class log_limiter
{
public:
    using clock = std::chrono::steady_clock;

    //! Lines for the first of every `every` events (>= 1) and at most one per interval.
    explicit log_limiter(std::uint64_t every = 100,
                         clock::duration interval = std::chrono::seconds(10))
        : d_every(every ? every : 1), d_interval(interval)
    {
    }

    /*!
     * Counts one event at `now`. Returns true when it should be logged; then
     * suppressed() is the number of events not logged since the previous line.
     */
    bool count(clock::time_point now = clock::now())
    {
        ++d_since_line;
        const bool first = !d_logged_any;
        if (!first && d_since_line < d_every && now - d_last_line < d_interval)
            return false;
        d_suppressed = first ? 0 : d_since_line - 1;
        d_since_line = 0;
        d_logged_any = true;
        d_last_line = now;
        return true;
    }

    //! Events not logged between the previous line and the one count() just allowed.
    std::uint64_t suppressed() const { return d_suppressed; }

    //! ", N of them since the last line not logged" after a gap, else "": for a line's
    //! count in parentheses.
    std::string quiet_note() const
    {
        return d_suppressed ? ", " + std::to_string(d_suppressed) +
                                  " of them since the last line not logged"
                            : std::string();
    }

private:
    const std::uint64_t d_every;
    const clock::duration d_interval;
    std::uint64_t d_since_line = 0;
    std::uint64_t d_suppressed = 0;
    bool d_logged_any = false;
    clock::time_point d_last_line{};
};

} // namespace gpuradar
} // namespace gr

#endif
