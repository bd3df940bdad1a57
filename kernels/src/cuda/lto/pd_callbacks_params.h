/*
 * Parameter blocks of the cuFFT LTO callbacks in pd_callbacks.cu (internal). Shared by
 * the callback source (compiled to LTO-IR by generate.sh) and the host code that fills
 * them (pulse_compression_cuda.cu, pulse_doppler_cuda.cu): plain C layout, no includes,
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
};

//! Doppler filter on the pulse-major CPI: the plan reads transform b (b = c*nrange + r,
//! cr = channels*nrange of them) with element stride cr, so element n of b is at
//! offset b + n*cr of the input (the corner turn folded into the load); the output
//! layout is natural (offset = b*nfft + k) and the store writes the envelope of Y into
//! `power` at ((r*channels + c)*nfft + k) (range-major, channel-major inside a range
//! item: DESIGN.md's range stream).
struct gpuradar_df_cb_params {
    const void* weights; //!< m complex: window times the fftshift modulation
    void* power;         //!< nrange x channels x nfft floats
    unsigned cr;         //!< channels * nrange
    unsigned m;          //!< samples after the MTI canceller (window length)
    unsigned order;      //!< MTI order 0, 1, 2
    unsigned nfft;
    unsigned nrange;
    unsigned channels;
    unsigned env_linear; //!< 0: |Y|^2, 1: |Y|
    unsigned env_db;     //!< 1: in dB (10 log10 |Y|^2 or 20 log10 |Y|: the same number)
};

#endif
