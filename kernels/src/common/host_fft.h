/*
 * A forward FFT of one host array, for the setup a stage does on either backend (a
 * reference spectrum, a table) (internal). The interface is backend-neutral so that the
 * neutral layer (the .cc files directly under kernels/src/<domain>/) can use it without
 * a cpu/ header; FFTW, the host FFT of both backends, sits behind it in
 * common/cpu/host_fft.cc.
 */
#ifndef INCLUDED_GPURADAR_KERNELS_HOST_FFT_H
#define INCLUDED_GPURADAR_KERNELS_HOST_FFT_H

#include <gpuradar/kernels/common/backend.h>
#include <vector>

namespace gpuradar::kernels::detail {

/*!
 * x becomes its unnormalised forward DFT, X[f] = sum_t x[t] exp(-2 pi i f t / n) with
 * n = x.size() (single precision, FFTW). `who` names the stage in a planning error.
 */
void host_fft_forward(std::vector<cfloat>& x, const char* who);

} // namespace gpuradar::kernels::detail

#endif
