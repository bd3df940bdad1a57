/* doppler_filter: parameter checks, the weight table, dispatch. */
#include "common/dft_tables.h"
#include "common/factories.h"
#include "common/param_check.h"
#include "pulse_doppler/doppler_filter_backends.h"
#include <gpuradar/kernels/common/buffer_size.h>
#include <cmath>
#include <string>

namespace gpuradar::kernels {

namespace {
constexpr const char* who = "doppler_filter";
} // namespace

doppler_filter::mti_mode doppler_filter::parse_mti(const std::string& name)
{
    if (name == "none")
        return mti_mode::none;
    if (name == "two_pulse")
        return mti_mode::two_pulse;
    if (name == "three_pulse")
        return mti_mode::three_pulse;
    detail::throw_invalid(
        who, "mti", "one of none, two_pulse, three_pulse", "'" + name + "'");
}

const char* doppler_filter::to_string(mti_mode m)
{
    return m == mti_mode::none        ? "none"
           : m == mti_mode::two_pulse ? "two_pulse"
                                      : "three_pulse";
}

std::size_t doppler_filter::mti_order(mti_mode m)
{
    return m == mti_mode::none ? 0 : m == mti_mode::two_pulse ? 1 : 2;
}

doppler_filter::doppler_filter(std::size_t npulses,
                               std::size_t rows,
                               std::size_t nfft,
                               mti_mode mti,
                               const window_spec& window,
                               bool fftshift)
    : d_npulses(npulses),
      d_rows(rows),
      d_nfft(nfft),
      d_mti(mti),
      d_window(window),
      d_fftshift(fftshift)
{
}

std::vector<cfloat> doppler_filter::make_weights() const
{
    return detail::doppler_weights(d_window, mti_output_length(), d_nfft, d_fftshift);
}

void doppler_filter::check_npulses(std::size_t npulses, mti_mode mti, const char* stage)
{
    const std::size_t min_pulses = mti_order(mti) + (mti == mti_mode::none ? 2 : 1);
    if (npulses < min_pulses)
        detail::throw_invalid(stage,
                              "npulses",
                              ">= " + std::to_string(min_pulses) +
                                  (mti == mti_mode::none
                                       ? std::string()
                                       : std::string(" with mti ") + to_string(mti)),
                              npulses);
}

void doppler_filter::validate(std::size_t npulses,
                              std::size_t rows,
                              std::size_t nfft,
                              mti_mode mti,
                              const window_spec& window)
{
    check_npulses(npulses, mti, who);
    if (rows < 1)
        detail::throw_invalid(who, "rows", ">= 1", rows);
    if (nfft < npulses)
        detail::throw_invalid(
            who, "nfft", ">= npulses (" + std::to_string(npulses) + ")", nfft);
    window.validate(who);
    // Also keeps nfft within the int lengths of cuFFT and FFTW.
    check_buffer_size(who,
                      { { "rows", rows }, { "nfft", nfft } },
                      sizeof(cfloat),
                      "the Doppler bins of one run()");
}

std::unique_ptr<doppler_filter> doppler_filter::make(backend b,
                                                     std::size_t npulses,
                                                     std::size_t rows,
                                                     std::size_t nfft,
                                                     mti_mode mti,
                                                     const window_spec& window,
                                                     bool fftshift,
                                                     stream_ref stream)
{
    validate(npulses, rows, nfft, mti, window);
    detail::require_backend(b, who);
#ifdef GPURADAR_HAVE_CUDA
    if (b == backend::cuda)
        return detail::make_doppler_filter_cuda(
            npulses, rows, nfft, mti, window, fftshift, stream);
#else
    (void)stream;
#endif
    return detail::make_doppler_filter_cpu(npulses, rows, nfft, mti, window, fftshift);
}

} // namespace gpuradar::kernels
