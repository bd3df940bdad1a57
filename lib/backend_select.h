/* Backend choice and port signatures shared by every gpuradar block (internal). */
#ifndef INCLUDED_GPURADAR_BACKEND_SELECT_H
#define INCLUDED_GPURADAR_BACKEND_SELECT_H

#include <gnuradio/io_signature.h>
#include <gpuradar/kernels/common/backend.h>
#include <gpuradar/kernels/common/buffer_size.h>
#include <initializer_list>
#include <cstddef>
#include <string>

namespace gr {
namespace gpuradar {

//! The DSP core (gpuradar-kernels), outside the gr namespace.
namespace kernels = ::gpuradar::kernels;

/*!
 * Resolves the `backend` parameter of block `block_name`:
 * "cpu" -> cpu; "cuda" -> cuda, or a kernels::cuda_error naming the block when no usable
 * device exists; "auto" -> cuda when a device exists, else cpu (logged once per process).
 * Anything else: std::invalid_argument naming the parameter and the allowed values.
 */
kernels::backend select_backend(const std::string& requested, const char* block_name);

/*!
 * Resolves the `device` parameter (CUDA device index) of block `block_name`, before
 * anything is allocated (kernels::check_device_index). CUDA: must be 0 to (visible
 * devices - 1), std::invalid_argument naming `device` and that range otherwise. CPU:
 * a negative index is refused the same way, any other is not used (a non-zero one is
 * logged). Returns the device.
 */
int select_device(int device, kernels::backend b, const char* block_name);

/*!
 * Port signature for one stream of `itemsize` bytes: device_buffer ports on the CUDA
 * backend, GNU Radio's default host buffers on the CPU backend.
 */
gr::io_signature::sptr stream_signature(kernels::backend b, std::size_t itemsize);

//! std::invalid_argument "gpuradar::<block>: vlen must be >= 1 (got <vlen>)" when 0, or
//! naming vlen and the memory when an item of vlen `element_bytes`-byte samples exceeds
//! kernels::max_item_bytes.
unsigned int
check_vlen(const char* block_name, unsigned int vlen, std::size_t element_bytes);

//! std::invalid_argument naming the factors and the memory (kernels::check_buffer_size)
//! when one stream item, their product times element_bytes, exceeds
//! kernels::max_item_bytes: io_signature takes the item size as an int.
void check_item_size(const char* block_name,
                     std::initializer_list<kernels::size_factor> factors,
                     std::size_t element_bytes);

//! std::invalid_argument "gpuradar::<block>: <param> must be >= 1 (got <value>)" when 0.
unsigned int
check_positive(const char* block_name, const char* param, unsigned int value);

} // namespace gpuradar
} // namespace gr

#endif
