/* Fuzz input -> PMT: the bytes read as one serialized PMT, walked with the ZMQ receive
 * path's bounds first (lib/zmq_message.h), as every PMT from outside the process is. */
#ifndef INCLUDED_GPURADAR_FUZZ_PMT_H
#define INCLUDED_GPURADAR_FUZZ_PMT_H

#include "../lib/zmq_message.h"
#include <pmt/pmt.h>
#include <cstdint>
#include <sstream>
#include <string>

namespace gpuradar::fuzz {

//! The PMT the bytes serialize, or PMT_NIL when the walk refuses them.
inline pmt::pmt_t pmt_from_bytes(const std::uint8_t* data, std::size_t size)
{
    static gr::gpuradar::zmq_symbol_budget symbols(1024);
    const gr::gpuradar::zmq_message_limits limits;
    const std::size_t n =
        gr::gpuradar::serialized_pmt_length(data, size, limits, symbols);
    if (n == 0)
        return pmt::PMT_NIL;
    std::stringbuf sb(std::string(reinterpret_cast<const char*>(data), n));
    return pmt::deserialize(sb); // throws only if the walk and pmt disagree: a finding
}

} // namespace gpuradar::fuzz

#endif
