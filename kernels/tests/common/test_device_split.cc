/*
 * split_image_rows: property tests over many random (ny, devices, granule) cases and
 * the edges (no rows, more devices than rows); check_device_index's range and message.
 */
#include "invalid_argument_check.h"
#include <gpuradar/kernels/common/device_split.h>
#include <gtest/gtest.h>
#include <algorithm>
#include <random>
#include <vector>

namespace gpuradar::test {
namespace {

using kernels::row_range;
using kernels::split_image_rows;

//! Every property of a split, with the case in each failure message.
void expect_valid_split(long long ny, std::size_t ndev, long long granule)
{
    SCOPED_TRACE("ny=" + std::to_string(ny) + " devices=" + std::to_string(ndev) +
                 " granule=" + std::to_string(granule));
    const std::vector<row_range> s = split_image_rows(ny, ndev, granule);
    ASSERT_EQ(s.size(), ndev);
    // Contiguous, in order, from 0 to ny: every row exactly once.
    EXPECT_EQ(s.front().begin, 0);
    EXPECT_EQ(s.back().end, ny);
    std::vector<int> seen(static_cast<std::size_t>(ny), 0);
    for (std::size_t k = 0; k < ndev; ++k) {
        EXPECT_LE(s[k].begin, s[k].end);
        if (k > 0)
            EXPECT_EQ(s[k].begin, s[k - 1].end);
        // Shares start on a group boundary (or are empty at the end).
        if (s[k].rows() > 0)
            EXPECT_EQ(s[k].begin % granule, 0);
        for (long long r = s[k].begin; r < s[k].end; ++r)
            ++seen[static_cast<std::size_t>(r)];
    }
    EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
    // Balanced: group counts within one of each other.
    long long lo = ny, hi = 0;
    for (const row_range& r : s) {
        const long long groups = (r.rows() + granule - 1) / granule;
        lo = std::min(lo, groups);
        hi = std::max(hi, groups);
    }
    EXPECT_LE(hi - lo, 1);
}

TEST(DeviceSplit, test_001_random_cases_cover_every_row_once_balanced)
{
    std::mt19937 rng(20261125);
    std::uniform_int_distribution<long long> rows(0, 5000);
    std::uniform_int_distribution<int> devices(1, 9);
    std::uniform_int_distribution<int> granules(0, 2);
    const long long granule_choice[] = { 1, 7, 32 };
    for (int i = 0; i < 500; ++i)
        expect_valid_split(rows(rng), devices(rng), granule_choice[granules(rng)]);
}

TEST(DeviceSplit, test_002_one_row_granule_balances_within_one_row)
{
    for (long long ny : { 1LL, 2LL, 5LL, 64LL, 1001LL })
        for (std::size_t ndev = 1; ndev <= 8; ++ndev) {
            const auto s = split_image_rows(ny, ndev);
            long long lo = ny, hi = 0;
            for (const row_range& r : s) {
                lo = std::min(lo, r.rows());
                hi = std::max(hi, r.rows());
            }
            EXPECT_LE(hi - lo, 1) << "ny=" << ny << " devices=" << ndev;
            expect_valid_split(ny, ndev, 1);
        }
}

TEST(DeviceSplit, test_003_edges_one_device_no_rows_more_devices_than_rows)
{
    const auto one = split_image_rows(100, 1, 32);
    ASSERT_EQ(one.size(), 1u);
    EXPECT_EQ(one[0].begin, 0);
    EXPECT_EQ(one[0].end, 100);

    for (const row_range& r : split_image_rows(0, 3))
        EXPECT_EQ(r.rows(), 0);

    // 3 rows, 5 devices: three shares of one row, then two empty ones.
    const auto many = split_image_rows(3, 5);
    const long long expected[] = { 1, 1, 1, 0, 0 };
    for (int k = 0; k < 5; ++k)
        EXPECT_EQ(many[k].rows(), expected[k]) << "share " << k;

    // 40 rows in groups of 32 over 2 devices: the tile rows stay whole, 32 + 8.
    const auto tiles = split_image_rows(40, 2, 32);
    EXPECT_EQ(tiles[0].rows(), 32);
    EXPECT_EQ(tiles[1].rows(), 8);
}

TEST(DeviceSplit, test_004_bad_arguments_name_the_parameter)
{
    expect_invalid([] { split_image_rows(-1, 2); }, "ny must be >= 0");
    expect_invalid([] { split_image_rows(10, 0); }, "ndevices must be >= 1");
    expect_invalid([] { split_image_rows(10, 2, 0); }, "granule must be >= 1");
}

TEST(DeviceSplit, test_005_device_index_range)
{
    EXPECT_NO_THROW(kernels::check_device_index("stage", 0, 1));
    EXPECT_NO_THROW(kernels::check_device_index("stage", 3, 4));
    expect_invalid([] { kernels::check_device_index("stage", -1, 2); },
                   "device must be 0 to 1 (got -1)",
                   "gpuradar::stage");
    expect_invalid([] { kernels::check_device_index("stage", 2, 2); },
                   "device must be 0 to 1 (got 2)",
                   "gpuradar::stage");
    expect_invalid([] { kernels::check_device_index("stage", 0, 0); },
                   "there is no CUDA device",
                   "gpuradar::stage");
    // The CPU backend's form: any index >= 0, a negative one refused.
    EXPECT_NO_THROW(kernels::check_device_index("stage", 7, kernels::any_device_count));
    expect_invalid(
        [] { kernels::check_device_index("stage", -1, kernels::any_device_count); },
        "device must be >= 0 (got -1)",
        "gpuradar::stage");
}

} // namespace
} // namespace gpuradar::test
