/* The only place that creates and destroys CUDA handles (see cuda_resources.h). */
#include "common/cuda/cuda_check.h"
#include "common/factories.h"
#include <gpuradar/kernels/common/device_split.h>
#include <cstdio>
#include <cstdlib>
#include <utility>

namespace gpuradar::kernels {

namespace {
// Destructors must not throw: report and carry on.
void log_destroy_failure(cudaError_t err, const char* call)
{
    if (err != cudaSuccess && err != cudaErrorCudartUnloading)
        std::fprintf(stderr,
                     "gpuradar: %s failed in a destructor: %s (%s)\n",
                     call,
                     cudaGetErrorName(err),
                     cudaGetErrorString(err));
}
} // namespace

cuda_stream::cuda_stream()
{
    cudaStream_t s = nullptr;
    // Non-blocking: never serialised against the legacy default stream other code uses.
    GPURADAR_CUDA_CHECK("cuda_stream",
                        cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    d_stream = s;
}
cuda_stream::cuda_stream(stream_priority priority)
{
    int least = 0, greatest = 0;
    GPURADAR_CUDA_CHECK("cuda_stream",
                        cudaDeviceGetStreamPriorityRange(&least, &greatest));
    cudaStream_t s = nullptr;
    GPURADAR_CUDA_CHECK("cuda_stream",
                        cudaStreamCreateWithPriority(
                            &s,
                            cudaStreamNonBlocking,
                            priority == stream_priority::high ? greatest : least));
    d_stream = s;
}
cuda_stream::~cuda_stream()
{
    if (d_stream)
        log_destroy_failure(cudaStreamDestroy(static_cast<cudaStream_t>(d_stream)),
                            "cudaStreamDestroy");
}
cuda_stream::cuda_stream(cuda_stream&& o) noexcept
    : d_stream(std::exchange(o.d_stream, nullptr))
{
}
cuda_stream& cuda_stream::operator=(cuda_stream&& o) noexcept
{
    std::swap(d_stream, o.d_stream);
    return *this;
}
void cuda_stream::synchronize(const char* who) const
{
    GPURADAR_CUDA_CHECK(who, cudaStreamSynchronize(static_cast<cudaStream_t>(d_stream)));
}

void* allocate_memory(memory_kind k, std::size_t bytes)
{
    void* p = nullptr;
    if (bytes == 0)
        return p;
    if (k == memory_kind::device)
        GPURADAR_CUDA_CHECK("device_memory", cudaMalloc(&p, bytes));
    else
        GPURADAR_CUDA_CHECK("pinned_memory",
                            cudaHostAlloc(&p, bytes, cudaHostAllocDefault));
    return p;
}

void release_memory(memory_kind k, void* p) noexcept
{
    if (k == memory_kind::device)
        log_destroy_failure(cudaFree(p), "cudaFree");
    else
        log_destroy_failure(cudaFreeHost(p), "cudaFreeHost");
}

cuda_event::cuda_event()
{
    cudaEvent_t e = nullptr;
    GPURADAR_CUDA_CHECK("cuda_event", cudaEventCreate(&e));
    d_event = e;
}
cuda_event::~cuda_event()
{
    if (d_event)
        log_destroy_failure(cudaEventDestroy(static_cast<cudaEvent_t>(d_event)),
                            "cudaEventDestroy");
}
cuda_event::cuda_event(cuda_event&& o) noexcept
    : d_event(std::exchange(o.d_event, nullptr))
{
}
cuda_event& cuda_event::operator=(cuda_event&& o) noexcept
{
    std::swap(d_event, o.d_event);
    return *this;
}
void cuda_event::record(stream_ref stream)
{
    GPURADAR_CUDA_CHECK(
        "cuda_event",
        cudaEventRecord(static_cast<cudaEvent_t>(d_event), detail::native(stream)));
}
void cuda_event::synchronize() const
{
    GPURADAR_CUDA_CHECK("cuda_event",
                        cudaEventSynchronize(static_cast<cudaEvent_t>(d_event)));
}
bool cuda_event::done() const
{
    const cudaError_t e = cudaEventQuery(static_cast<cudaEvent_t>(d_event));
    if (e == cudaErrorNotReady)
        return false;
    GPURADAR_CUDA_CHECK("cuda_event", e);
    return true;
}
void cuda_event::make_stream_wait(stream_ref stream) const
{
    GPURADAR_CUDA_CHECK("cuda_event",
                        cudaStreamWaitEvent(detail::native(stream),
                                            static_cast<cudaEvent_t>(d_event),
                                            0));
}
float cuda_event::elapsed_ms(const cuda_event& start, const cuda_event& stop)
{
    float ms = 0;
    GPURADAR_CUDA_CHECK("cuda_event",
                        cudaEventElapsedTime(&ms,
                                             static_cast<cudaEvent_t>(start.d_event),
                                             static_cast<cudaEvent_t>(stop.d_event)));
    return ms;
}

device_properties current_device_properties()
{
    int dev = 0;
    GPURADAR_CUDA_CHECK("device_properties", cudaGetDevice(&dev));
    cudaDeviceProp p{};
    GPURADAR_CUDA_CHECK("device_properties", cudaGetDeviceProperties(&p, dev));
    device_properties out;
    out.name = p.name;
    out.multiprocessors = p.multiProcessorCount;
    out.compute_major = p.major;
    out.compute_minor = p.minor;
    out.global_memory_bytes = p.totalGlobalMem;
    out.l2_bytes = static_cast<std::size_t>(p.l2CacheSize);
    return out;
}

std::size_t device_memory_in_use()
{
    std::size_t free = 0, total = 0;
    GPURADAR_CUDA_CHECK("device_memory_in_use", cudaMemGetInfo(&free, &total));
    return total - free;
}

void copy_async(void* dst,
                const void* src,
                std::size_t bytes,
                copy_kind kind,
                stream_ref stream,
                const char* who)
{
    if (bytes == 0)
        return;
    const cudaMemcpyKind k = kind == copy_kind::host_to_device ? cudaMemcpyHostToDevice
                             : kind == copy_kind::device_to_host
                                 ? cudaMemcpyDeviceToHost
                                 : cudaMemcpyDeviceToDevice;
    GPURADAR_CUDA_CHECK(who, cudaMemcpyAsync(dst, src, bytes, k, detail::native(stream)));
}

void synchronize(stream_ref stream, const char* who)
{
    GPURADAR_CUDA_CHECK(who, cudaStreamSynchronize(detail::native(stream)));
}

void fill_bytes_async(
    void* dst, int value, std::size_t bytes, stream_ref stream, const char* who)
{
    if (bytes)
        GPURADAR_CUDA_CHECK(who,
                            cudaMemsetAsync(dst, value, bytes, detail::native(stream)));
}

namespace {
//! Makes `device` current, calling cudaSetDevice only when another device is current;
//! returns the device that was current before.
int switch_device(int device, const char* who)
{
    int previous = 0;
    GPURADAR_CUDA_CHECK(who, cudaGetDevice(&previous));
    if (previous != device)
        GPURADAR_CUDA_CHECK(who, cudaSetDevice(device));
    return previous;
}
} // namespace

device_scope::device_scope(int device)
    : d_previous(switch_device(device, "gpuradar::device_scope")),
      d_changed(d_previous != device)
{
}

device_scope::~device_scope()
{
    if (d_changed)
        cudaSetDevice(d_previous);
}

void make_current(int device) { switch_device(device, "gpuradar::make_current"); }

int cuda_device_count()
{
    int count = 0;
    return cudaGetDeviceCount(&count) == cudaSuccess ? count : 0;
}

namespace detail {
std::string probe_cuda_device()
{
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess || count < 1) {
        int driver = 0, runtime = 0;
        cudaDriverGetVersion(&driver); // leaves 0 when no driver is installed
        cudaRuntimeGetVersion(&runtime);
        return explain_cuda_unavailable(err != cudaSuccess ? cudaGetErrorName(err)
                                                           : "cudaErrorNoDevice",
                                        driver,
                                        runtime,
                                        std::getenv("CUDA_VISIBLE_DEVICES"));
    }
    // A context on the device proves the driver can run our code, not only count devices.
    err = cudaFree(nullptr);
    if (err != cudaSuccess)
        return std::string("cannot create a CUDA context: ") + cudaGetErrorName(err) +
               " (" + cudaGetErrorString(err) + ")";
    return {};
}
} // namespace detail

} // namespace gpuradar::kernels
