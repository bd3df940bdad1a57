#include "../bench/bench_pd_flowgraph.h"
#include "soak_blocks.h"
#include "soak_phases.h"
#include <gnuradio/blocks/head.h>
#include <gnuradio/blocks/null_sink.h>
#include <gnuradio/blocks/vector_source.h>
#include <gnuradio/gpuradar/backprojection.h>
#include <condition_variable>
#include <gpuradar/kernels/sar/sar_sim.h>
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>

namespace gpuradar::soak {
namespace {

namespace grr = gr::gpuradar;
namespace sim = kernels::sar_sim;
using bench::json_line;
using bench::pd::clock_type;
constexpr double mib = 1024.0 * 1024.0;

/*!
 * Ends the process (status 3, one JSON line naming the phase) when a phase outlives its
 * time limit: a hung flowgraph must fail the soak, not stall it.
 */
class watchdog
{
public:
    watchdog(const std::string& phase, double seconds)
        : d_thread([this, phase, seconds] {
              std::unique_lock<std::mutex> lock(d_mutex);
              const auto limit = std::chrono::duration<double>(seconds);
              if (!d_done_cv.wait_for(lock, limit, [this] { return d_done; })) {
                  json_line("soak")
                      .field("phase", phase)
                      .field("error", "hung: the phase outlived --phase-timeout")
                      .field("timeout_s", seconds)
                      .emit();
                  std::_Exit(3);
              }
          })
    {
    }
    ~watchdog()
    {
        {
            std::lock_guard<std::mutex> lock(d_mutex);
            d_done = true;
        }
        d_done_cv.notify_one();
        d_thread.join();
    }

private:
    std::mutex d_mutex;
    std::condition_variable d_done_cv;
    bool d_done = false;
    std::thread d_thread; // last: starts once the members above exist
};

const bench::pd::workload& find_workload(const std::string& name)
{
    for (const auto& w : bench::pd::workloads())
        if (w.name == name)
            return w;
    throw std::invalid_argument("gpuradar_soak: unknown workload " + name);
}

//! Units of progress (CPIs, apertures, cycles) always left out of the baseline: each
//! buffer of the flowgraph is touched in full only after its first wrap, a few CPIs in.
constexpr std::uint64_t min_warmup = 4;

phase_memory make_memory(const soak_options& opt, const char* phase, std::uint64_t total)
{
    const std::uint64_t every = std::max<std::uint64_t>(1, total / opt.samples_per_phase);
    const auto warmup = std::max<std::uint64_t>(
        min_warmup, static_cast<std::uint64_t>(opt.warmup_fraction * double(total)));
    return phase_memory(phase, opt.backend == "cuda", every, warmup);
}

//! Prints the phase's summary line (with `checks` added) and returns whether it passed.
bool summarize(const phase_memory& mem,
               const soak_options& opt,
               std::uint64_t done,
               bool output_ok,
               const std::function<void(json_line&)>& checks)
{
    const auto g = mem.growth();
    const bool memory_ok = g.within(opt.bounds);
    json_line line("soak");
    line.field("phase", mem.phase())
        .field("summary", true)
        .field("backend", opt.backend)
        .field("done", static_cast<long long>(done))
        .field("warmup", static_cast<long long>(mem.warmup()))
        .field("warm_samples", static_cast<long long>(g.warm_samples))
        .field("rss_growth_mib", double(g.rss_bytes) / mib)
        .field("rss_bound_mib", double(opt.bounds.rss_bytes) / mib);
    if (opt.backend == "cuda")
        line.field("device_growth_mib", double(g.device_bytes) / mib)
            .field("device_bound_mib", double(opt.bounds.device_bytes) / mib);
    checks(line);
    line.field("memory_ok", memory_ok).field("output_ok", output_ok);
    line.field("ok", memory_ok && output_ok).emit();
    return memory_ok && output_ok;
}

//! The cpis flowgraph: host source -> PD chain -> sink, detections -> counter.
struct pd_flowgraph {
    gr::top_block_sptr tb = gr::make_top_block("soak_pd");
    std::shared_ptr<bench::pd::host_replay_source> source;
    bench::pd::pd_chain chain;
    std::shared_ptr<detection_counter> counter;

