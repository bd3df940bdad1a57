/* The `cpi` stream tag (CONVENTIONS.md, Streams and the CPI): read, check and re-emit
 * (internal). */
#ifndef INCLUDED_GPURADAR_CPI_TAG_H
#define INCLUDED_GPURADAR_CPI_TAG_H

#include <pmt/pmt.h>
#include <cstdint>
#include <string>

namespace gr {
namespace gpuradar {

//! The tag key, "cpi". The fields are listed in docs/CONVENTIONS.md (the `cpi` tag
//! fields); pulse_framer always sets the counts of the samples its copy screened:
//! nonfinite_samples (written as 0), clamped_samples (fc32 parts beyond
//! +-kernels::framer_clamp_level, clamped) and saturated_samples (sc16 / sc8 parts at
//! +-full scale), all u64.
pmt::pmt_t cpi_tag_key();

//! A new cpi dict for blocks that saw no tag: index, npulses, nrange.
pmt::pmt_t
make_cpi_dict(std::uint64_t index, std::uint64_t npulses, std::uint64_t nrange);

//! Integer field of a cpi dict, or `fallback` when absent or not an integer.
std::uint64_t cpi_field(const pmt::pmt_t& dict, const char* key, std::uint64_t fallback);

//! Double field of a cpi dict (PMT real or integer), or `fallback` when absent.
double cpi_double(const pmt::pmt_t& dict, const char* key, double fallback);
//! True when the cpi dict holds `key`.
bool cpi_has(const pmt::pmt_t& dict, const char* key);
//! The dict's rx_time tuple (u64 seconds, double fraction) as seconds; false when absent
//! or of another shape.
bool cpi_rx_time_seconds(const pmt::pmt_t& dict, double* seconds);

//! False when the dict's npulses / nrange (where present) differ from the block's shape.
bool cpi_shape_matches(const pmt::pmt_t& dict,
                       std::uint64_t npulses,
                       std::uint64_t nrange);

//! The dict with the Doppler filter's axis added: ndoppler (u64) and fftshift (bool).
pmt::pmt_t
with_doppler_axis(const pmt::pmt_t& dict, std::uint64_t ndoppler, bool fftshift);

} // namespace gpuradar
} // namespace gr

#endif
