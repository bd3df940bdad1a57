#include "pulse_doppler/framer_copy_backends.h"
#include <algorithm>
#include <cmath>
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
    void
    copy_finite(cfloat* dst, const cfloat* src, std::size_t n, std::size_t slot) override
    {
        std::uint64_t bad = 0;
        for (std::size_t i = 0; i < n; ++i) {
            const bool finite =
                std::isfinite(src[i].real()) && std::isfinite(src[i].imag());
            dst[i] = finite ? src[i] : cfloat(0.0f, 0.0f);
            bad += finite ? 0 : 1;
        }
        if (slot >= d_counts.size())
            d_counts.resize(slot + 1, 0);
        d_counts[slot] += bad;
    }
    void take_nonfinite(std::uint64_t* counts, std::size_t n) override
    {
        for (std::size_t i = 0; i < n; ++i)
            counts[i] = i < d_counts.size() ? d_counts[i] : 0;
        std::fill(d_counts.begin(), d_counts.end(), 0);
    }

private:
    std::vector<cfloat> d_staging;
    std::vector<std::uint64_t> d_counts; // per slot since the last take_nonfinite()
};

} // namespace

std::unique_ptr<framer_copy> make_framer_copy_cpu(std::size_t cpi_samples)
{
    return std::make_unique<framer_copy_cpu>(cpi_samples);
}

} // namespace gpuradar::kernels::detail
