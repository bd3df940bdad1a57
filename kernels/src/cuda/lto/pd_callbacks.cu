/*
 * cuFFT LTO callbacks of the pulse-Doppler chain. NOT part of the library build (the
 * kernels glob takes src/cuda/*.cu only): generate.sh compiles this file to LTO-IR and
 * writes pd_callbacks_fatbin.h, which the library embeds and hands to
 * cufftXtSetJITCallback at plan creation. Re-run generate.sh after editing this file.
 *
 * Offsets are below 2^32 (the host only takes the callback path when the plan's element
 * count fits), so the index arithmetic is 32-bit.
 */
#include "pd_callbacks_params.h"
#include <cufftXt.h>

// offset / nfft by multiply and shifts (see pd_callbacks_params.h).
__device__ __forceinline__ unsigned row_of(unsigned off, const gpuradar_pc_cb_params* p)
{
    const unsigned t = __umulhi(off, p->div_magic);
    return (t + ((off - t) >> p->div_shift1)) >> p->div_shift2;
}

// Pulse compression, forward plan: the zero-padded row, read straight from the pulses
// (dataIn = the caller's input, row stride nrange).
__device__ cufftComplex gpuradar_pc_load_pad(void* dataIn,
                                             unsigned long long offset,
                                             void* info,
                                             void*)
{
    const auto* p = static_cast<const gpuradar_pc_cb_params*>(info);
    const unsigned off = static_cast<unsigned>(offset);
    const unsigned row = row_of(off, p);
    const unsigned n = off - row * p->nfft;
    if (n >= p->nrange)
        return make_cuFloatComplex(0.0f, 0.0f);
    return static_cast<const cufftComplex*>(
        dataIn)[static_cast<unsigned long long>(row) * p->nrange + n];
}

// Forward plan's store: the spectrum product (the matched filter) on the way out.
__device__ void gpuradar_pc_store_multiply(void* dataOut,
                                           unsigned long long offset,
                                           cufftComplex e,
                                           void* info,
                                           void*)
{
    const auto* p = static_cast<const gpuradar_pc_cb_params*>(info);
    const unsigned off = static_cast<unsigned>(offset);
    const unsigned n = off - row_of(off, p) * p->nfft;
    const cufftComplex h = __ldg(static_cast<const cufftComplex*>(p->spectrum) + n);
    static_cast<cufftComplex*>(dataOut)[offset] =
        make_cuFloatComplex(fmaf(e.x, h.x, -e.y * h.y), fmaf(e.x, h.y, e.y * h.x));
}

// Inverse plan's store: only the first nrange bins of a row, into the caller's output.
__device__ void gpuradar_pc_store_strip(void*,
                                        unsigned long long offset,
                                        cufftComplex e,
                                        void* info,
                                        void*)
{
    const auto* p = static_cast<const gpuradar_pc_cb_params*>(info);
    const unsigned off = static_cast<unsigned>(offset);
    const unsigned row = row_of(off, p);
    const unsigned n = off - row * p->nfft;
    if (n < p->nrange)
        static_cast<cufftComplex*>(
            p->out)[static_cast<unsigned long long>(row) * p->nrange + n] = e;
}
