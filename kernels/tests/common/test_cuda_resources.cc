/* cuda_resources: device_memory_in_use follows allocations (soak leak checks rely on it)
 * and fails cleanly without a device. */
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
