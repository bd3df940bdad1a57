/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "backend_select.h"
#include "envelope_impl.h"
#include <gnuradio/io_signature.h>

namespace gr {
namespace gpuradar {

envelope::sptr envelope::make(unsigned int vlen,
                              const std::string& mode,
                              bool db,
                              const std::string& backend,
                              int device)
{
    // Validate every parameter before anything is allocated.
    check_vlen("envelope", vlen, sizeof(gr_complex));
    const auto m = kernels::envelope::parse_mode(mode);
    const auto b = select_backend(backend, "envelope");
    return make_block_on_device<envelope_impl>(
        b, device, "envelope", vlen, m, db, b, device);
}

envelope_impl::envelope_impl(unsigned int vlen,
                             kernels::envelope::mode mode,
                             bool db,
                             kernels::backend backend,
                             int device)
    : gr::sync_block("envelope",
                     stream_signature(backend, vlen * sizeof(gr_complex)),
                     stream_signature(backend, vlen * sizeof(float))),
      gpu_stream_owner(backend, "envelope", kernels::stream_priority::normal, device),
      d_vlen(vlen),
      d_backend(backend),
      d_kernel(kernels::envelope::make(backend, mode, db, stream()))
{
    if (backend == kernels::backend::cuda)
        size_output_buffer(*this, vlen * sizeof(float));
}

int envelope_impl::work(int noutput_items,
                        gr_vector_const_void_star& input_items,
                        gr_vector_void_star& output_items)
{
    begin_work(); // before any kernel touches the buffers
    const auto* in = static_cast<const gr_complex*>(input_items[0]);
    auto* out = static_cast<float*>(output_items[0]);
    d_kernel->run(in, out, std::size_t(noutput_items) * d_vlen);
    finish_work(noutput_items);
    return noutput_items;
}

} // namespace gpuradar
} // namespace gr
