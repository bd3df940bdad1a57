#include "pulse_doppler/framer_copy_screen.h"
#include "pulse_doppler/front_end_correction_backends.h"
#include "pulse_doppler/front_end_correction_math.h"
#include <gpuradar/kernels/pulse_doppler/framer_copy.h>
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
        : front_end_correction(cfg, backend::cpu),
          d_mean_pulse(cfg.nrange),
          d_mean_f(cfg.nrange),
          d_dc_f(cfg.npulses),
          d_col(cfg.nrange),
          d_row_all(cfg.npulses),
          d_row_kept(cfg.npulses)
    {
    }

    // The GPU's maths in the GPU's order: one read pass for every sum of the screened
    // CPI, then the estimates; framer_copy applies map() (front_end_correction_math.h).
    void estimate(const cfloat* cpi, std::size_t slot) override
    {
        if (slot >= d_estimates.size())
            d_estimates.resize(slot + 1);
        d_estimates[slot] = iq_estimate{};
        const std::size_t np = d_cfg.npulses, nr = d_cfg.nrange;
        const bool dc = d_cfg.dc != dc_removal::off;
        const bool mean = d_cfg.leakage == leakage_suppression::mean_pulse;
        const std::size_t gate =
            d_cfg.leakage == leakage_suppression::blank ? d_cfg.leakage_gate : 0;
        d_iq = front_end_iq_map{};
        if (!dc && !mean && !d_cfg.iq)
            return; // blank alone: nothing to estimate
        iq_terms t;
        // 1. Sums of the raw CPI as screened.
        std::fill(d_col.begin(), d_col.end(), cdouble(0));
        for (std::size_t p = 0; p < np; ++p) {
            const cfloat* x = cpi + p * nr;
            cdouble gated = 0, kept = 0;
            for (std::size_t r = 0; r < nr; ++r) {
                // The sample as copy_finite writes it (its counts are the copy's).
                float sre = x[r].real(), sim = x[r].imag();
                screen_tally ignored;
                screen_sample(sre, sim, framer_clamp_level, INFINITY, ignored);
                const double re = sre, im = sim;
                d_col[r] += cdouble(re, im);
                if (r < gate) {
                    gated += cdouble(re, im);
                    continue;
                }
                kept += cdouble(re, im);
                t.raw[0] += re * re;
                t.raw[1] += im * im;
                t.raw[2] += re * im;
            }
            d_row_all[p] = gated + kept;
            d_row_kept[p] = kept;
        }
        // 2. DC per pulse.
        cdouble dsum = 0;
        for (std::size_t p = 0; p < np; ++p) {
            cdouble d = 0;
            if (dc) {
                const cdouble m = d_row_all[p] / double(nr);
                if (d_cfg.dc == dc_removal::pulse || !d_have_dc)
                    d_dc = m;
                else
                    d_dc += (m - d_dc) / d_cfg.dc_time_constant;
                d_have_dc = true;
                d = d_dc;
            }
            d_dc_f[p] = cfloat(d);
            dsum += d;
            const cdouble rk = d_row_kept[p];
            t.dr[0] += d.real() * rk.real();
            t.dr[1] += d.imag() * rk.imag();
            t.dr[2] += d.real() * rk.imag();
            t.dr[3] += d.imag() * rk.real();
            t.dd[0] += d.real() * d.real();
            t.dd[1] += d.imag() * d.imag();
            t.dd[2] += d.real() * d.imag();
        }
        t.d[0] = dsum.real();
        t.d[1] = dsum.imag();
        // 3. Mean pulse of the DC-free CPI, folded into M.
        if (mean) {
            for (std::size_t r = 0; r < nr; ++r) {
                const cdouble m = (d_col[r] - dsum) / double(np);
                cdouble& mp = d_mean_pulse[r];
                mp = d_have_mean ? mp + d_cfg.leakage_alpha * (m - mp) : m;
                const cdouble c = d_col[r];
                t.mc[0] += mp.real() * c.real();
                t.mc[1] += mp.imag() * c.imag();
                t.mc[2] += mp.real() * c.imag();
                t.mc[3] += mp.imag() * c.real();
                t.mm[0] += mp.real() * mp.real();
                t.mm[1] += mp.imag() * mp.imag();
                t.mm[2] += mp.real() * mp.imag();
                t.m[0] += mp.real();
                t.m[1] += mp.imag();
                d_mean_f[r] = cfloat(mp);
            }
            d_have_mean = true;
        }
        // 4. The I/Q matrix of the corrected CPI.
        if (d_cfg.iq) {
            const iq_matrix iqm =
                iq_matrix_from(iq_sums_from(t, double(nr - gate), double(np)));
            d_estimates[slot] =
                iq_estimate{ true, iqm.ok, iqm.degenerate, iqm.gain_db, iqm.phase_deg };
            d_iq = front_end_iq_map{ static_cast<float>(iqm.a),
                                     static_cast<float>(iqm.b),
                                     iqm.ok ? 1 : 0 };
        }
    }

    front_end_map map() const override
    {
        front_end_map m;
        m.npulses = d_cfg.npulses;
        m.nrange = d_cfg.nrange;
        m.gate = d_cfg.leakage == leakage_suppression::blank ? d_cfg.leakage_gate : 0;
        m.dc = d_cfg.dc != dc_removal::off ? d_dc_f.data() : nullptr;
        m.mean =
            d_cfg.leakage == leakage_suppression::mean_pulse ? d_mean_f.data() : nullptr;
        m.iq = d_cfg.iq ? &d_iq : nullptr;
        return m;
    }

    void take_estimates(iq_estimate* out, std::size_t n) override
    {
        for (std::size_t i = 0; i < n; ++i)
            out[i] = i < d_estimates.size() ? d_estimates[i] : iq_estimate{};
        d_estimates.clear();
    }

private:
    cdouble d_dc = 0; // the running DC estimate
    bool d_have_dc = false;
    std::vector<cdouble> d_mean_pulse; // M, the leakage estimate
    // The latest CPI's map: M and the DC per pulse as subtracted, the I/Q matrix.
    std::vector<cfloat> d_mean_f, d_dc_f;
    front_end_iq_map d_iq;
    bool d_have_mean = false;
    // Workspace of one CPI: sums per range sample, per pulse (all, not blanked).
    std::vector<cdouble> d_col, d_row_all, d_row_kept;
    std::vector<iq_estimate> d_estimates; // per slot since the last take
};

} // namespace

std::unique_ptr<front_end_correction>
make_front_end_correction_cpu(const front_end_correction_config& cfg)
{
    return std::make_unique<front_end_correction_cpu>(cfg);
}

} // namespace gpuradar::kernels::detail
