/* UHD's time stamps (rx_time, tx_time) as PMT (internal). */
#ifndef INCLUDED_GPURADAR_UHD_TIME_H
#define INCLUDED_GPURADAR_UHD_TIME_H

#include <gpuradar/kernels/waveform/pulse_timing.h>
#include <pmt/pmt.h>

namespace gr {
namespace gpuradar {

//! UHD's tag value: the tuple (uint64 whole seconds, double fractional seconds).
pmt::pmt_t uhd_time_pmt(const ::gpuradar::kernels::time_spec& t);

//! Seconds (>= 0) as whole seconds plus a fraction in [0, 1).
::gpuradar::kernels::time_spec time_spec_from_seconds(double t);

} // namespace gpuradar
} // namespace gr

#endif
