/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The CPU twins plan FFTW inside work() when a block takes a new waveform; FFTW's planner
 * is one per process, so they must hold the mutex GNU Radio's own FFT blocks hold. This
 * installs gr::fft::planner::mutex() for them when the library is loaded, before any
 * block (and so any plan) exists. */
#include <gnuradio/fft/fft.h>
#include <gpuradar/kernels/common/fftw_planner.h>

namespace gr {
namespace gpuradar {
namespace {

const bool planner_lock_installed =
    (::gpuradar::kernels::set_fftw_planner_mutex(gr::fft::planner::mutex()), true);

} // namespace
} // namespace gpuradar
} // namespace gr
