/*
 * CPU twin of pulse_doppler_processor: the four stage twins in sequence over host
 * workspaces (compressed CPI, its corner turn, the range-Doppler map), so the chain
 * computes exactly what the separate blocks compute.
 */
#include "pulse_doppler/pulse_doppler_processor_backends.h"
#include <gpuradar/kernels/pulse_doppler/corner_turn.h>
#include <vector>

namespace gpuradar::kernels::detail {
namespace {

class pulse_doppler_processor_cpu final : public pulse_doppler_processor
{
public:
    explicit pulse_doppler_processor_cpu(const params& p)
        : pulse_doppler_processor(p),
          d_pc(pulse_compression::make(backend::cpu,
                                       p.nrange,
                                       p.npulses * p.channels,
                                       p.waveform,
                                       p.range_window,
                                       p.normalize,
                                       p.pc_method)),
          d_ct(corner_turn::make(backend::cpu, p.npulses, p.nrange, p.channels)),
          d_df(doppler_filter::make(backend::cpu,
                                    p.npulses,
                                    p.nrange * p.channels,
                                    p.nfft,
                                    p.mti,
                                    p.doppler_window,
                                    p.fftshift)),
          d_env(envelope::make(backend::cpu, p.env_mode, p.db)),
          d_compressed(input_size()),
          d_turned(input_size()),
          d_doppler(output_size())
    {
    }

    void run(const cfloat* in, float* out) override
    {
        d_pc->run(in, d_compressed.data());
        d_ct->run(d_compressed.data(), d_turned.data());
        d_df->run(d_turned.data(), d_doppler.data());
        d_env->run(d_doppler.data(), out, d_doppler.size());
    }

    void set_waveform(const std::vector<cfloat>& waveform) override
    {
        d_pc->set_waveform(waveform);
        d_params.waveform = waveform;
    }

    std::string implementation() const override
    {
        return "pc: " + d_pc->implementation() +
               "; doppler: corner_turn, doppler_filter, envelope (cpu)";
    }

private:
    std::unique_ptr<pulse_compression> d_pc;
    std::unique_ptr<corner_turn> d_ct;
    std::unique_ptr<doppler_filter> d_df;
    std::unique_ptr<envelope> d_env;
    std::vector<cfloat> d_compressed, d_turned, d_doppler;
};

} // namespace

std::unique_ptr<pulse_doppler_processor>
make_pulse_doppler_processor_cpu(const pulse_doppler_processor_params& p)
{
    return std::make_unique<pulse_doppler_processor_cpu>(p);
}

} // namespace gpuradar::kernels::detail
