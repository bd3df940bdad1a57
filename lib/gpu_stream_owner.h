/* The CUDA stream a GPU block owns, shared with its device buffers (internal). */
#ifndef INCLUDED_GPURADAR_GPU_STREAM_OWNER_H
#define INCLUDED_GPURADAR_GPU_STREAM_OWNER_H

#include <gnuradio/block.h>
#include <gnuradio/gpuradar/device_buffer.h>
#include <gpuradar/kernels/backend.h>
#include <gpuradar/kernels/cuda_resources.h>
#include <memory>
#include <string>

namespace gr {
namespace gpuradar {

//! The DSP core (gpuradar-kernels), outside the gr namespace.
namespace kernels = ::gpuradar::kernels;

/*!
 * Base of every gpuradar block: on the CUDA backend it owns one stream, hands it to its
 * kernels objects and to the device buffers on its ports (device_stream_provider), and
 * waits for it once per work() call.
 */
class gpu_stream_owner : public device_stream_provider
{
public:
    gpu_stream_owner(kernels::backend b, const char* block_name)
        : d_block_name(std::string("gpuradar::") + block_name)
    {
        if (b == kernels::backend::cuda)
            d_stream = std::make_unique<kernels::cuda_stream>();
    }

    void* device_stream() const override
    {
        return d_stream ? d_stream->ref().native() : nullptr;
    }

protected:
    kernels::stream_ref stream() const
    {
        return d_stream ? d_stream->ref() : kernels::stream_ref();
    }

    /*!
     * Called at the end of work(): GNU Radio releases the input items and publishes the
     * output items as soon as work() returns, so the queued kernels must have finished.
     * No-op on the CPU backend.
     */
    void finish_work() const
    {
        if (d_stream)
            d_stream->synchronize(d_block_name.c_str());
    }

    /*!
     * Launches on the GPU amortise best over many items: ask GNU Radio for an output
     * buffer of at least device_buffer::min_bytes (it also caps noutput_items by it).
     */
    static void size_output_buffer(gr::block& blk, std::size_t itemsize)
    {
        const auto items = (device_buffer::min_bytes + itemsize - 1) / itemsize;
        blk.set_min_output_buffer(static_cast<long>(items));
    }

private:
    const std::string d_block_name;
    std::unique_ptr<kernels::cuda_stream> d_stream;
};

} // namespace gpuradar
} // namespace gr

#endif
