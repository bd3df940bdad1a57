#include "pulse_doppler/framer_copy_backends.h"
#include "pulse_doppler/framer_copy_screen.h"
#include "pulse_doppler/front_end_correction_math.h"
#include <algorithm>
#include <cmath>

namespace gpuradar::kernels::detail {
namespace {

class framer_copy_cpu final : public framer_copy
{
public:
    framer_copy_cpu(std::size_t cpi_samples,
                    sample_format input,
                    std::unique_ptr<front_end_correction> corrections)
        : framer_copy(std::move(corrections)),
          d_staging(cpi_samples),
          d_convert(sample_convert::make(backend::cpu, input)),
          d_saturation(saturation_level(input)),
          d_ordinary(std::min(framer_clamp_level, std::nextafter(d_saturation, 0.0f)))
    {
    }
    cfloat* staging() override { return d_staging.data(); }
    void gather(cfloat* dst,
                const void* src,
                const std::vector<std::uint64_t>& offsets,
                std::size_t nrange) override
    {
        const auto* in = static_cast<const unsigned char*>(src);
        const std::size_t bytes = sample_bytes(d_convert->format());
        for (std::size_t i = 0; i < offsets.size(); ++i)
            d_convert->run(in + offsets[i] * bytes, dst + i * nrange, nrange);
    }
    void
    copy_finite(cfloat* dst, const cfloat* src, std::size_t n, std::size_t slot) override
    {
        screen_tally t;
        if (d_corrections)
            copy_corrected(dst, src, n, slot, t);
        else
            copy_screened(dst, src, n, t);
        if (slot >= d_counts.size())
            d_counts.resize(slot + 1);
        d_counts[slot].nonfinite += t.nonfinite;
        d_counts[slot].clamped += t.clamped;
        d_counts[slot].saturated += t.saturated;
    }
    void take_counts(framer_sample_counts* counts, std::size_t n) override
    {
        for (std::size_t i = 0; i < n; ++i)
            counts[i] = i < d_counts.size() ? d_counts[i] : framer_sample_counts{};
        std::fill(d_counts.begin(), d_counts.end(), framer_sample_counts{});
    }

private:
    void copy_screened(cfloat* dst, const cfloat* src, std::size_t n, screen_tally& t)
    {
        // Blocks of plain copy that also note whether any part lies outside
        // [-d_ordinary, d_ordinary] (NaN compares false): only such rare blocks are
        // screened sample by sample (screen_sample, the CUDA kernel's arithmetic).
        for (std::size_t b0 = 0; b0 < n; b0 += screen_block) {
            const std::size_t b1 = std::min(n, b0 + screen_block);
            bool rare = false;
            for (std::size_t i = b0; i < b1; ++i) {
                const float re = src[i].real(), im = src[i].imag();
                rare |= !(std::fabs(re) <= d_ordinary) | !(std::fabs(im) <= d_ordinary);
                dst[i] = src[i];
            }
            if (!rare)
                continue;
            for (std::size_t i = b0; i < b1; ++i) {
                float re = src[i].real(), im = src[i].imag();
                screen_sample(re, im, framer_clamp_level, d_saturation, t);
                dst[i] = cfloat(re, im);
            }
        }
    }

    // The CUDA copy's arithmetic: each sample screened, then corrected by the CPI's map.
    void copy_corrected(
        cfloat* dst, const cfloat* src, std::size_t n, std::size_t slot, screen_tally& t)
    {
        require_whole_cpi(*d_corrections, n, "gpuradar::framer_copy");
        d_corrections->estimate(src, slot);
        const front_end_map m = d_corrections->map();
        const front_end_iq_map iq = m.iq ? *m.iq : front_end_iq_map{};
        for (std::size_t p = 0; p < m.npulses; ++p) {
            const cfloat d = m.dc ? m.dc[p] : cfloat(0.0f, 0.0f);
            const cfloat* x = src + p * m.nrange;
            cfloat* y = dst + p * m.nrange;
            for (std::size_t r = 0; r < m.nrange; ++r) {
                float re = x[r].real(), im = x[r].imag();
                screen_sample(re, im, framer_clamp_level, d_saturation, t);
                const cfloat mp = m.mean ? m.mean[r] : cfloat(0.0f, 0.0f);
                correct_sample(
                    re, im, r < m.gate, d.real(), d.imag(), mp.real(), mp.imag(), iq);
                y[r] = cfloat(re, im);
            }
        }
    }

    std::vector<cfloat> d_staging;
    std::unique_ptr<sample_convert> d_convert; // the gates' copy (and conversion)
    //! Samples per block of the copy's fast path: small enough to stay in L1 for the
    //! rare second pass.
    static constexpr std::size_t screen_block = 256;
    float d_saturation; // saturation_level(input)
    //! The largest |part| that needs no screening: below both the saturation level and
    //! the clamp level.
    float d_ordinary;
    std::vector<framer_sample_counts> d_counts; // per slot since the last take_counts()
};

} // namespace

std::unique_ptr<framer_copy>
make_framer_copy_cpu(std::size_t cpi_samples,
                     sample_format input,
                     std::unique_ptr<front_end_correction> corrections)
{
    return std::make_unique<framer_copy_cpu>(cpi_samples, input, std::move(corrections));
}

} // namespace gpuradar::kernels::detail
