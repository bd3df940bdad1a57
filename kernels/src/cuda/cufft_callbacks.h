/*
 * cuFFT plans with LTO callbacks (internal). The callbacks are device functions in
 * lto/pd_callbacks.cu, embedded as LTO-IR (lto/pd_callbacks_fatbin.h) and JIT-linked into
 * cuFFT's kernels when the plan is made (in a constructor, never per call), so that
 * padding, the spectrum product and stripping ride on the FFT's own loads and stores
 * instead of separate passes. (A strided Doppler plan with load/store callbacks - corner
 * turn, window and envelope in the callbacks - was tried: cufftMakePlanMany64 returned
 * CUFFT_INTERNAL_ERROR on the H100 for nfft 128/256/1024, so pulse_doppler has its own
 * fused kernel instead.)
 *
 * cuFFT can refuse (no nvJitLink at run time, a driver too old, resources): make()
 * returns nullptr and says why, and the caller keeps its kernel-per-pass path.
 */
#ifndef INCLUDED_GPURADAR_KERNELS_CUFFT_CALLBACKS_H
#define INCLUDED_GPURADAR_KERNELS_CUFFT_CALLBACKS_H

#include "lto/pd_callbacks_params.h"
#include <cuda_runtime.h>
#include <cufft.h>
#include <cufftXt.h>
#include <memory>
#include <string>
#include <vector>

namespace gpuradar::kernels::detail {

//! The callbacks of lto/pd_callbacks.cu.
enum class pd_callback { pc_load_pad, pc_store_multiply, pc_store_strip };

struct callback_binding {
    pd_callback which;
    void* info; //!< device pointer handed to the callback as callerInfo
};

/*!
 * One batched 1-D C2C plan (cufftMakePlanMany with the given element strides and
 * distances, on `stream`) with JIT callbacks attached. Not movable: cuFFT keeps the
 * address of the callerInfo array.
 */
class cufft_callback_plan
{
public:
    /*!
     * Returns nullptr when cuFFT cannot build the plan with these callbacks; `why` then
     * holds the failing call and its cuFFT result.
     */
    static std::unique_ptr<cufft_callback_plan>
    make(int n,
         long long batch,
         long long istride,
         long long idist,
         long long ostride,
         long long odist,
         const std::vector<callback_binding>& callbacks,
         cudaStream_t stream,
         std::string* why);

    ~cufft_callback_plan();
    cufft_callback_plan(const cufft_callback_plan&) = delete;
    cufft_callback_plan& operator=(const cufft_callback_plan&) = delete;

    cufftHandle get() const { return d_plan; }

private:
    cufft_callback_plan() = default;
    cufftHandle d_plan = 0;
    bool d_made = false;
    std::vector<void*> d_info; // one callerInfo slot per callback, stable address
};

//! Writes `value` into the pointer field at `slot` (device memory) on `stream`: a
//! one-thread kernel, so a changed output buffer reaches the callbacks in stream order
//! without a host copy or a wait.
void set_device_pointer_async(void** slot,
                              void* value,
                              cudaStream_t stream,
                              const char* who);

} // namespace gpuradar::kernels::detail

#endif
