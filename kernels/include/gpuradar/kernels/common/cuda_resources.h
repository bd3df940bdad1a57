/*
 * RAII owners for CUDA handles (streams, device memory, pinned host memory) and
 * checked copies, behind an interface with no CUDA types so that GNU Radio blocks and
 * CPU-only builds include it with the host compiler. Raw create/destroy calls live only
 * in the matching .cu file. In a build without CUDA every constructor throws cuda_error.
 */
#ifndef INCLUDED_GPURADAR_KERNELS_CUDA_RESOURCES_H
#define INCLUDED_GPURADAR_KERNELS_CUDA_RESOURCES_H

#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>

namespace gpuradar::kernels {

//! A failed CUDA or cuFFT call: "<stage>: <call> failed: <name> (<description>)".
class cuda_error : public std::runtime_error
{
public:
    using std::runtime_error::runtime_error;
};

//! Non-owning handle of a CUDA stream (a cudaStream_t); null is the legacy default.
class stream_ref
{
public:
    stream_ref() = default;
    explicit stream_ref(void* native) : d_native(native) {}
    void* native() const { return d_native; }

private:
    void* d_native = nullptr;
};

//! Scheduling priority of a stream's kernels against other streams' (CUDA priorities).
enum class stream_priority {
    normal, //!< the device's least priority (the default of every stream)
    high //!< the device's greatest: its blocks are dispatched before pending normal ones
};

/*!
 * Makes `device` the calling thread's current CUDA device (what streams, memory and
 * kernels use) until destroyed, then restores the device that was current before. As
 * make_current, sets it only when another device is current, so a scope on the device
 * already current costs one cudaGetDevice. Without CUDA in the build: a no-op for
 * device 0, a cuda_error for any other.
 */
class device_scope
{
public:
    explicit device_scope(int device);
    ~device_scope();
    device_scope(const device_scope&) = delete;
    device_scope& operator=(const device_scope&) = delete;

private:
    int d_previous = 0;
    bool d_changed = false;
};

/*!
 * Makes `device` the calling thread's current CUDA device and leaves it so: for a GPU
 * block's own thread, which runs with its block's device throughout. Sets it only when
 * another device is current. Without CUDA in the build: a no-op for device 0, a
 * cuda_error for any other.
 */
void make_current(int device);

//! Owns one non-blocking CUDA stream on the current device.
class cuda_stream
{
public:
    cuda_stream();
    explicit cuda_stream(stream_priority priority);
    ~cuda_stream();
    cuda_stream(cuda_stream&& other) noexcept;
    cuda_stream& operator=(cuda_stream&& other) noexcept;
    cuda_stream(const cuda_stream&) = delete;
    cuda_stream& operator=(const cuda_stream&) = delete;

    stream_ref ref() const { return stream_ref(d_stream); }
    //! Blocks until all work queued on the stream has finished; throws on a CUDA error.
    void synchronize(const char* who) const;

private:
    void* d_stream = nullptr;
};

//! Where an owned_memory allocation lives.
enum class memory_kind {
    device, //!< device memory (cudaMalloc), uninitialised
    pinned, //!< page-locked host memory (cudaHostAlloc), the staging side of async copies
};

//! Allocates `bytes` of kind k (nullptr for 0); throws cuda_error naming the kind.
void* allocate_memory(memory_kind k, std::size_t bytes);
//! Frees what allocate_memory(k, ...) returned; a failure is logged, never thrown.
void release_memory(memory_kind k, void* p) noexcept;

//! Owns one allocation of kind K; movable, not copyable.
template <memory_kind K>
class owned_memory
{
public:
    owned_memory() = default;
    explicit owned_memory(std::size_t bytes)
        : d_ptr(allocate_memory(K, bytes)), d_bytes(bytes)
    {
    }
    ~owned_memory()
    {
        if (d_ptr)
            release_memory(K, d_ptr);
    }
    owned_memory(owned_memory&& other) noexcept
        : d_ptr(std::exchange(other.d_ptr, nullptr)),
          d_bytes(std::exchange(other.d_bytes, 0))
    {
    }
    owned_memory& operator=(owned_memory&& other) noexcept
    {
        std::swap(d_ptr, other.d_ptr);
        std::swap(d_bytes, other.d_bytes);
        return *this;
    }
    owned_memory(const owned_memory&) = delete;
    owned_memory& operator=(const owned_memory&) = delete;

    void* get() const { return d_ptr; }
    std::size_t size() const { return d_bytes; }
    template <typename T>
    T* as() const
    {
        return static_cast<T*>(d_ptr);
    }

private:
    void* d_ptr = nullptr;
    std::size_t d_bytes = 0;
};

using device_memory = owned_memory<memory_kind::device>;
using pinned_memory = owned_memory<memory_kind::pinned>;

//! Owns a CUDA event with timing enabled; for benchmarks and cross-stream ordering.
class cuda_event
{
public:
    cuda_event();
    ~cuda_event();
    cuda_event(cuda_event&& other) noexcept;
    cuda_event& operator=(cuda_event&& other) noexcept;
    cuda_event(const cuda_event&) = delete;
    cuda_event& operator=(const cuda_event&) = delete;

    void record(stream_ref stream);
    void synchronize() const;
    //! True when the event's last recorded work has completed (cudaEventQuery; no wait).
    bool done() const;
    //! Makes work queued on `stream` after this call wait until the event's last recorded
    //! work has completed (cudaStreamWaitEvent; no host-side wait).
    void make_stream_wait(stream_ref stream) const;
    //! Milliseconds between two recorded, completed events.
    static float elapsed_ms(const cuda_event& start, const cuda_event& stop);

private:
    void* d_event = nullptr;
};

//! Properties benchmarks and launch heuristics need, read off device 0.
struct device_properties {
    std::string name;
    int multiprocessors = 0;
    int compute_major = 0;
    int compute_minor = 0;
    std::size_t global_memory_bytes = 0;
    std::size_t l2_bytes = 0;
};
device_properties current_device_properties();

//! Device memory in use on the current device (total minus free, cudaMemGetInfo): all
//! allocations of the process and the context, for benchmarks' memory figures.
std::size_t device_memory_in_use();

enum class copy_kind { host_to_device, device_to_host, device_to_device };

//! cudaMemcpyAsync on `stream`, checked; `who` names the caller in errors.
void copy_async(void* dst,
                const void* src,
                std::size_t bytes,
                copy_kind kind,
                stream_ref stream,
                const char* who);

//! cudaStreamSynchronize on a stream someone else owns, checked.
void synchronize(stream_ref stream, const char* who);

//! Fill device memory with a byte value (cudaMemsetAsync), checked. Tests poison with it.
void fill_bytes_async(
    void* dst, int value, std::size_t bytes, stream_ref stream, const char* who);

} // namespace gpuradar::kernels

#endif
