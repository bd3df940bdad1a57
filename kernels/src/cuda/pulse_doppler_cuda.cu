/*
 * CUDA pulse_doppler. Passes over one CPI of N complex samples (N = npulses * channels *
 * nrange, nfft = npulses):
 *  - pulse compression (pulse_compression's CUDA engine): with callbacks, read x, write
 *    the rows x nfft_pc workspace, read it back, write the compressed CPI (pulse-major);
 *  - fused Doppler: ONE cuFFT over the compressed CPI read with element stride
 *    channels * nrange (the corner turn happens in the load), canceller + window +
 *    fftshift modulation in the load callback, the envelope in the store callback
 *    straight into the range-major power map: 8 N bytes read, 4 N written;
 *  - otherwise corner_turn, doppler_filter (prepare + in-place FFT) and envelope:
 *    16 + 32 + 12 bytes per sample.
 */
#include "../pulse_compression_backends.h"
#include "../pulse_doppler_backends.h"
#include "cuda_check.h"
#include "cufft_callbacks.h"
#include "cufft_plan.h"
#include <gpuradar/kernels/corner_turn.h>
#include <cuda_runtime.h>
#include <limits>

namespace gpuradar::kernels::detail {
namespace {

constexpr const char* who = "pulse_doppler";

class pulse_doppler_cuda final : public pulse_doppler
{
public:
    pulse_doppler_cuda(const params& p, stream_ref s, const fusion& f)
        : pulse_doppler(p),
          d_stream(native(s)),
          d_pc(make_pulse_compression_cuda(p.nrange,
                                           p.npulses * p.channels,
                                           p.waveform,
                                           p.range_window,
                                           p.normalize,
                                           p.pc_method,
                                           s,
                                           0,
                                           f.pc_callbacks)),
          d_compressed(input_size() * sizeof(cfloat))
    {
        if (f.fused_doppler)
            d_fused_why = make_fused();
        else
            d_fused_why = "fused_doppler = false";
        if (!d_plan) {
            d_ct = corner_turn::make(backend::cuda, p.npulses, p.nrange, p.channels, s);
            d_df = doppler_filter::make(backend::cuda,
                                        p.npulses,
                                        p.nrange * p.channels,
                                        p.nfft,
                                        p.mti,
                                        p.doppler_window,
                                        p.fftshift,
                                        s);
            d_env = envelope::make(backend::cuda, p.env_mode, p.db, s);
            d_turned = device_memory(input_size() * sizeof(cfloat));
            d_doppler = device_memory(output_size() * sizeof(cfloat));
        }
    }

    void run(const cfloat* in, float* out) override
    {
        cfloat* a = d_compressed.as<cfloat>();
        d_pc->run(in, a);
        if (d_plan) {
            if (out != d_power_out) {
                auto* params = d_cb_params.as<gpuradar_df_cb_params>();
                set_device_pointer_async(
                    reinterpret_cast<void**>(&params->power), out, d_stream, who);
                d_power_out = out;
            }
            // The load callback reads `a` (dataIn) with the plan's strides; cuFFT's own
            // stores would go to the scratch output, the store callback writes `out`.
            GPURADAR_CUFFT_CHECK(who,
                                 cufftExecC2C(d_plan->get(),
                                              reinterpret_cast<cufftComplex*>(a),
                                              d_scratch.as<cufftComplex>(),
                                              CUFFT_FORWARD));
            return;
        }
        d_ct->run(a, d_turned.as<cfloat>());
        d_df->run(d_turned.as<cfloat>(), d_doppler.as<cfloat>());
        d_env->run(d_doppler.as<cfloat>(), out, output_size());
    }

    void set_waveform(const std::vector<cfloat>& waveform) override
    {
        d_pc->set_waveform(waveform);
        d_params.waveform = waveform;
    }

    std::string implementation() const override
    {
        return "pc: " + d_pc->implementation() + "; doppler: " +
               (d_plan ? std::string("strided cufft callbacks (corner turn, window, "
                                     "envelope fused)")
                       : "corner_turn, doppler_filter, envelope (" + d_fused_why + ")");
    }

private:
    // The fused Doppler plan; returns why not when cuFFT refuses (then d_plan is null).
    std::string make_fused()
    {
        const auto& p = d_params;
        const std::size_t cr = p.channels * p.nrange;
        // The callbacks index with 32-bit offsets.
        if (cr * p.nfft > std::numeric_limits<unsigned>::max())
            return "channels * nrange * nfft >= 2^32";
        const auto w = pulse_doppler_weights(p);
        d_weights = device_memory(w.size() * sizeof(cfloat));
        d_cb_params = device_memory(sizeof(gpuradar_df_cb_params));
        gpuradar_df_cb_params cb{};
        cb.weights = d_weights.get();
        cb.power = nullptr;
        cb.cr = static_cast<unsigned>(cr);
        cb.m = static_cast<unsigned>(w.size());
        cb.order = static_cast<unsigned>(doppler_filter::mti_order(p.mti));
        cb.nfft = static_cast<unsigned>(p.nfft);
        cb.nrange = static_cast<unsigned>(p.nrange);
        cb.channels = static_cast<unsigned>(p.channels);
        cb.env_linear = p.env_mode == envelope::mode::linear ? 1u : 0u;
        cb.env_db = p.db ? 1u : 0u;
        copy_async(d_weights.get(),
                   w.data(),
                   d_weights.size(),
                   copy_kind::host_to_device,
                   stream_ref(d_stream),
                   who);
        copy_async(d_cb_params.get(),
                   &cb,
                   sizeof(cb),
                   copy_kind::host_to_device,
                   stream_ref(d_stream),
                   who);
        // The host copies die with this scope.
        GPURADAR_CUDA_CHECK(who, cudaStreamSynchronize(d_stream));
        std::string why;
        void* info = d_cb_params.get();
        d_plan = cufft_callback_plan::make(int(p.nfft),
                                           static_cast<long long>(cr),
                                           static_cast<long long>(cr),
                                           1,
                                           1,
                                           static_cast<long long>(p.nfft),
                                           { { pd_callback::df_load, info },
                                             { pd_callback::df_store_power, info } },
                                           d_stream,
                                           &why);
        if (!d_plan)
            return why;
        // cuFFT's output argument: written only if cuFFT needs room between passes of
        // one transform (never the result, which the store callback writes).
        d_scratch = device_memory(cr * p.nfft * sizeof(cfloat));
        return std::string();
    }

    cudaStream_t d_stream;
    std::unique_ptr<pulse_compression> d_pc;
    device_memory d_compressed; // pulse-major compressed CPI
    // fused Doppler
    std::unique_ptr<cufft_callback_plan> d_plan;
    device_memory d_weights, d_cb_params, d_scratch;
    float* d_power_out = nullptr; // the power pointer the parameter block holds
    std::string d_fused_why;
    // separate path
    std::unique_ptr<corner_turn> d_ct;
    std::unique_ptr<doppler_filter> d_df;
    std::unique_ptr<envelope> d_env;
    device_memory d_turned, d_doppler;
};

} // namespace

std::unique_ptr<pulse_doppler> make_pulse_doppler_cuda(const pulse_doppler_params& p,
                                                       stream_ref stream,
                                                       const pulse_doppler_fusion& f)
{
    return std::make_unique<pulse_doppler_cuda>(p, stream, f);
}

} // namespace gpuradar::kernels::detail
