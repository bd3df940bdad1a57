/* libFuzzer: gr-zeromq messages (tag header + items) into parse_zmq_message, tagged and
 * untagged, complex items. It must never crash, throw, leak or read out of bounds, and an
 * accepted message must describe whole items inside the input. */
#include "../lib/zmq_message.h"
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    static gr::gpuradar::zmq_symbol_budget symbols(1024);
    gr::gpuradar::zmq_message_limits limits;
    limits.max_message_bytes = 1 << 20;
    for (const bool tagged : { true, false }) {
        const auto m =
            gr::gpuradar::parse_zmq_message(data, size, 8, tagged, limits, symbols);
        if (m.status != gr::gpuradar::zmq_message_status::ok)
            continue;
        if (m.payload_offset + m.nitems * 8 != size)
            std::abort();
        for (const auto& t : m.tags)
            if (t.offset >= m.nitems)
                std::abort();
    }
    return 0;
}
