/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "backend_select.h"
#include "multiply_const_impl.h"
#include <gnuradio/io_signature.h>

namespace gr {
namespace gpuradar {

multiply_const::sptr
multiply_const::make(gr_complex k, unsigned int vlen, const std::string& backend)
{
    check_vlen("multiply_const", vlen);
    const auto b = select_backend(backend, "multiply_const");
    return gnuradio::make_block_sptr<multiply_const_impl>(k, vlen, b);
}

multiply_const_impl::multiply_const_impl(gr_complex k,
                                         unsigned int vlen,
                                         kernels::backend backend)
    : gr::sync_block("multiply_const",
                     stream_signature(backend, vlen * sizeof(gr_complex)),
                     stream_signature(backend, vlen * sizeof(gr_complex))),
      gpu_stream_owner(backend, "multiply_const"),
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
