/* libFuzzer: a PMT (serialized in the input) as a pulse-compression `waveform` message,
 * into waveform_from_message. Bad messages must be std::invalid_argument, nothing else.
 */
#include "../lib/waveform_message.h"
#include "fuzz_pmt.h"
#include <stdexcept>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    constexpr double samp_rate = 1e6;
    const pmt::pmt_t msg = gpuradar::fuzz::pmt_from_bytes(data, size);
    try {
        const auto w = gr::gpuradar::waveform_from_message(msg, samp_rate);
        (void)w;
    } catch (const std::invalid_argument&) {
    }
    return 0;
}
