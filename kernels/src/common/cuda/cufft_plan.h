/* RAII cuFFT plans with checked calls (internal). Made once per shape, never per call. */
#ifndef INCLUDED_GPURADAR_KERNELS_CUFFT_PLAN_H
#define INCLUDED_GPURADAR_KERNELS_CUFFT_PLAN_H

#include "common/cuda/cuda_check.h"
#include <cufft.h>
#include <string>
#include <utility>

namespace gpuradar::kernels::detail {

inline const char* cufft_result_name(cufftResult r)
{
    switch (r) {
    case CUFFT_SUCCESS:
        return "CUFFT_SUCCESS";
    case CUFFT_INVALID_PLAN:
        return "CUFFT_INVALID_PLAN";
    case CUFFT_ALLOC_FAILED:
        return "CUFFT_ALLOC_FAILED";
    case CUFFT_INVALID_VALUE:
        return "CUFFT_INVALID_VALUE";
    case CUFFT_INTERNAL_ERROR:
        return "CUFFT_INTERNAL_ERROR";
    case CUFFT_EXEC_FAILED:
        return "CUFFT_EXEC_FAILED";
    case CUFFT_SETUP_FAILED:
        return "CUFFT_SETUP_FAILED";
    case CUFFT_INVALID_SIZE:
        return "CUFFT_INVALID_SIZE";
    case CUFFT_INVALID_DEVICE:
        return "CUFFT_INVALID_DEVICE";
    case CUFFT_NOT_SUPPORTED:
        return "CUFFT_NOT_SUPPORTED";
    default:
        return "CUFFT_UNKNOWN_ERROR";
    }
}

inline void check_cufft(cufftResult r, const char* who, const char* call)
{
    if (r != CUFFT_SUCCESS)
        throw cuda_error(std::string(who) + ": " + call +
                         " failed: " + cufft_result_name(r) + " (cuFFT error " +
                         std::to_string(static_cast<int>(r)) + ")");
}

#define GPURADAR_CUFFT_CHECK(who, call) \
    ::gpuradar::kernels::detail::check_cufft((call), (who), #call)

/*!
 * Batched 1-D C2C plan (cufftPlanMany): `batch` transforms of length n with element
 * stride `stride` and distance `dist`, bound to `stream`. Execute with
 * cufftExecC2C(plan.get(), in, out, CUFFT_FORWARD / CUFFT_INVERSE) (unnormalised).
 */
class cufft_plan_1d
{
public:
    cufft_plan_1d(
        int n, int batch, int stride, int dist, cudaStream_t stream, const char* who)
    {
        make(n, batch, stride, dist, stream, who, true);
    }
    //! Tag for a plan without its own work area: the owner gives it one with
    //! set_work_area() (at least work_size() bytes), so plans can share one.
    struct shared_workspace_t {
    };
    cufft_plan_1d(int n,
                  int batch,
                  int stride,
                  int dist,
                  cudaStream_t stream,
                  const char* who,
                  shared_workspace_t)
    {
        make(n, batch, stride, dist, stream, who, false);
    }
    std::size_t work_size() const { return d_work_size; }
    void set_work_area(void* area, const char* who)
    {
        GPURADAR_CUFFT_CHECK(who, cufftSetWorkArea(d_plan, area));
    }
    ~cufft_plan_1d()
    {
        if (d_plan) // destructors do not throw
            release_on(d_device, [this] { cufftDestroy(d_plan); });
    }
    cufft_plan_1d(cufft_plan_1d&& o) noexcept
        : d_plan(std::exchange(o.d_plan, 0)),
          d_work_size(o.d_work_size),
          d_device(o.d_device)
    {
    }
    cufft_plan_1d& operator=(cufft_plan_1d&& o) noexcept
    {
        std::swap(d_plan, o.d_plan);
        std::swap(d_work_size, o.d_work_size);
        std::swap(d_device, o.d_device);
        return *this;
    }
    cufft_plan_1d(const cufft_plan_1d&) = delete;
    cufft_plan_1d& operator=(const cufft_plan_1d&) = delete;

    cufftHandle get() const { return d_plan; }

private:
    //! cufftCreate + cufftMakePlanMany (what cufftPlanMany does), optionally without
    //! the automatic work area; the handle is released if a later step fails.
    void make(int n,
              int batch,
              int stride,
              int dist,
              cudaStream_t stream,
              const char* who,
              bool own_workspace)
    {
        int dims[1] = { n };
        GPURADAR_CUFFT_CHECK(who, cufftCreate(&d_plan));
        try {
            if (!own_workspace)
                GPURADAR_CUFFT_CHECK(who, cufftSetAutoAllocation(d_plan, 0));
            GPURADAR_CUFFT_CHECK(who,
                                 cufftMakePlanMany(d_plan,
                                                   1,
                                                   dims,
                                                   dims,
                                                   stride,
                                                   dist,
                                                   dims,
                                                   stride,
                                                   dist,
                                                   CUFFT_C2C,
                                                   batch,
                                                   &d_work_size));
            GPURADAR_CUFFT_CHECK(who, cufftSetStream(d_plan, stream));
        } catch (...) {
            cufftDestroy(d_plan);
            d_plan = 0;
            throw;
        }
    }

    cufftHandle d_plan = 0;
    std::size_t d_work_size = 0;
    int d_device = current_device_or_0(); //!< the plan's, released with it current
};

} // namespace gpuradar::kernels::detail

#endif
