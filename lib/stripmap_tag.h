/* The `stripmap` stream tag (docs/CONVENTIONS.md): the acquisition parameters of a
 * stripmap pulse stream, shared by stripmap_source and sar_focus (internal). */
#ifndef INCLUDED_GPURADAR_STRIPMAP_TAG_H
#define INCLUDED_GPURADAR_STRIPMAP_TAG_H

#include <gnuradio/gpuradar/stripmap_acquisition.h>
#include <gpuradar/kernels/sar/stripmap.h>
#include <pmt/pmt.h>
#include <cstdint>

namespace gr {
namespace gpuradar {

namespace kernels = ::gpuradar::kernels;

//! The tag key, "stripmap".
pmt::pmt_t stripmap_tag_key();

//! The blocks' acquisition arguments, validated (std::invalid_argument
//! "gpuradar::<block_name>: <param> ..." naming the parameter).
kernels::stripmap_params make_stripmap_params(const char* block_name,
                                              const stripmap_acquisition& a);

/*!
 * The tag's dict: fc, bandwidth, pulse_width, up_chirp, fs, prf, velocity, altitude,
 * r0 (near range), nrange, squint, antenna_length, y0 (along-track position of the
 * tagged item, m), dy (velocity / prf, m) and pulse (the tagged item's pulse number).
 */
pmt::pmt_t
stripmap_dict(const kernels::stripmap_params& p, double y0, std::uint64_t pulse);

//! False when a parameter the dict holds differs from `p` (relative 1e-9; absent
//! fields are not compared). Not a dict: false.
bool stripmap_dict_matches(const pmt::pmt_t& dict, const kernels::stripmap_params& p);

} // namespace gpuradar
} // namespace gr

#endif
