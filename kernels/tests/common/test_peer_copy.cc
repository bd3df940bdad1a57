/*
 * copy_peer_async between the memories of two devices, on one GPU (device 0 to device
 * 0): both routes, direct (cudaMemcpyPeerAsync) and staged through pinned host memory,
 * deliver exactly the source bytes into a poisoned destination, at an offset, and
 * nothing outside the copied range. With two or more GPUs, device 0 to device 1 as well.
 * Without CUDA in the build or a device the suite is skipped.
 */
#include "test_support.h"
#include <gpuradar/kernels/common/device_split.h>
#include <gpuradar/kernels/common/peer_copy.h>
#include <cmath>
#include <cstring>

namespace gpuradar::test {
namespace {

//! Copies n samples of fresh random data from device `from` to offset `at` of a
//! poisoned buffer on device `to` by `route`; checks the copy and the untouched rest.
void check_copy(
    int from, int to, kernels::peer_route route, std::size_t n, std::size_t at)
{
    const auto x = random_complex(n, 91 + unsigned(route));
    kernels::device_memory src, dst;
    {
        kernels::device_scope on(from);
        kernels::cuda_stream s;
        src = to_device(x, s);
    }
    kernels::device_scope on(to);
    kernels::cuda_stream s;
    dst = kernels::device_memory((n + 2 * at) * sizeof(cfloat));
    poison(dst, s);
    kernels::pinned_memory staging(n * sizeof(cfloat));
    kernels::copy_peer_async(dst.as<cfloat>() + at,
                             to,
                             src.get(),
                             from,
                             n * sizeof(cfloat),
                             route,
                             staging.get(),
                             s.ref(),
                             "test");
    const auto y = to_host<cfloat>(dst, n + 2 * at, s);
    EXPECT_EQ(std::memcmp(y.data() + at, x.data(), n * sizeof(cfloat)), 0);
    for (std::size_t i = 0; i < at; ++i) {
        EXPECT_TRUE(std::isnan(y[i].real())) << "before the copy, " << i;
        EXPECT_TRUE(std::isnan(y[n + at + i].real())) << "after the copy, " << i;
    }
}

TEST(PeerCopyCuda, test_001_one_device_both_routes)
{
    GPURADAR_REQUIRE_CUDA();
    EXPECT_EQ(kernels::route_between(0, 0), kernels::peer_route::direct);
    check_copy(0, 0, kernels::peer_route::direct, 100003, 17);
    check_copy(0, 0, kernels::peer_route::staged, 100003, 17);
}

TEST(PeerCopyCuda, test_002_two_devices_when_present)
{
    GPURADAR_REQUIRE_CUDA();
    if (kernels::cuda_device_count() < 2)
        GTEST_SKIP() << "needs two CUDA devices";
    const auto route = kernels::route_between(0, 1);
    check_copy(0, 1, route, 1 << 20, 5);
    check_copy(1, 0, kernels::route_between(1, 0), 1 << 20, 5);
    check_copy(0, 1, kernels::peer_route::staged, 1 << 20, 5);
}

} // namespace
} // namespace gpuradar::test
