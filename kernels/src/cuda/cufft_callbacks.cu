/* cuFFT LTO callback plans (see cufft_callbacks.h). */
#include "cuda_check.h"
#include "cufft_callbacks.h"
#include "cufft_plan.h"
#include "lto/pd_callbacks_fatbin.h"

namespace gpuradar::kernels::detail {
namespace {

struct callback_symbol {
    const char* name;    //!< the source name (what cuFFT's samples pass)
    const char* mangled; //!< the C++ symbol of the same function (second try)
    cufftXtCallbackType type;
};

//! Mangled names as nvcc emits them for the signatures in lto/pd_callbacks.cu.
callback_symbol symbol(pd_callback c)
{
    switch (c) {
    case pd_callback::pc_load_pad:
        return { "gpuradar_pc_load_pad",
                 "_Z20gpuradar_pc_load_padPvyS_S_",
                 CUFFT_CB_LD_COMPLEX };
    case pd_callback::pc_store_multiply:
        return { "gpuradar_pc_store_multiply",
                 "_Z26gpuradar_pc_store_multiplyPvy6float2S_S_",
                 CUFFT_CB_ST_COMPLEX };
    case pd_callback::pc_store_strip:
    default:
        return { "gpuradar_pc_store_strip",
                 "_Z23gpuradar_pc_store_stripPvy6float2S_S_",
                 CUFFT_CB_ST_COMPLEX };
    }
}

__global__ void write_pointer(void** slot, void* value) { *slot = value; }

} // namespace

std::unique_ptr<cufft_callback_plan>
cufft_callback_plan::make(int n,
                          long long batch,
                          long long istride,
                          long long idist,
                          long long ostride,
                          long long odist,
                          const std::vector<callback_binding>& callbacks,
                          cudaStream_t stream,
                          std::string* why)
{
    std::string reason;
    for (int attempt = 0; attempt < 2; ++attempt) {
        std::unique_ptr<cufft_callback_plan> p(new cufft_callback_plan());
        auto fail = [&](const char* call, cufftResult r) {
            reason += std::string(attempt ? " / mangled names: " : "source names: ") +
                      call + " -> " + cufft_result_name(r);
        };
        cufftResult r = cufftCreate(&p->d_plan);
        if (r != CUFFT_SUCCESS) {
            fail("cufftCreate", r);
            continue;
        }
        p->d_made = true;
        p->d_info.resize(callbacks.size());
        bool ok = true;
        for (std::size_t i = 0; i < callbacks.size() && ok; ++i) {
            const auto s = symbol(callbacks[i].which);
            p->d_info[i] = callbacks[i].info;
            r = cufftXtSetJITCallback(p->d_plan,
                                      attempt ? s.mangled : s.name,
                                      gpuradar_pd_callbacks_fatbin,
                                      sizeof(gpuradar_pd_callbacks_fatbin),
                                      s.type,
                                      &p->d_info[i]);
            if (r != CUFFT_SUCCESS) {
                fail("cufftXtSetJITCallback", r);
                ok = false;
            }
        }
        if (!ok)
            continue;
        long long dims[1] = { n };
        long long nembed[1] = { n };
        std::size_t work = 0;
        r = cufftMakePlanMany64(p->d_plan,
                                1,
                                dims,
                                nembed,
                                istride,
                                idist,
                                nembed,
                                ostride,
                                odist,
                                CUFFT_C2C,
                                batch,
                                &work);
        if (r != CUFFT_SUCCESS) {
            fail("cufftMakePlanMany64", r);
            continue;
        }
        r = cufftSetStream(p->d_plan, stream);
        if (r != CUFFT_SUCCESS) {
            fail("cufftSetStream", r);
            continue;
        }
        return p;
    }
    if (why)
        *why = reason;
    return nullptr;
}

cufft_callback_plan::~cufft_callback_plan()
{
    if (d_made)
        cufftDestroy(d_plan); // destructors do not throw
}

void set_device_pointer_async(void** slot,
                              void* value,
                              cudaStream_t stream,
                              const char* who)
{
    write_pointer<<<1, 1, 0, stream>>>(slot, value);
    GPURADAR_CUDA_CHECK_LAUNCH(who, "write_pointer");
}

} // namespace gpuradar::kernels::detail
