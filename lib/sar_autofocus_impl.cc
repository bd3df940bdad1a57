/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "backend_select.h"
#include "sar_autofocus_impl.h"
#include <gnuradio/io_signature.h>
#include <stdexcept>

namespace gr {
namespace gpuradar {

namespace {

const pmt::pmt_t autofocus_port = pmt::mp("autofocus");

bool azimuth_along_x(const std::string& axis)
{
    if (axis == "x")
        return true;
    if (axis == "y")
        return false;
    throw std::invalid_argument("gpuradar::sar_autofocus: azimuth_axis must be \"x\" or "
                                "\"y\" (got \"" +
                                axis + "\")");
}

} // namespace

sar_autofocus::sptr sar_autofocus::make(unsigned int nx,
                                        unsigned int ny,
                                        const std::string& azimuth_axis,
                                        const std::string& method,
                                        int max_iterations,
                                        double tolerance_rad,
                                        unsigned int min_window,
                                        const std::string& backend,
                                        int device)
{
    // Validate every parameter before anything is allocated.
    check_positive("sar_autofocus", "nx", nx);
    check_positive("sar_autofocus", "ny", ny);
    check_item_size("sar_autofocus", { { "nx", nx } }, sizeof(gr_complex));
    const bool along_x = azimuth_along_x(azimuth_axis);
    kernels::autofocus::options o;
    o.algorithm = kernels::autofocus::parse_method(method);
    o.max_iterations = max_iterations;
    o.tolerance_rad = tolerance_rad;
    o.min_window = min_window;
    o.azimuth_contiguous = along_x;
    const std::size_t naz = along_x ? nx : ny, nrange = along_x ? ny : nx;
    if (naz < 8) // named as the block's parameter, not the kernel's naz
        throw std::invalid_argument(
            std::string("gpuradar::sar_autofocus: ") + (along_x ? "nx" : "ny") +
            " must be >= 8 with azimuth_axis \"" + azimuth_axis +
            "\" (the azimuth samples; got " + std::to_string(naz) + ")");
    kernels::autofocus::validate(nrange, naz, o);
    const auto b = select_backend(backend, "sar_autofocus");
    return make_block_on_device<sar_autofocus_impl>(
        b, device, "sar_autofocus", nx, ny, o, b, device);
}

sar_autofocus_impl::sar_autofocus_impl(unsigned int nx,
                                       unsigned int ny,
                                       const kernels::autofocus::options& o,
                                       kernels::backend backend,
                                       int device)
    : gr::sync_block("sar_autofocus",
                     stream_signature(backend, nx * sizeof(gr_complex)),
                     stream_signature(backend, nx * sizeof(gr_complex))),
      gpu_stream_owner(
          backend, "sar_autofocus", kernels::stream_priority::normal, device),
      d_ny(ny),
      d_image_samples(std::size_t(nx) * ny),
      d_backend(backend),
      d_kernel(kernels::autofocus::make(backend,
                                        o.azimuth_contiguous ? ny : nx,
                                        o.azimuth_contiguous ? nx : ny,
                                        o,
                                        stream()))
{
    set_output_multiple(int(ny)); // whole images in every call
    message_port_register_out(autofocus_port);
}

void sar_autofocus_impl::report(const kernels::autofocus_result& r)
{
    (r.converged ? d_converged : d_unconverged)++;
    if (!r.converged)
        d_logger->warn("image {}: left unfocused: {}", d_images, r.reason);
    pmt::pmt_t d = pmt::make_dict();
    d = pmt::dict_add(d, pmt::mp("image"), pmt::from_uint64(d_images));
    d = pmt::dict_add(d, pmt::mp("iterations"), pmt::from_long(r.iterations));
    d = pmt::dict_add(d, pmt::mp("converged"), pmt::from_bool(r.converged));
    d = pmt::dict_add(
        d, pmt::mp("correction_rms_rad"), pmt::from_double(r.last_correction_rms));
    d = pmt::dict_add(
        d, pmt::mp("nonfinite_samples"), pmt::from_uint64(r.nonfinite_samples));
    d = pmt::dict_add(d, pmt::mp("reason"), pmt::mp(r.reason));
    d = pmt::dict_add(d,
                      pmt::mp("phase_error_rad"),
                      pmt::init_f64vector(r.phase_error.size(), r.phase_error));
    message_port_pub(autofocus_port, d);
    ++d_images;
}

int sar_autofocus_impl::work(int noutput_items,
                             gr_vector_const_void_star& input_items,
                             gr_vector_void_star& output_items)
{
    begin_work(); // before any kernel touches the buffers
    const auto* in = static_cast<const gr_complex*>(input_items[0]);
    auto* out = static_cast<gr_complex*>(output_items[0]);
    const int images = noutput_items / int(d_ny);
    for (int i = 0; i < images; ++i) {
        const std::size_t at = std::size_t(i) * d_image_samples;
        report(d_kernel->run(in + at, out + at));
    }
    finish_work(images * int(d_ny));
    return images * int(d_ny);
}

} // namespace gpuradar
} // namespace gr
