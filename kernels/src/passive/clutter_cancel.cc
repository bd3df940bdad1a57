/* ECA-B clutter cancellation: parameter checks and backend dispatch. */
#include "common/factories.h"
#include "common/param_check.h"
#include "passive/channel_lengths.h"
#include "passive/clutter_cancel_backends.h"
#include <cmath>
#include <string>

namespace gpuradar::kernels {

namespace {

template <typename V>
[[noreturn]] void bad(const char* param, const std::string& constraint, const V& got)
{
    detail::throw_invalid("clutter_cancel", param, constraint, got);
}

//! cuBLAS and cuSOLVER take int sizes; a CPI of 2^28 samples is 2 GiB a channel.
constexpr std::size_t max_nsamples = std::size_t(1) << 28;
//! Elements of the normal matrices of all batches, held at once (batched solve): 2^27
//! is 2 GiB in double.
constexpr std::size_t max_normal_elements = std::size_t(1) << 27;

} // namespace

void clutter_cancel::validate(const clutter_cancel_params& p)
{
    if (p.nsamples < 1 || p.nsamples > max_nsamples)
        bad("nsamples", "in [1, " + std::to_string(max_nsamples) + "]", p.nsamples);
    if (p.nsurv < 1 || p.nsurv > max_nsurv)
        bad("nsurv",
            "in [1, " + std::to_string(max_nsurv) + "] surveillance channels",
            p.nsurv);
    if (p.method == cancel_method::nlms) {
        if (p.ntaps < 1 || p.ntaps > p.nsamples)
            bad("ntaps",
                "in [1, nsamples = " + std::to_string(p.nsamples) +
                    "] (NLMS: the reference history kept is one CPI)",
                p.ntaps);
        if (p.doppler_taps)
            bad("doppler_taps", "false with method nlms (ECA-B only)", "true");
        if (!(p.nlms_step > 0.0 && p.nlms_step < 2.0))
            bad("nlms_step", "in (0, 2) (NLMS is stable there)", p.nlms_step);
        if (p.nlms_block < 1 || p.nsamples % p.nlms_block != 0)
            bad("nlms_block",
                "a divisor of nsamples = " + std::to_string(p.nsamples) + " (>= 1)",
                p.nlms_block);
        return;
    }
    if (p.nbatches < 1 || p.nsamples % p.nbatches != 0)
        bad("nbatches",
            "a divisor of nsamples = " + std::to_string(p.nsamples) + " (>= 1)",
            p.nbatches);
    const std::size_t l = p.nsamples / p.nbatches;
    const std::size_t per_tap = p.doppler_taps ? 3 : 1;
    const std::string what =
        p.doppler_taps ? "3 x ntaps columns with Doppler taps" : "ntaps columns";
    if (p.ntaps < 1 || p.ntaps * per_tap > l)
        bad("ntaps",
            "in [1, " + std::to_string(l / per_tap) + "] (" + what + " <= the " +
                std::to_string(l) +
                " samples per batch, nsamples / nbatches: more would fit anything)",
            p.ntaps);
    const std::size_t k = columns(p);
    if (k > detail::eca_max_columns)
        bad("ntaps",
            "in [1, " + std::to_string(detail::eca_max_columns / per_tap) + "] (" + what +
                " <= " + std::to_string(detail::eca_max_columns) + ")",
            p.ntaps);
    if (p.nbatches * k * k > max_normal_elements)
        bad("ntaps",
            "at most " +
                std::to_string(static_cast<std::size_t>(
                    std::sqrt(double(max_normal_elements / p.nbatches)) / per_tap)) +
                " with nbatches = " + std::to_string(p.nbatches) + " (nbatches x (" +
                what + ")^2 <= 2^27: the batches' normal matrices are held at once)",
            p.ntaps);
    if (!(p.diagonal_loading >= 0.0) || !std::isfinite(p.diagonal_loading))
        bad("diagonal_loading", ">= 0 and finite", p.diagonal_loading);
}

std::unique_ptr<clutter_cancel>
clutter_cancel::make(backend b, const clutter_cancel_params& p, stream_ref stream)
{
    validate(p);
    detail::require_backend(b, "clutter_cancel");
#ifdef GPURADAR_HAVE_CUDA
    if (b == backend::cuda)
        return detail::make_clutter_cancel_cuda(p, stream);
#endif
    (void)stream;
    return detail::make_clutter_cancel_cpu(p);
}

clutter_cancel_result
clutter_cancel::run(const cfloat* reference, const cfloat* surveillance, cfloat* out)
{
    if (d_params.nsurv != 1)
        bad("nsurv",
            "1 for run() (one channel; run_channels() takes several)",
            d_params.nsurv);
    clutter_cancel_result res;
    run_channels(reference, &surveillance, &out, &res);
    return res;
}

clutter_cancel_result clutter_cancel::run(const cfloat* reference,
                                          std::size_t reference_length,
                                          const cfloat* surveillance,
                                          std::size_t surveillance_length,
                                          cfloat* out)
{
    detail::check_channel_lengths(
        "clutter_cancel", d_params.nsamples, reference_length, surveillance_length);
    return run(reference, surveillance, out);
}

} // namespace gpuradar::kernels
