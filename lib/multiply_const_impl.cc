/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "backend_select.h"
#include "multiply_const_impl.h"
#include <gnuradio/io_signature.h>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace gr {
namespace gpuradar {

namespace {
//! k itself, or std::invalid_argument naming k when either part is NaN or infinite (a
//! non-finite gain would turn every sample downstream into NaN).
gr_complex checked_k(gr_complex k)
{
    if (std::isfinite(k.real()) && std::isfinite(k.imag()))
        return k;
    std::ostringstream s;
    s << "gpuradar::multiply_const: k must be finite (got (" << k.real() << ", "
      << k.imag() << "))";
    throw std::invalid_argument(s.str());
}
} // namespace

multiply_const::sptr multiply_const::make(gr_complex k,
                                          unsigned int vlen,
                                          const std::string& backend,
                                          int device)
{
    checked_k(k);
    check_vlen("multiply_const", vlen, sizeof(gr_complex));
    const auto b = select_backend(backend, "multiply_const");
    return make_block_on_device<multiply_const_impl>(
        b, device, "multiply_const", k, vlen, b, device);
}

multiply_const_impl::multiply_const_impl(gr_complex k,
                                         unsigned int vlen,
                                         kernels::backend backend,
                                         int device)
    : gr::sync_block("multiply_const",
                     stream_signature(backend, vlen * sizeof(gr_complex)),
                     stream_signature(backend, vlen * sizeof(gr_complex))),
      gpu_stream_owner(
          backend, "multiply_const", kernels::stream_priority::normal, device),
      d_vlen(vlen),
      d_backend(backend),
      d_k(k),
      d_kernel(kernels::multiply_const::make(backend, stream()))
{
    if (backend == kernels::backend::cuda)
        size_output_buffer(*this, vlen * sizeof(gr_complex));
}

gr_complex multiply_const_impl::k() const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    return d_k;
}

void multiply_const_impl::set_k(gr_complex k)
{
    checked_k(k); // throws and keeps the old gain
    std::lock_guard<std::mutex> lock(d_mutex);
    d_k = k;
}

int multiply_const_impl::work(int noutput_items,
                              gr_vector_const_void_star& input_items,
                              gr_vector_void_star& output_items)
{
    begin_work(); // before any kernel touches the buffers
    const auto* in = static_cast<const gr_complex*>(input_items[0]);
    auto* out = static_cast<gr_complex*>(output_items[0]);
    d_kernel->run(in, out, std::size_t(noutput_items) * d_vlen, k());
    finish_work(noutput_items);
    return noutput_items;
}

} // namespace gpuradar
} // namespace gr
