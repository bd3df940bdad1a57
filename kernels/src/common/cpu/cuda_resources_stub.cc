/* CPU-only builds: the CUDA resource types exist but cannot be made. */
#include <gpuradar/kernels/common/cuda_resources.h>
#include <gpuradar/kernels/common/device_split.h>
#include <gpuradar/kernels/common/peer_copy.h>

namespace gpuradar::kernels {
namespace {
[[noreturn]] void no_cuda(const char* what)
{
    throw cuda_error(std::string(what) +
                     ": gr-gpuradar was built without CUDA; use backend 'cpu'");
}

//! Device 0 stands for the host: a no-op; any other device cannot be made current.
void require_device_0(int device, const char* what)
{
    if (device != 0)
        no_cuda(what);
}
} // namespace

cuda_stream::cuda_stream() { no_cuda("cuda_stream"); }
cuda_stream::cuda_stream(stream_priority) { no_cuda("cuda_stream"); }
cuda_stream::~cuda_stream() = default;
cuda_stream::cuda_stream(cuda_stream&&) noexcept = default;
cuda_stream& cuda_stream::operator=(cuda_stream&&) noexcept = default;
void cuda_stream::synchronize(const char*) const {}

void* allocate_memory(memory_kind k, std::size_t)
{
    no_cuda(k == memory_kind::device ? "device_memory" : "pinned_memory");
}
void release_memory(memory_kind, void*) noexcept {}

cuda_event::cuda_event() { no_cuda("cuda_event"); }
cuda_event::~cuda_event() = default;
cuda_event::cuda_event(cuda_event&&) noexcept = default;
cuda_event& cuda_event::operator=(cuda_event&&) noexcept = default;
void cuda_event::record(stream_ref) {}
void cuda_event::synchronize() const {}
bool cuda_event::done() const { return true; }
void cuda_event::make_stream_wait(stream_ref) const {}
float cuda_event::elapsed_ms(const cuda_event&, const cuda_event&) { return 0; }
device_properties current_device_properties() { no_cuda("device_properties"); }
std::size_t device_memory_in_use() { no_cuda("device_memory_in_use"); }
int cuda_device_count() { return 0; }
device_scope::device_scope(int device) { require_device_0(device, "device_scope"); }
device_scope::~device_scope() = default;
void make_current(int device) { require_device_0(device, "make_current"); }
peer_route route_between(int, int) { no_cuda("route_between"); }
void copy_peer_async(void*,
                     int,
                     const void*,
                     int,
                     std::size_t,
                     peer_route,
                     void*,
                     stream_ref,
                     const char* who)
{
    no_cuda(who);
}

void copy_async(void*, const void*, std::size_t, copy_kind, stream_ref, const char* who)
{
    no_cuda(who);
}
void synchronize(stream_ref, const char* who) { no_cuda(who); }
void fill_bytes_async(void*, int, std::size_t, stream_ref, const char* who)
{
    no_cuda(who);
}

} // namespace gpuradar::kernels
