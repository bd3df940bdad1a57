#include "../framer_copy_backends.h"
#include <cstring>

namespace gpuradar::kernels::detail {
namespace {

class framer_copy_cpu final : public framer_copy
{
public:
    explicit framer_copy_cpu(std::size_t cpi_samples) : d_staging(cpi_samples) {}
    cfloat* staging() override { return d_staging.data(); }
    void gather(cfloat* dst,
                const cfloat* src,
                const std::vector<std::uint64_t>& offsets,
                std::size_t nrange) override
    {
        for (std::size_t i = 0; i < offsets.size(); ++i)
            std::memcpy(dst + i * nrange, src + offsets[i], nrange * sizeof(cfloat));
    }
    void copy(cfloat* dst, const cfloat* src, std::size_t n) override
    {
        std::memcpy(dst, src, n * sizeof(cfloat));
    }

private:
    std::vector<cfloat> d_staging;
};

} // namespace

std::unique_ptr<framer_copy> make_framer_copy_cpu(std::size_t cpi_samples)
{
    return std::make_unique<framer_copy_cpu>(cpi_samples);
}

} // namespace gpuradar::kernels::detail
