/* The lock around FFTW's planner (FFTW's planner is one per process and not thread-safe).
 */
#ifndef INCLUDED_GPURADAR_KERNELS_FFTW_PLANNER_H
#define INCLUDED_GPURADAR_KERNELS_FFTW_PLANNER_H

#include <mutex>

namespace gpuradar::kernels {

/*!
 * Makes every FFTW plan the CPU twins make or destroy (in their constructors and when a
 * new waveform is installed, which can happen inside a block's work()) hold `m` instead
 * of the library's own mutex. The GNU Radio blocks pass gr::fft::planner::mutex(), so
 * that the twins never plan at the same time as GNU Radio's FFT blocks. Call it before
 * any plan exists (the GNU Radio library does when it is loaded).
 */
void set_fftw_planner_mutex(std::mutex& m);

//! The mutex FFTW planning holds now.
std::mutex& fftw_planner_mutex();

} // namespace gpuradar::kernels

#endif
