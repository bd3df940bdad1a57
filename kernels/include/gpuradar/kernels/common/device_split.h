/* Splitting one stage's work over several GPUs: image row shares and device indices. */
#ifndef INCLUDED_GPURADAR_KERNELS_DEVICE_SPLIT_H
#define INCLUDED_GPURADAR_KERNELS_DEVICE_SPLIT_H

#include <cstddef>
#include <vector>

namespace gpuradar::kernels {

//! Rows [begin, end) of an image given to one device; begin == end is an empty share.
struct row_range {
    long long begin = 0;
    long long end = 0;
    long long rows() const { return end - begin; }
};

/*!
 * Splits `ny` image rows over `ndevices` devices, in order: share k starts where share
 * k-1 ends, so every row belongs to exactly one share. Rows go in whole groups of
 * `granule` rows (the last group may be shorter), and the group counts of two shares
 * differ by at most one: with granule 1 the shares differ by at most one row. When
 * there are more devices than groups the last shares are empty.
 * Throws std::invalid_argument naming the parameter when ny < 0, ndevices < 1 or
 * granule < 1.
 */
std::vector<row_range>
split_image_rows(long long ny, std::size_t ndevices, long long granule = 1);

//! check_device_index's count where the number of devices does not matter (the CPU
//! backend, which runs on the host whatever the index).
constexpr int any_device_count = -1;

/*!
 * Throws std::invalid_argument "gpuradar::<who>: device must be 0 to <count - 1> (got
 * <device>)" (or "... there is no CUDA device" when count is 0) unless
 * 0 <= device < count. With count any_device_count only a negative device is refused
 * ("device must be >= 0").
 */
void check_device_index(const char* who, int device, int count);

//! The number of CUDA devices this process can see; 0 without CUDA or a driver.
int cuda_device_count();

} // namespace gpuradar::kernels

#endif