    pd_flowgraph(const soak_options& opt,
                 const bench::pd::workload& w,
                 const std::vector<bench::pd::cfloat>& samples,
                 std::uint64_t total_cpis,
                 progress_fn on_cpi)
        : chain(w, opt.backend)
    {
        const std::uint64_t cpi_samples = w.npulses * w.nrange;
        auto tuning = opt.source;
        tuning.record_cpi_ends = false;
        source = gnuradio::make_block_sptr<bench::pd::host_replay_source>(
            samples, total_cpis * cpi_samples, cpi_samples, tuning);
        counter = gnuradio::make_block_sptr<detection_counter>(bench::pd::scene_targets,
                                                               std::move(on_cpi));
        const auto cfar = chain.connect(tb, source);
        const auto nfft = static_cast<std::size_t>(w.npulses);
        if (opt.backend == "cuda")
            tb->connect(
                cfar, 0, gnuradio::make_block_sptr<bench::pd::device_sink>(nfft), 0);
        else
            tb->connect(cfar, 0, gr::blocks::null_sink::make(nfft), 0);
        tb->msg_connect(cfar, "detections", counter, "in");
    }
};

void add_counter_checks(json_line& line, const detection_counter& c)
{
    line.field("cpis_out_of_order", static_cast<long long>(c.out_of_order()))
        .field("cpis_missing_targets", static_cast<long long>(c.short_cpis()))
        .field("detections_per_cpi",
               c.cpis() ? double(c.detections()) / double(c.cpis()) : 0.0);
}

bool counter_ok(const detection_counter& c)
{
    return c.out_of_order() == 0 && c.short_cpis() == 0;
}

//! A small X-band spotlight aperture: three point targets 2 km away, noise added.
sim::phase_history sar_aperture(std::size_t npulses)
{
    sim::radar r;
    r.nbins = 512;
    r.dr = 0.25;
    r.gate_centre = sim::vec3{ 0, 0, 0 };
    r.noise_sigma = 0.01;
    const double c0 = kernels::backprojection::speed_of_light;
    const double aperture = (c0 / r.f0) * std::hypot(2000.0, 500.0) / (2 * 0.5);
    const auto path = sim::straight_path(
        { -aperture / 2, -2000, 500 }, { aperture / 2, -2000, 500 }, npulses);
    return sim::simulate(path,
                         { { { 0.3, -0.1, 0 }, { 1.0, 0.0 } },
                           { { -5.1, 4.2, 0 }, { 0.0, 0.6 } },
                           { { 6.1, -3.5, 0 }, { 0.4, 0.0 } } },
                         r);
}

//! Whether the first image's brightest pixel is the strongest target's (within 1 px).
bool focused(const std::vector<std::complex<float>>& image,
             const kernels::image_grid& grid,
             const sim::vec3& target)
{
    if (image.empty())
        return false;
    const auto peak = std::max_element(image.begin(), image.end(), [](auto a, auto b) {
        return std::abs(a) < std::abs(b);
    });
    const auto at = static_cast<long long>(peak - image.begin());
    const auto want = sim::nearest_pixel(grid, target);
    return std::abs(at % grid.nx - want.ix) <= 1 && std::abs(at / grid.nx - want.iy) <= 1;
}

} // namespace

bool run_cpis(const soak_options& opt)
{
    const auto& w = find_workload(opt.workload);
    const auto samples = bench::pd::scene_samples(w, 2);
    auto mem = make_memory(opt, "cpis", opt.cpis);
    pd_flowgraph fg(
        opt, w, samples, opt.cpis, [&](std::uint64_t n) { mem.sample_if_due(n); });
    {
        watchdog dog("cpis", opt.phase_timeout_s);
        fg.tb->run();
    }
    const auto& c = *fg.counter;
    mem.sample(c.cpis());
    const bool output_ok =
        c.cpis() == opt.cpis && fg.chain.dropped_cpis() == 0 && counter_ok(c);
    return summarize(mem, opt, c.cpis(), output_ok, [&](json_line& line) {
        line.field("workload", w.name)
            .field("dropped_cpis", static_cast<long long>(fg.chain.dropped_cpis()));
        add_counter_checks(line, c);
    });
}

bool run_apertures(const soak_options& opt)
{
    kernels::image_grid grid;
    grid.nx = grid.ny = 128;
    grid.dx = grid.dy = 0.2;
    grid.x0 = grid.y0 = -0.2 * 64;
    constexpr unsigned pulses_per_aperture = 128;
    const auto h = sar_aperture(pulses_per_aperture);
    std::vector<std::uint8_t> geometry(h.geometry.size() * sizeof(double));
    std::memcpy(geometry.data(), h.geometry.data(), geometry.size());
    const std::uint64_t pulses = opt.apertures * pulses_per_aperture;

    auto mem = make_memory(opt, "apertures", opt.apertures);
    auto tb = gr::make_top_block("soak_sar");
    auto src = gr::blocks::vector_source_c::make(h.pulses, true, unsigned(h.nbins));
    auto geo = gr::blocks::vector_source_b::make(
        geometry, true, unsigned(grr::backprojection::geometry_length * sizeof(double)));
    auto head_pulses = gr::blocks::head::make(sizeof(gr_complex) * h.nbins, pulses);
    auto head_geo = gr::blocks::head::make(geometry.size() / h.npulses, pulses);
    auto bp = grr::backprojection::make(unsigned(h.nbins),
                                        unsigned(grid.nx),
                                        unsigned(grid.ny),
                                        grid.x0,
                                        grid.y0,
                                        grid.dx,
                                        grid.dy,
                                        grid.z,
                                        pulses_per_aperture,
                                        "restart",
                                        "fast",
                                        {},
                                        opt.backend);
    // The same pulses every aperture: every image must equal the first to float
    // rounding of a 128-pulse sum.
    std::vector<std::unique_ptr<char[]>> leaked; // --leak-kib-per-aperture only
    auto check = gnuradio::make_block_sptr<image_checker>(
        unsigned(grid.nx), unsigned(grid.ny), 1e-5, [&](std::uint64_t n) {
            if (opt.leak_kib_per_aperture > 0) {
                const std::size_t bytes = opt.leak_kib_per_aperture << 10;
                leaked.emplace_back(new char[bytes]);
                std::memset(leaked.back().get(), 1, bytes); // resident, not just reserved
            }
            mem.sample_if_due(n);
        });
    tb->connect(src, 0, head_pulses, 0);
    tb->connect(head_pulses, 0, bp, 0);
    tb->connect(geo, 0, head_geo, 0);
    tb->connect(head_geo, 0, bp, 1);
    tb->connect(bp, 0, check, 0);
    {
        watchdog dog("apertures", opt.phase_timeout_s);
        tb->run();
    }
    mem.sample(check->images());
    const bool is_focused = focused(check->first_image(), grid, h.targets[0].position);
    const bool output_ok = check->images() == opt.apertures && check->mismatched() == 0 &&
                           bp->skipped_pulses() == 0 && is_focused;
    return summarize(mem, opt, check->images(), output_ok, [&](json_line& line) {
        line.field("images_differing", static_cast<long long>(check->mismatched()))
            .field("worst_relative_error", check->worst_relative_error())
            .field("first_image_focused", is_focused);
    });
}

bool run_cycles(const soak_options& opt)
{
    const auto& w = find_workload(opt.workload);
    const auto samples = bench::pd::scene_samples(w, 2);
    auto mem = make_memory(opt, "cycles", opt.cycles);
    // Unbounded source: every cycle is stopped while samples are still flowing.
    const std::uint64_t endless = std::uint64_t(1) << 40;
    std::uint64_t failed_cycles = 0;
    watchdog dog("cycles", opt.phase_timeout_s);
    for (std::uint64_t k = 1; k <= opt.cycles; ++k) {
        {
            pd_flowgraph fg(opt, w, samples, endless, [](std::uint64_t) {});
            fg.tb->start();
            while (fg.counter->cpis() < opt.cycle_cpis)
                std::this_thread::sleep_for(std::chrono::milliseconds(2));
            fg.tb->stop();
            fg.tb->wait();
            if (!counter_ok(*fg.counter) || fg.chain.dropped_cpis() != 0)
                ++failed_cycles;
        }
        mem.sample_if_due(k);
    }
    mem.sample(opt.cycles);
    return summarize(mem, opt, opt.cycles, failed_cycles == 0, [&](json_line& line) {
        line.field("workload", w.name)
            .field("cpis_per_cycle", static_cast<long long>(opt.cycle_cpis))
            .field("failed_cycles", static_cast<long long>(failed_cycles));
    });
}

} // namespace gpuradar::soak
