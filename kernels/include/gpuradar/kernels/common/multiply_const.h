/* Complex gain: y[n] = k * x[n]. */
#ifndef INCLUDED_GPURADAR_KERNELS_MULTIPLY_CONST_H
#define INCLUDED_GPURADAR_KERNELS_MULTIPLY_CONST_H

#include <gpuradar/kernels/common/backend.h>
#include <gpuradar/kernels/common/cuda_resources.h>
#include <cstddef>
#include <memory>

namespace gpuradar::kernels {

/*!
 * \brief y[n] = k * x[n] for complex x and k (k is an argument of each call, so a
 * run-time change costs nothing). In-place (in == out) is allowed.
 */
class multiply_const
{
public:
    static std::unique_ptr<multiply_const> make(backend b,
                                                stream_ref stream = stream_ref());
    virtual ~multiply_const() = default;

    //! n samples; device pointers on the CUDA backend (queued, not waited for).
    virtual void run(const cfloat* in, cfloat* out, std::size_t n, cfloat k) = 0;
};

} // namespace gpuradar::kernels

#endif
