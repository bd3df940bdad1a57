/*
 * Parameter blocks of the cuFFT LTO callbacks in pd_callbacks.cu (internal). Shared by
 * the callback source (compiled to LTO-IR by generate.sh) and the host code that fills
 * them (pulse_compression_cuda.cu): plain C layout, no includes,
 * so that both compilers agree on it. A device copy of one block is the callback's
 * callerInfo; pointers that change between run() calls are written into it on the stream.
 */
#ifndef INCLUDED_GPURADAR_KERNELS_PD_CALLBACKS_PARAMS_H
#define INCLUDED_GPURADAR_KERNELS_PD_CALLBACKS_PARAMS_H

//! Pulse compression, plan of `rows` transforms of nfft with the natural layout (offset =
//! row * nfft + n, below 2^32: the host checks).
struct gpuradar_pc_cb_params {
    const void* spectrum; //!< nfft complex: conj(FFT(g r)) / nfft
    void* out;            //!< rows x nrange complex (strip store)
    unsigned nrange;
    unsigned nfft;
    //! n / nfft without a division instruction (Granlund & Montgomery 1994, Fig. 4.1;
    //! exact for every 32-bit n): t = umulhi(n, div_magic),
    //! q = (t + ((n - t) >> div_shift1)) >> div_shift2.
    unsigned div_magic;
    unsigned div_shift1;
    unsigned div_shift2;
};

#endif
