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

// Pulse compression, forward plan: the zero-padded row, read straight from the pulses
// (dataIn = the caller's input, row stride nrange).
__device__ cufftComplex gpuradar_pc_load_pad(void* dataIn,
                                             unsigned long long offset,
                                             void* info,
                                             void*)
{
    const auto* p = static_cast<const gpuradar_pc_cb_params*>(info);
    const unsigned off = static_cast<unsigned>(offset);
    const unsigned row = off / p->nfft;
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
    const unsigned n = static_cast<unsigned>(offset) % p->nfft;
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
    const unsigned row = off / p->nfft;
    const unsigned n = off - row * p->nfft;
    if (n < p->nrange)
        static_cast<cufftComplex*>(
            p->out)[static_cast<unsigned long long>(row) * p->nrange + n] = e;
}

// Doppler plan's load: canceller, window and fftshift modulation on the strided
// (pulse-major) input; zero past the m cancelled samples.
__device__ cufftComplex gpuradar_df_load(void* dataIn,
                                         unsigned long long offset,
                                         void* info,
                                         void*)
{
    const auto* p = static_cast<const gpuradar_df_cb_params*>(info);
    const unsigned off = static_cast<unsigned>(offset);
    const unsigned n = off / p->cr;
    if (n >= p->m)
        return make_cuFloatComplex(0.0f, 0.0f);
    const auto* x = static_cast<const cufftComplex*>(dataIn);
    cufftComplex v = x[off];
    if (p->order == 1) {
        const cufftComplex b = x[off + p->cr];
        v = make_cuFloatComplex(b.x - v.x, b.y - v.y);
    } else if (p->order == 2) {
        const cufftComplex b = x[off + p->cr], c = x[off + 2u * p->cr];
        v = make_cuFloatComplex(fmaf(-2.0f, b.x, v.x + c.x), fmaf(-2.0f, b.y, v.y + c.y));
    }
    const cufftComplex w = __ldg(static_cast<const cufftComplex*>(p->weights) + n);
    return make_cuFloatComplex(fmaf(v.x, w.x, -v.y * w.y), fmaf(v.x, w.y, v.y * w.x));
}

// Doppler plan's store: the envelope of Y into the range-major power map.
__device__ void gpuradar_df_store_power(void*,
                                        unsigned long long offset,
                                        cufftComplex e,
                                        void* info,
                                        void*)
{
    const auto* p = static_cast<const gpuradar_df_cb_params*>(info);
    const unsigned off = static_cast<unsigned>(offset);
    unsigned dst = off;
    if (p->channels != 1) {
        const unsigned b = off / p->nfft;
        const unsigned k = off - b * p->nfft;
        const unsigned c = b / p->nrange;
        const unsigned r = b - c * p->nrange;
        dst = (r * p->channels + c) * p->nfft + k;
    }
    const float pw = fmaf(e.x, e.x, e.y * e.y);
    float v;
    if (p->env_db)
        v = 10.0f * log10f(pw);
    else
        v = p->env_linear ? sqrtf(pw) : pw;
    static_cast<float*>(p->power)[dst] = v;
}
