/* -*- c++ -*- */
/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "backend_select.h"
#include "beamformer_impl.h"
#include "cpi_tag.h"
#include <gnuradio/io_signature.h>
#include <gpuradar/kernels/common/constants.h>
#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace gr {
namespace gpuradar {
namespace {

//! The fan of beams: azimuth_beams azimuths times nbeams elevations.
struct fan_grid {
    unsigned int azimuth_beams;
    double azimuth_first_deg, azimuth_last_deg;
    unsigned int nbeams;
    double first_deg, last_deg;
};

std::vector<kernels::position_m> array_elements(unsigned int nchannels,
                                                unsigned int rows,
                                                double spacing_wl,
                                                const std::vector<double>& xyz,
                                                double fc,
                                                double* wavelength_m)
{
    if (xyz.empty()) {
        *wavelength_m = 1.0; // the ULA / URA is laid out in wavelengths
        if (rows <= 1)
            return kernels::ula_positions(nchannels, spacing_wl, *wavelength_m);
        return kernels::ura_positions(
            nchannels / rows, rows, spacing_wl, spacing_wl, *wavelength_m);
    }
    if (!(fc > 0.0) || !std::isfinite(fc))
        throw std::invalid_argument(
            "gpuradar::beamformer: fc must be > 0 Hz with element_positions_m (got " +
            std::to_string(fc) + ")");
    *wavelength_m = kernels::speed_of_light / fc;
    return kernels::positions_from_xyz(xyz, nchannels);
}

/*!
 * The beams' directions: the listed azimuths with their elevations (all 0 when none
 * are listed), or the azimuth fan times the elevation fan (beam_grid_deg()'s order).
 */
kernels::beam_directions beam_directions_of(const std::vector<double>& beam_angles_deg,
                                            const std::vector<double>& elevations_deg,
                                            const fan_grid& fan)
{
    if (!beam_angles_deg.empty())
        return { beam_angles_deg,
                 elevations_deg.empty() ? std::vector<double>(beam_angles_deg.size(), 0.0)
                                        : elevations_deg };
    if (!elevations_deg.empty())
        throw std::invalid_argument(
            "gpuradar::beamformer: beam_elevations_deg needs beam_angles_deg (one "
            "elevation per listed beam); a fan's elevations are nbeams_el, "
            "fan_el_first_deg and fan_el_last_deg");
    check_positive("beamformer", "nbeams_el", fan.nbeams);
    kernels::check_elevation_deg(fan.first_deg, "beamformer", "fan_el_first_deg");
    kernels::check_elevation_deg(fan.last_deg, "beamformer", "fan_el_last_deg");
    return kernels::beam_grid_deg(
        kernels::beam_fan_deg(
            fan.azimuth_beams, fan.azimuth_first_deg, fan.azimuth_last_deg),
        kernels::beam_fan_deg(fan.nbeams, fan.first_deg, fan.last_deg));
}

} // namespace

beamformer::sptr beamformer::make(unsigned int nchannels,
                                  unsigned int nsamples,
                                  const std::vector<double>& beam_angles_deg,
                                  unsigned int nbeams,
                                  double fan_first_deg,
                                  double fan_last_deg,
                                  double element_spacing_wl,
                                  const std::vector<double>& element_positions_m,
                                  double fc,
                                  const std::string& window,
                                  int nbar,
                                  double sll_db,
                                  double beta,
                                  const std::string& backend,
                                  const std::vector<double>& beam_elevations_deg,
                                  unsigned int nbeams_el,
                                  double fan_el_first_deg,
                                  double fan_el_last_deg,
                                  unsigned int element_rows,
                                  int device,
                                  const std::string& input_type)
{
    // Every parameter is checked (by the kernels' functions) before anything is
    // allocated.
    check_positive("beamformer", "nchannels", nchannels);
    check_positive("beamformer", "nsamples", nsamples);
    check_positive("beamformer", "element_rows", element_rows);
    const auto input =
        kernels::parse_sample_format(input_type, "beamformer", "input_type");
    const std::size_t beams = beam_angles_deg.empty()
                                  ? std::size_t(nbeams) * std::max(nbeams_el, 1u)
                                  : beam_angles_deg.size();
    const char* const beams_name =
        beam_angles_deg.empty() ? "nbeams" : "beam_angles_deg entries";
    check_item_size("beamformer",
                    { { "nchannels", nchannels }, { "nsamples", nsamples } },
                    sizeof(gr_complex));
    check_item_size("beamformer",
                    { { beams_name, beams }, { "nsamples", nsamples } },
                    sizeof(gr_complex));
    kernels::check_buffer_size("beamformer",
                               { { beams_name, beams }, { "nchannels", nchannels } },
                               sizeof(gr_complex),
                               "the beam weights");
    const auto taper = kernels::array_taper(
        kernels::window_spec::make(window, nbar, sll_db, beta, "beamformer"),
        nchannels,
        element_rows);
    double wavelength_m = 0.0;
    const auto elements = array_elements(nchannels,
                                         element_rows,
                                         element_spacing_wl,
                                         element_positions_m,
                                         fc,
                                         &wavelength_m);
    const auto directions = beam_directions_of(beam_angles_deg,
                                               beam_elevations_deg,
                                               { nbeams,
                                                 fan_first_deg,
                                                 fan_last_deg,
                                                 nbeams_el,
                                                 fan_el_first_deg,
                                                 fan_el_last_deg });
    beamformer_config config{ nchannels, nsamples, directions, {}, {}, input };
    config.weights = kernels::steering_weights(elements, wavelength_m, directions, taper);
    for (auto p : elements) {
        for (auto& v : p)
            v /= wavelength_m;
        config.elements_wl.push_back(p);
    }
    const auto b = select_backend(backend, "beamformer");
    return make_block_on_device<beamformer_impl>(
        b, device, "beamformer", config, b, device);
}

beamformer_impl::beamformer_impl(const beamformer_config& config,
                                 kernels::backend backend,
                                 int device)
    : gr::sync_block("beamformer",
                     stream_signature(backend,
                                      std::size_t(config.nchannels) * config.nsamples *
                                          kernels::sample_bytes(config.input)),
                     stream_signature(backend,
                                      config.beams.azimuths_deg.size() * config.nsamples *
                                          sizeof(gr_complex))),
      gpu_stream_owner(backend, "beamformer", kernels::stream_priority::normal, device),
      d_beams(config.beams),
      d_backend(backend),
      d_geometry{ config.elements_wl,
                  config.beams.azimuths_deg,
                  config.beams.elevations_deg,
                  config.weights },
      d_kernel(kernels::beamformer::make(backend,
                                         config.nchannels,
                                         config.beams.azimuths_deg.size(),
                                         config.nsamples,
                                         config.weights,
                                         stream(),
                                         config.input))
{
    if (backend == kernels::backend::cuda)
        size_output_buffer(*this,
                           config.beams.azimuths_deg.size() * config.nsamples *
                               sizeof(gr_complex));
    // The cpi tag changes shape (channels become beams): tags are re-emitted by hand.
    set_tag_propagation_policy(TPP_DONT);
}

void beamformer_impl::forward_tags(int nitems)
{
    std::vector<gr::tag_t> tags;
    get_tags_in_range(tags, 0, nitems_read(0), nitems_read(0) + nitems);
    for (const auto& tag : tags) {
        pmt::pmt_t value = tag.value;
        if (pmt::eqv(tag.key, cpi_tag_key()) && pmt::is_dict(value)) {
            const auto nbeams = pmt::from_uint64(d_beams.azimuths_deg.size());
            value = pmt::dict_add(value, pmt::mp("channels"), nbeams);
            value = pmt::dict_add(value, pmt::mp("beams"), nbeams);
            value = add_beam_geometry(value, d_geometry);
        }
        // One item out per item in: the same absolute offset.
        add_item_tag(0, tag.offset, tag.key, value, tag.srcid);
    }
}

int beamformer_impl::work(int noutput_items,
                          gr_vector_const_void_star& input_items,
                          gr_vector_void_star& output_items)
{
    begin_work();                         // before any kernel touches the buffers
    d_kernel->run_samples(input_items[0], // in the input_type's format
                          static_cast<gr_complex*>(output_items[0]),
                          std::size_t(noutput_items));
    forward_tags(noutput_items);
    finish_work(noutput_items);
    return noutput_items;
}

} // namespace gpuradar
} // namespace gr
