/* A small work-sharing pool: a call posts one job that the caller and idle workers
 * drain chunk by chunk (an atomic chunk counter), so concurrent calls from several
 * blocks interleave and a call never waits for a busy worker to begin. */
#include "common/cpu/row_pool.h"
#include "common/param_check.h"
#include <condition_variable>
#include <gpuradar/kernels/common/cpu_threads.h>
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>
#if defined(__linux__)
#include <sched.h>
#endif

namespace gpuradar::kernels {
namespace detail {
namespace {

struct job {
    std::size_t n = 0, chunk = 1, nchunks = 0;
    const row_fn* fn = nullptr;
    std::atomic<std::size_t> next{ 0 }, done{ 0 };
    std::atomic<unsigned> slots{ 1 }; // 0 is the caller's
    unsigned max_slots = 1;
    std::mutex m;
    std::condition_variable finished;
    std::exception_ptr error;

    //! Takes chunks until none is left; slot: this participant's index.
    void drain(unsigned slot)
    {
        for (std::size_t c; (c = next.fetch_add(1)) < nchunks;) {
            try {
                (*fn)(c * chunk, std::min(n, (c + 1) * chunk), slot);
            } catch (...) {
                std::lock_guard<std::mutex> lock(m);
                if (!error)
                    error = std::current_exception();
            }
            if (done.fetch_add(1) + 1 == nchunks) {
                std::lock_guard<std::mutex> lock(m);
                finished.notify_all();
            }
        }
    }
};

class row_pool
{
public:
    static row_pool& instance()
    {
        static row_pool pool;
        return pool;
    }

    ~row_pool() { stop_workers(); }

    int size() const { return d_size.load(); }

    void resize(int threads)
    {
        std::lock_guard<std::mutex> resize_lock(d_resize);
        stop_workers();
        d_size = threads;
        std::lock_guard<std::mutex> lock(d_m);
        d_stop = false;
        for (int i = 1; i < threads; ++i)
            d_workers.emplace_back([this] { work(); });
    }

    void run(std::size_t n, std::size_t grain, unsigned max_slots, const row_fn& fn)
    {
        if (n == 0)
            return;
        const std::size_t participants =
            std::min<std::size_t>({ std::size_t(size()), std::size_t(max_slots), n });
        if (participants <= 1) {
            fn(0, n, 0);
            return;
        }
        auto j = std::make_shared<job>();
        j->n = n;
        // A few chunks per participant evens out rows of unequal cost.
        j->chunk =
            std::max<std::size_t>(grain, (n + 4 * participants - 1) / (4 * participants));
        j->nchunks = (n + j->chunk - 1) / j->chunk;
        j->fn = &fn;
        j->max_slots = max_slots;
        {
            std::lock_guard<std::mutex> lock(d_m);
            for (std::size_t i = 1; i < std::min(participants, j->nchunks); ++i)
                d_queue.push_back(j);
        }
        d_wake.notify_all();
        j->drain(0);
        std::unique_lock<std::mutex> lock(j->m);
        j->finished.wait(lock, [&] { return j->done.load() == j->nchunks; });
        if (j->error)
            std::rethrow_exception(j->error);
    }

private:
    row_pool() { resize(default_threads()); }

    static int default_threads() { return std::min(cpu_cores(), max_cpu_threads); }

    void work()
    {
        for (;;) {
            std::shared_ptr<job> j;
            {
                std::unique_lock<std::mutex> lock(d_m);
                d_wake.wait(lock, [&] { return d_stop || !d_queue.empty(); });
                if (d_stop)
                    return;
                j = std::move(d_queue.front());
                d_queue.pop_front();
            }
            const unsigned slot = j->slots.fetch_add(1);
            if (slot < j->max_slots)
                j->drain(slot);
        }
    }

    void stop_workers()
    {
        {
            std::lock_guard<std::mutex> lock(d_m);
            d_stop = true;
            d_queue.clear(); // a queued job's caller drains what no worker took
        }
        d_wake.notify_all();
        for (auto& t : d_workers)
            t.join();
        d_workers.clear();
    }

    std::mutex d_resize;
    std::mutex d_m;
    std::condition_variable d_wake;
    std::deque<std::shared_ptr<job>> d_queue;
    std::vector<std::thread> d_workers;
    std::atomic<int> d_size{ 1 };
    bool d_stop = false;
};

} // namespace

void parallel_rows(std::size_t n, std::size_t grain, unsigned max_slots, const row_fn& fn)
{
    row_pool::instance().run(n, grain, std::max(1u, max_slots), fn);
}

} // namespace detail

void set_cpu_threads(int n)
{
    if (n < 1 || n > max_cpu_threads)
        detail::throw_invalid("cpu_threads",
                              "cpu_threads",
                              "in [1, " + std::to_string(max_cpu_threads) + "]",
                              n);
    const int cores = cpu_cores();
    if (n > cores) // kept as asked (tests, a mask widened later); said once per call
        std::fprintf(stderr,
                     "gpuradar: cpu_threads %d is more than the %d core(s) this process "
                     "may run on: the pool's threads will take turns on them\n",
                     n,
                     cores);
    detail::row_pool::instance().resize(n);
}

int cpu_cores()
{
#if defined(__linux__)
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
#endif
    return int(std::max(1u, std::thread::hardware_concurrency()));
}

int cpu_threads() { return detail::row_pool::instance().size(); }

} // namespace gpuradar::kernels
