/* host_fft_forward (common/host_fft.h) on FFTW. */
#include "common/cpu/fftw_plan.h"
#include "common/host_fft.h"
#include "common/param_check.h"
#include <algorithm>
#include <limits>

namespace gpuradar::kernels::detail {

void host_fft_forward(std::vector<cfloat>& x, const char* who)
{
    if (x.empty())
        return;
    if (x.size() > std::size_t(std::numeric_limits<int>::max()))
        throw_invalid(who, "fft_length", "<= 2^31 - 1", x.size()); // FFTW takes int
    const int n = static_cast<int>(x.size());
    // An FFTW-aligned scratch copy: the transform runs as on the arrays FFTW allocates.
    auto buf = fftwf_alloc(x.size());
    std::copy(x.begin(), x.end(), buf.get());
    fftwf_plan_1d plan(n, 1, 1, n, FFTW_FORWARD, true, who);
    plan.execute(buf.get(), buf.get());
    std::copy(buf.get(), buf.get() + x.size(), x.begin());
}

} // namespace gpuradar::kernels::detail
