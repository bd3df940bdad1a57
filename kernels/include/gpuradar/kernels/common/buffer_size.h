/* Buffer sizes from parameters: multiplied with overflow detection and checked against
 * the limits below before anything is allocated. */
#ifndef INCLUDED_GPURADAR_KERNELS_BUFFER_SIZE_H
#define INCLUDED_GPURADAR_KERNELS_BUFFER_SIZE_H

#include <initializer_list>
#include <climits>
#include <cstddef>

namespace gpuradar::kernels {

/*!
 * Most elements in one buffer: 2^31 - 1. FFTW and cuFFT plans take their lengths,
 * batches and distances as int, and GNU Radio counts items in int; a CPI that fits this
 * limit keeps every one of those in range.
 */
constexpr std::size_t max_buffer_elements = std::size_t(INT_MAX);

/*!
 * Most bytes in one buffer: 8 GiB (2^30 complex float). A stage holds a few buffers of
 * this size and GNU Radio double-buffers each stream, so several still fit a GPU's
 * memory; anything larger is taken for a typo in a size parameter, not a radar.
 */
constexpr std::size_t max_buffer_bytes = std::size_t(8) << 30;

/*!
 * Most bytes in one GNU Radio stream item: 2^31 - 1 (io_signature takes the item size as
 * an int).
 */
constexpr std::size_t max_item_bytes = std::size_t(INT_MAX);

//! One factor of a buffer's size: the parameter (or quantity) it comes from, and its
//! value.
struct size_factor {
    const char* name;
    std::size_t value;
};

/*!
 * \brief Elements of a buffer of the product of `factors`, checked.
 *
 * Multiplies the factors with overflow detection. Throws std::invalid_argument
 * "gpuradar::<stage>: <f1> * <f2> ... must be at most <N> elements (...) for <buffer>
 * (got <f1> = <v1>, ..., which would need <X> GiB)" when the product overflows, exceeds
 * max_buffer_elements, or its bytes (element_bytes each) exceed `max_bytes`.
 *
 * \param stage          stage or block name for the message
 * \param factors        the parameters whose product is the element count
 * \param element_bytes  bytes per element (sizeof(cfloat) = 8, sizeof(float) = 4, ...)
 * \param buffer         what the buffer is, for the message ("the CPI", "a stream item")
 * \param max_bytes      byte limit (max_buffer_bytes, or max_item_bytes for an item)
 * \return the element count (fits max_buffer_elements)
 */
std::size_t check_buffer_size(const char* stage,
                              std::initializer_list<size_factor> factors,
                              std::size_t element_bytes,
                              const char* buffer,
                              std::size_t max_bytes = max_buffer_bytes);

} // namespace gpuradar::kernels

#endif
