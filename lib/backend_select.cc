#include "backend_select.h"
#include <gnuradio/gpuradar/device_buffer.h>
#include <gnuradio/logger.h>
#include <gpuradar/kernels/common/cuda_resources.h>
#include <gpuradar/kernels/common/device_split.h>
#include <mutex>
#include <stdexcept>
#include <string>

namespace gr {
namespace gpuradar {

kernels::backend select_backend(const std::string& requested, const char* block_name)
{
    if (requested == "cpu")
        return kernels::backend::cpu;
    if (requested == "cuda") {
        if (!kernels::cuda_available())
            throw kernels::cuda_error(std::string("gpuradar::") + block_name +
                                      ": backend 'cuda' requested but no usable CUDA "
                                      "device: " +
                                      kernels::cuda_unavailable_reason());
        return kernels::backend::cuda;
    }
    if (requested == "auto") {
        const bool cuda = kernels::cuda_available();
        static std::once_flag logged;
        std::call_once(logged, [cuda] {
            gr::logger log("gpuradar");
            if (cuda)
                log.info("backend auto: using CUDA on {}",
                         kernels::current_device_properties().name);
            else
                log.info("backend auto: running on the CPU, {}",
                         kernels::cuda_unavailable_reason());
        });
        return cuda ? kernels::backend::cuda : kernels::backend::cpu;
    }
    throw std::invalid_argument(std::string("gpuradar::") + block_name +
                                ": backend must be one of auto, cuda, cpu (got '" +
                                requested + "')");
}

int select_device(int device, kernels::backend b, const char* block_name)
{
    const bool cuda = b == kernels::backend::cuda;
    kernels::check_device_index(block_name,
                                device,
                                cuda ? kernels::cuda_device_count()
                                     : kernels::any_device_count);
    if (!cuda && device != 0)
        gr::logger(block_name)
            .info("device {} ignored: the CPU backend runs on the host", device);
    return device;
}

gr::io_signature::sptr stream_signature(kernels::backend b, std::size_t itemsize)
{
    if (b == kernels::backend::cuda)
        return gr::io_signature::make(1, 1, itemsize, device_buffer::type);
    return gr::io_signature::make(1, 1, itemsize);
}

unsigned int check_positive(const char* block_name, const char* param, unsigned int value)
{
    if (value < 1)
        throw std::invalid_argument(std::string("gpuradar::") + block_name + ": " +
                                    param + " must be >= 1 (got " +
                                    std::to_string(value) + ")");
    return value;
}

unsigned int
check_vlen(const char* block_name, unsigned int vlen, std::size_t element_bytes)
{
    check_positive(block_name, "vlen", vlen);
    check_item_size(block_name, { { "vlen", vlen } }, element_bytes);
    return vlen;
}

void check_item_size(const char* block_name,
                     std::initializer_list<kernels::size_factor> factors,
                     std::size_t element_bytes)
{
    kernels::check_buffer_size(block_name,
                               factors,
                               element_bytes,
                               "one stream item (GNU Radio's item size is an int)",
                               kernels::max_item_bytes);
}

} // namespace gpuradar
} // namespace gr
