/* ECA-B internals shared by the neutral front (clutter_cancel.cc) and the backends
 * (internal). */
#ifndef INCLUDED_GPURADAR_KERNELS_CLUTTER_CANCEL_BACKENDS_H
#define INCLUDED_GPURADAR_KERNELS_CLUTTER_CANCEL_BACKENDS_H

#include <gpuradar/kernels/passive/clutter_cancel.h>
#include <cstddef>
#include <memory>

namespace gpuradar::kernels::detail {

//! ECA-B's columns at most (ntaps, or 3 ntaps with Doppler taps): a system of 4096
//! unknowns is far beyond any clutter extent a passive radar cancels, keeps one batch's
//! normal matrix at 256 MiB in double, and fits the CUDA solve's shared memory.
constexpr std::size_t eca_max_columns = 4096;

//! The loading of a singular batch's system, relative to its mean diagonal: small
//! enough to leave a well-posed fit as it was, large enough for float's Cholesky.
constexpr double eca_fallback_loading = 1e-6;

//! The Doppler shift (bins of 1/N) of column c: columns are K delays per shift, shifts
//! 0 (no Doppler taps) or -1, 0, +1.
inline int eca_column_shift(std::size_t c, std::size_t ntaps, bool doppler_taps)
{
    return doppler_taps ? static_cast<int>(c / ntaps) - 1 : 0;
}

std::unique_ptr<clutter_cancel> make_clutter_cancel_cpu(const clutter_cancel_params& p);
#ifdef GPURADAR_HAVE_CUDA
std::unique_ptr<clutter_cancel> make_clutter_cancel_cuda(const clutter_cancel_params& p,
                                                         stream_ref s);
#endif

} // namespace gpuradar::kernels::detail

#endif
