/* cuda_resources: device_memory_in_use follows allocations (soak leak checks rely on it)
 * and fails cleanly without a device; why there is no device, in a user's words. */
#include "common/factories.h"
#include "test_support.h"
#include <gpuradar/kernels/common/cuda_resources.h>
#include <gtest/gtest.h>
#include <string>

namespace gpuradar::test {
namespace {

constexpr std::size_t mib = std::size_t(1) << 20;

TEST(DeviceMemoryQueryWithoutGpu, test_001_memory_query_throws_naming_itself)
{
    if (kernels::cuda_available())
        GTEST_SKIP() << "a CUDA device is present (CudaResources covers it)";
    try {
        kernels::device_memory_in_use();
        FAIL() << "device_memory_in_use returned without a device";
    } catch (const kernels::cuda_error& e) {
        EXPECT_NE(std::string(e.what()).find("device_memory_in_use"), std::string::npos)
            << e.what();
    }
}

TEST(NoGpuReason, test_002_each_probe_outcome_in_words)
{
    using kernels::detail::explain_cuda_unavailable;
    EXPECT_EQ(explain_cuda_unavailable("cudaErrorInsufficientDriver", 0, 13000, nullptr),
              "no NVIDIA driver found: this machine has no NVIDIA GPU, or its driver is "
              "not installed (cudaErrorInsufficientDriver)");
    EXPECT_EQ(
        explain_cuda_unavailable("cudaErrorInsufficientDriver", 12020, 13000, nullptr),
        "the NVIDIA driver supports CUDA 12.2, older than the CUDA 13.0 gr-gpuradar "
        "was built with: install a newer NVIDIA driver (cudaErrorInsufficientDriver)");
    EXPECT_EQ(explain_cuda_unavailable("cudaErrorNoDevice", 13000, 13000, nullptr),
              "no NVIDIA GPU found: the NVIDIA driver is installed but sees no GPU "
              "(cudaErrorNoDevice)");
    EXPECT_EQ(
        explain_cuda_unavailable("cudaErrorNoDevice", 13000, 13000, "-1"),
        "no NVIDIA GPU visible: CUDA_VISIBLE_DEVICES='-1' hides the GPUs the driver "
        "sees (cudaErrorNoDevice)");
    EXPECT_EQ(
        explain_cuda_unavailable("cudaErrorSystemDriverMismatch", 13000, 13000, nullptr),
        "the NVIDIA driver's kernel module and its library differ in version (after "
        "a driver update, reboot) (cudaErrorSystemDriverMismatch)");
    EXPECT_EQ(explain_cuda_unavailable("cudaErrorUnknown", 13000, 13000, nullptr),
              "the NVIDIA GPU cannot be used (cudaErrorUnknown)");
}

TEST(NoGpuReason, test_003_this_machines_reason_is_in_words)
{
    if (kernels::cuda_available())
        GTEST_SKIP() << "a CUDA device is present: nothing to explain";
    const std::string reason = kernels::cuda_unavailable_reason();
#ifndef GPURADAR_HAVE_CUDA
    EXPECT_NE(reason.find("built without CUDA"), std::string::npos) << reason;
    return;
#endif
    // The probe's outcome goes through the explanation, never the raw runtime text.
    EXPECT_TRUE(reason.rfind("no NVIDIA ", 0) == 0 || reason.rfind("the NVIDIA ", 0) == 0)
        << reason;
    EXPECT_EQ(reason.find("cudaGetDeviceCount"), std::string::npos) << reason;
}

TEST(CudaResources, test_010_memory_in_use_follows_allocations)
{
    GPURADAR_REQUIRE_CUDA();
    constexpr std::size_t bytes = 256 * mib;
    kernels::device_memory warm(mib); // the context exists before the first reading
    const std::size_t before = kernels::device_memory_in_use();
    std::size_t during = 0;
    {
        kernels::device_memory block(bytes);
        during = kernels::device_memory_in_use();
    }
    const std::size_t after = kernels::device_memory_in_use();
    // The allocator rounds up to its page size (2 MiB) and may add bookkeeping; other
    // contexts on the device could move the figure, hence a margin, far below 256 MiB.
    EXPECT_GE(during, before + bytes);
    EXPECT_LE(during, before + bytes + 32 * mib);
    EXPECT_LE(after, before + 32 * mib) << "freed memory still counted as in use";
}

} // namespace
} // namespace gpuradar::test
