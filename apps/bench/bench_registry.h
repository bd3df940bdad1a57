/*
 * gpuradar_bench: each stage adds its measurements in its own bench_<stage>.cc with
 * GPURADAR_BENCH("name") { ... }. Every measurement prints one JSON line on stdout.
 * bench_registry.cc defines what this declares; gpuradar_bench.cc holds only main().
 */
#ifndef INCLUDED_GPURADAR_BENCH_REGISTRY_H
#define INCLUDED_GPURADAR_BENCH_REGISTRY_H

#include <gpuradar/kernels/common/cuda_resources.h>
#include <cstdio>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

namespace gpuradar::bench {

//! The GNU Radio benchmarks' replay source (host_replay_source), tuned for A/B runs.
struct source_tuning {
    unsigned copy_threads = 0; //!< memcpy threads; 0: half the cores, at most 8
    unsigned buffer_cpis = 2;  //!< CPIs its output buffer holds
    //! Note when each CPI left (latency figures); off for runs of unbounded length,
    //! whose list would grow with every CPI (the soak).
    bool record_cpi_ends = true;
};

//! The command line of gpuradar_bench (see its --help).
struct options {
    bool quick = false;   //!< smaller sizes and fewer repeats (CI smoke run)
    int repeats = 50;     //!< timed repetitions; the median is reported
    std::string workload; //!< only this PD workload where a benchmark says so; "": all
    std::string backend;  //!< only this backend where a benchmark says so; "": all
    std::string input;    //!< e2e benches: only fc32 or only sc16 host samples; "": both
    source_tuning source;
};

struct bench_case {
    std::string name;
    std::function<void(const options&)> run;
};

std::vector<bench_case>& registry();

struct registrar {
    registrar(const char* name, std::function<void(const options&)> fn)
    {
        registry().push_back({ name, std::move(fn) });
    }
};

//! Builds one JSON object; emit() prints it as one line and flushes.
class json_line
{
public:
    explicit json_line(const std::string& bench) { field("bench", bench); }
    json_line& field(const std::string& key, const std::string& value)
    {
        sep();
        d_s << '"' << key << "\":\"" << value << '"';
        return *this;
    }
    json_line& field(const std::string& key, const char* value)
    {
        return field(key, std::string(value));
    }
    json_line& field(const std::string& key, double value)
    {
        sep();
        d_s << '"' << key << "\":" << value;
        return *this;
    }
    json_line& field(const std::string& key, long long value)
    {
        sep();
        d_s << '"' << key << "\":" << value;
        return *this;
    }
    json_line& field(const std::string& key, bool value)
    {
        sep();
        d_s << '"' << key << "\":" << (value ? "true" : "false");
        return *this;
    }
    void emit() const
    {
        std::printf("{%s}\n", d_s.str().c_str());
        std::fflush(stdout);
    }

private:
    void sep()
    {
        if (d_first)
            d_first = false;
        else
            d_s << ',';
    }
    std::ostringstream d_s;
    bool d_first = true;
};

//! Median of a sample (copies; benchmark-sized vectors only).
double median(std::vector<double> v);

//! Warm-up calls before timing: module load, cuFFT's first launches and allocator
//! growth stay out of the figures.
constexpr int warmup_calls = 3;

/*!
 * Median milliseconds of one call of f on stream s: warmup_calls untimed calls, then
 * `repeats` calls each between two CUDA events (waited for, so calls do not overlap).
 */
template <typename F>
double time_ms(const kernels::cuda_stream& s, int repeats, F&& f)
{
    kernels::cuda_event a, b;
    for (int i = 0; i < warmup_calls; ++i)
        f();
    std::vector<double> t;
    for (int i = 0; i < repeats; ++i) {
        a.record(s.ref());
        f();
        b.record(s.ref());
        b.synchronize();
        t.push_back(kernels::cuda_event::elapsed_ms(a, b));
    }
    return median(t);
}

} // namespace gpuradar::bench

#define GPURADAR_BENCH_CAT2(a, b) a##b
#define GPURADAR_BENCH_CAT(a, b) GPURADAR_BENCH_CAT2(a, b)
#define GPURADAR_BENCH(name)                                                      \
    static void GPURADAR_BENCH_CAT(bench_fn_,                                     \
                                   __LINE__)(const ::gpuradar::bench::options&);  \
    static ::gpuradar::bench::registrar GPURADAR_BENCH_CAT(bench_reg_, __LINE__)( \
        name, GPURADAR_BENCH_CAT(bench_fn_, __LINE__));                           \
    static void GPURADAR_BENCH_CAT(bench_fn_, __LINE__)(                          \
        [[maybe_unused]] const ::gpuradar::bench::options& opt)

#endif
