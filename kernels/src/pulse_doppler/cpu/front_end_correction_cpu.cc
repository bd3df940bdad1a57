#include "pulse_doppler/front_end_correction_backends.h"
#include "pulse_doppler/front_end_correction_math.h"
#include <algorithm>
#include <complex>
#include <vector>

namespace gpuradar::kernels::detail {
namespace {

using cdouble = std::complex<double>;

class front_end_correction_cpu final : public front_end_correction
{
public:
    explicit front_end_correction_cpu(const front_end_correction_config& cfg)
        : front_end_correction(cfg), d_mean_pulse(cfg.nrange), d_pulse_mean(cfg.nrange)
    {
    }

    void run(cfloat* cpi, std::size_t slot) override
    {
        if (d_cfg.dc != dc_removal::off)
            remove_dc(cpi);
        if (d_cfg.leakage == leakage_suppression::mean_pulse)
            subtract_mean_pulse(cpi);
        else if (d_cfg.leakage == leakage_suppression::blank)
            blank(cpi);
        if (slot >= d_estimates.size())
            d_estimates.resize(slot + 1);
        d_estimates[slot] = iq_estimate{};
        if (d_cfg.iq)
            d_estimates[slot] = correct_iq(cpi);
    }

    void take_estimates(iq_estimate* out, std::size_t n) override
    {
        for (std::size_t i = 0; i < n; ++i)
            out[i] = i < d_estimates.size() ? d_estimates[i] : iq_estimate{};
        d_estimates.clear();
    }

private:
    void remove_dc(cfloat* cpi)
    {
        const std::size_t nr = d_cfg.nrange;
        for (std::size_t p = 0; p < d_cfg.npulses; ++p) {
            cfloat* x = cpi + p * nr;
            cdouble sum = 0;
            for (std::size_t r = 0; r < nr; ++r)
                sum += cdouble(x[r]);
            const cdouble m = sum / double(nr);
            if (d_cfg.dc == dc_removal::pulse || !d_have_dc)
                d_dc = m;
            else
                d_dc += (m - d_dc) / d_cfg.dc_time_constant;
            d_have_dc = true;
            const cfloat d(d_dc);
            for (std::size_t r = 0; r < nr; ++r)
                x[r] -= d;
        }
    }

    void subtract_mean_pulse(cfloat* cpi)
    {
        const std::size_t nr = d_cfg.nrange, np = d_cfg.npulses;
        std::fill(d_pulse_mean.begin(), d_pulse_mean.end(), cdouble(0));
        for (std::size_t p = 0; p < np; ++p)
            for (std::size_t r = 0; r < nr; ++r)
                d_pulse_mean[r] += cdouble(cpi[p * nr + r]);
        for (std::size_t r = 0; r < nr; ++r) {
            const cdouble m = d_pulse_mean[r] / double(np);
            d_mean_pulse[r] = d_have_mean ? d_mean_pulse[r] + d_cfg.leakage_alpha *
                                                                  (m - d_mean_pulse[r])
                                          : m;
        }
        d_have_mean = true;
        for (std::size_t p = 0; p < np; ++p)
            for (std::size_t r = 0; r < nr; ++r)
                cpi[p * nr + r] -= cfloat(d_mean_pulse[r]);
    }

    void blank(cfloat* cpi)
    {
        for (std::size_t p = 0; p < d_cfg.npulses; ++p)
            std::fill(cpi + p * d_cfg.nrange,
                      cpi + p * d_cfg.nrange + d_cfg.leakage_gate,
                      cfloat(0.0f, 0.0f));
    }

    iq_estimate correct_iq(cfloat* cpi)
    {
        const std::size_t n = d_cfg.npulses * d_cfg.nrange;
        iq_sums s;
        for (std::size_t i = 0; i < n; ++i) {
            const double re = cpi[i].real(), im = cpi[i].imag();
            s.ii += re * re;
            s.qq += im * im;
            s.iq += re * im;
        }
        const iq_matrix m = iq_matrix_from(s);
        if (m.ok) {
            const float a = static_cast<float>(m.a), b = static_cast<float>(m.b);
            for (std::size_t i = 0; i < n; ++i)
                cpi[i] = cfloat(cpi[i].real(), a * cpi[i].real() + b * cpi[i].imag());
        }
        return iq_estimate{ true, m.ok, m.degenerate, m.gain_db, m.phase_deg };
    }

    cdouble d_dc = 0; // the running DC estimate
    bool d_have_dc = false;
    std::vector<cdouble> d_mean_pulse; // M, the leakage estimate
    std::vector<cdouble> d_pulse_mean; // this CPI's mean pulse (workspace)
    bool d_have_mean = false;
    std::vector<iq_estimate> d_estimates; // per slot since the last take
};

} // namespace

std::unique_ptr<front_end_correction>
make_front_end_correction_cpu(const front_end_correction_config& cfg)
{
    return std::make_unique<front_end_correction_cpu>(cfg);
}

} // namespace gpuradar::kernels::detail
