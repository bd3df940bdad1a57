/*
 * gpuradar_soak: long runs through the GNU Radio blocks that fail when memory grows.
 *
 *   gpuradar_soak [--backend auto|cuda|cpu] [--cpis N] [--apertures M] [--cycles K] ...
 *
 * Three phases (apps/soak/soak_phases.h): N CPIs of a PD workload through pulse_framer ->
 * pulse_doppler_processor -> cfar_2d, M SAR apertures through backprojection, K
 * flowgraph build / start / stop / destroy cycles. Prints JSON lines (memory samples and
 * one summary per phase, as gpuradar_bench does); exits 1 when a phase's memory grew
 * after warm-up beyond its bound or its output was wrong, 2 on bad arguments, 3 when a
 * phase hung.
 */
#include "soak/soak_phases.h"
#include <gpuradar/kernels/common/backend.h>
#include <cerrno>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <sstream>
#include <string>

namespace {

using gpuradar::soak::soak_options;

constexpr const char* usage =
    "usage: gpuradar_soak [--backend auto|cuda|cpu] [--cpis N] [--apertures M]\n"
    "                     [--cycles K] [--cycle-cpis C] [--workload PD-B|PD-C]\n"
    "                     [--samples S] [--warmup-fraction F] [--rss-bound-mib B]\n"
    "                     [--device-bound-mib B] [--phase-timeout SECONDS]\n"
    "                     [--copy-threads T] [--leak-kib-per-aperture L]\n"
    "Runs N CPIs (default 100000) of the workload (PD-C) through pulse_framer ->\n"
    "pulse_doppler_processor -> cfar_2d, M SAR apertures (1000) through backprojection\n"
    "and K flowgraph start/stop cycles (100) of C CPIs each (3); 0 skips a phase.\n"
    "Samples host RSS and (cuda) device memory in use about S times a phase (50) and\n"
    "fails (exit 1) when either grows by more than its bound (32 MiB each) after the\n"
    "first F of the phase (0.1; at least 4 CPIs, apertures or cycles), or an output\n"
    "check fails; exit 3: a phase took longer than its timeout (900 s).\n"
    "--leak-kib-per-aperture leaks host memory on purpose (a self-test of the bound).\n";

[[noreturn]] void bad_argument(const std::string& what)
{
    std::cerr << "gpuradar_soak: " << what << "\n" << usage;
    std::exit(2);
}

std::uint64_t count_value(const std::string& name, const char* text, std::uint64_t min)
{
    char* end = nullptr;
    errno = 0;
    const unsigned long long v = std::strtoull(text, &end, 10);
    if (errno || end == text || *end || text[0] == '-' || v < min)
        bad_argument(name + " must be an integer >= " + std::to_string(min) + ", got '" +
                     text + "'");
    return v;
}

double real_value(const std::string& name, const char* text, double lo, double hi)
{
    char* end = nullptr;
    const double v = std::strtod(text, &end);
    if (end == text || *end || !(v >= lo && v <= hi)) {
        std::ostringstream range;
        range << '[' << lo << ", " << hi << ']';
        bad_argument(name + " must be a number in " + range.str() + ", got '" + text +
                     "'");
    }
    return v;
}

std::string resolve_backend(const std::string& backend)
{
    if (backend == "auto")
        return gpuradar::kernels::cuda_available() ? "cuda" : "cpu";
    if (backend == "cuda" && !gpuradar::kernels::cuda_available())
        bad_argument("--backend cuda: no usable CUDA device (" +
                     gpuradar::kernels::cuda_unavailable_reason() + ")");
    if (backend != "cpu" && backend != "cuda")
        bad_argument("--backend must be auto, cuda or cpu, got '" + backend + "'");
    return backend;
}

soak_options parse(int argc, char** argv)
{
    soak_options opt;
    std::string backend = "auto";
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--help" || arg == "-h") {
            std::cout << usage;
            std::exit(0);
        }
        if (i + 1 >= argc)
            bad_argument("unknown option or missing value: " + arg);
        const char* v = argv[++i];
        if (arg == "--backend")
            backend = v;
        else if (arg == "--cpis")
            opt.cpis = count_value(arg, v, 0);
        else if (arg == "--apertures")
            opt.apertures = count_value(arg, v, 0);
        else if (arg == "--cycles")
            opt.cycles = count_value(arg, v, 0);
        else if (arg == "--cycle-cpis")
            opt.cycle_cpis = count_value(arg, v, 1);
        else if (arg == "--workload") {
            opt.workload = v;
            if (opt.workload != "PD-B" && opt.workload != "PD-C")
                bad_argument("--workload must be PD-B or PD-C (one channel), got '" +
                             opt.workload + "'");
        } else if (arg == "--samples")
            opt.samples_per_phase = count_value(arg, v, 2);
        else if (arg == "--warmup-fraction")
            opt.warmup_fraction = real_value(arg, v, 0.0, 0.9);
        else if (arg == "--rss-bound-mib")
            opt.bounds.rss_bytes = (long long)(real_value(arg, v, 0, 1e6) * (1 << 20));
        else if (arg == "--device-bound-mib")
            opt.bounds.device_bytes = (long long)(real_value(arg, v, 0, 1e6) * (1 << 20));
        else if (arg == "--phase-timeout")
            opt.phase_timeout_s = real_value(arg, v, 1, 1e6);
        else if (arg == "--copy-threads")
            opt.source.copy_threads = unsigned(count_value(arg, v, 1));
        else if (arg == "--leak-kib-per-aperture")
            opt.leak_kib_per_aperture = count_value(arg, v, 0);
        else
            bad_argument("unknown option: " + arg);
    }
    opt.backend = resolve_backend(backend);
    return opt;
}

} // namespace

int main(int argc, char** argv)
{
    const soak_options opt = parse(argc, argv);
    bool ok = true;
    try {
        if (opt.cpis > 0)
            ok &= gpuradar::soak::run_cpis(opt);
        if (opt.apertures > 0)
            ok &= gpuradar::soak::run_apertures(opt);
        if (opt.cycles > 0)
            ok &= gpuradar::soak::run_cycles(opt);
    } catch (const std::exception& e) {
        gpuradar::bench::json_line("soak").field("error", e.what()).emit();
        return 1;
    }
    gpuradar::bench::json_line("soak").field("summary", true).field("ok", ok).emit();
    return ok ? 0 : 1;
}
