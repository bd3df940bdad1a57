#include "../framer_copy_backends.h"
#include "cuda_check.h"
#include <cuda_runtime.h>

namespace gpuradar::kernels::detail {
namespace {

constexpr const char* who = "gpuradar::pulse_framer (cuda)";

class framer_copy_cuda final : public framer_copy
{
public:
    framer_copy_cuda(std::size_t cpi_samples, stream_ref stream)
        : d_staging(cpi_samples * sizeof(cfloat)), d_stream(stream)
    {
    }
    cfloat* staging() override { return d_staging.as<cfloat>(); }

    void gather(cfloat* dst,
                const cfloat* src,
                const std::vector<std::uint64_t>& offsets,
                std::size_t nrange) override
    {
        if (offsets.empty())
            return;
        const std::size_t row = nrange * sizeof(cfloat);
        const std::uint64_t stride =
            offsets.size() > 1 ? offsets[1] - offsets[0] : nrange;
        bool uniform = true;
        for (std::size_t i = 1; i < offsets.size() && uniform; ++i)
            uniform = offsets[i] - offsets[i - 1] == stride;
        if (uniform) {
            // Every gate of an integer PRI in one strided copy (rows = gates).
            GPURADAR_CUDA_CHECK(who,
                                cudaMemcpy2DAsync(dst,
                                                  row,
                                                  src + offsets[0],
                                                  stride * sizeof(cfloat),
                                                  row,
                                                  offsets.size(),
                                                  cudaMemcpyDeviceToDevice,
                                                  native(d_stream)));
            return;
        }
        for (std::size_t i = 0; i < offsets.size(); ++i)
            GPURADAR_CUDA_CHECK(who,
                                cudaMemcpyAsync(dst + i * nrange,
                                                src + offsets[i],
                                                row,
                                                cudaMemcpyDeviceToDevice,
                                                native(d_stream)));
    }

    void copy(cfloat* dst, const cfloat* src, std::size_t n) override
    {
        GPURADAR_CUDA_CHECK(who,
                            cudaMemcpyAsync(dst,
                                            src,
                                            n * sizeof(cfloat),
                                            cudaMemcpyDeviceToDevice,
                                            native(d_stream)));
    }

private:
    device_memory d_staging;
    stream_ref d_stream;
};

} // namespace

std::unique_ptr<framer_copy> make_framer_copy_cuda(std::size_t cpi_samples,
                                                   stream_ref stream)
{
    return std::make_unique<framer_copy_cuda>(cpi_samples, stream);
}

} // namespace gpuradar::kernels::detail
