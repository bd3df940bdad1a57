/* libFuzzer: a PMT (serialized in the input) as the value of a `cpi` tag, through every
 * reader of lib/cpi_tag.h. None may throw or crash on any PMT. */
#include "../lib/cpi_tag.h"
#include "fuzz_pmt.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace gr::gpuradar;
    const pmt::pmt_t d = gpuradar::fuzz::pmt_from_bytes(data, size);
    volatile std::uint64_t sink = 0;
    for (const char* key : { "index",
                             "npulses",
                             "nrange",
                             "fs",
                             "prf",
                             "fc",
                             "r0",
                             "channels",
                             "pulse",
                             "ndoppler",
                             "fftshift",
                             "rx_time" }) {
        sink = sink + cpi_field(d, key, 7) + std::uint64_t(cpi_has(d, key));
        const double v = cpi_double(d, key, 0.5);
        sink = sink + std::uint64_t(v == v);
    }
    double t = 0;
    sink = sink + std::uint64_t(cpi_rx_time_seconds(d, &t));
    sink = sink + std::uint64_t(cpi_shape_matches(d, 32, 512));
    sink = sink + std::uint64_t(cpi_field(with_doppler_axis(d, 64, true), "ndoppler", 0));
    return 0;
}
