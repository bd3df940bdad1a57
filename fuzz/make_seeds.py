#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Writes the fuzz targets' seed corpus (fuzz/corpus/<target>/*): valid inputs of each
parser, made with GNU Radio's own pmt.serialize_str, from which libFuzzer mutates. Run
with Debian's /usr/bin/python3 after changing the message formats; the files are committed.
"""

import os
import struct

import numpy as np
import pmt

HERE = os.path.dirname(os.path.abspath(__file__))


def cpi_dict():
    d = pmt.make_dict()
    for k, v in [("index", pmt.from_uint64(3)), ("npulses", pmt.from_uint64(32)),
                 ("nrange", pmt.from_uint64(512)), ("fs", pmt.from_double(2e6)),
                 ("prf", pmt.from_double(2e3)), ("fc", pmt.from_double(10e9)),
                 ("r0", pmt.from_double(7494.8)), ("pulse", pmt.from_uint64(96)),
                 ("ndoppler", pmt.from_uint64(32)), ("fftshift", pmt.PMT_T),
                 ("rx_time", rx_time())]:
        d = pmt.dict_add(d, pmt.intern(k), v)
    return d


def rx_time():
    return pmt.make_tuple(pmt.from_uint64(1700000000), pmt.from_double(0.25))


def tag_header(first, tags):
    """gr-zeromq's header: u16 magic, u8 version, u64 offset, u64 count, then the tags."""
    out = struct.pack("<HBQQ", 0x5FF0, 1, first, len(tags))
    for offset, key, value in tags:
        out += struct.pack("<Q", offset)
        out += pmt.serialize_str(pmt.intern(key)) + pmt.serialize_str(value)
        out += pmt.serialize_str(pmt.intern("src"))
    return out


def write(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def main():
    items = (np.arange(16) + 1j).astype(np.complex64).tobytes()
    write("zmq_message", "tagged_rx_time_cpi",
          tag_header(1000, [(1000, "rx_time", rx_time()), (1008, "cpi", cpi_dict())]) + items)
    write("zmq_message", "tagged_no_tags", tag_header(0, []) + items)
    write("zmq_message", "untagged", items)
    write("zmq_message", "vector_tag", tag_header(5, [(6, "w", pmt.init_c32vector(
        2, [1 + 1j, 2 - 1j])), (7, "l", pmt.list2(pmt.PMT_T, pmt.from_long(-4)))]) + items)
    write("cpi_tag", "full", pmt.serialize_str(cpi_dict()))
    write("cpi_tag", "rx_time", pmt.serialize_str(rx_time()))
    write("cpi_tag", "minimal", pmt.serialize_str(pmt.dict_add(
        pmt.make_dict(), pmt.intern("npulses"), pmt.from_long(32))))
    lfm = pmt.make_dict()
    for k, v in [("bandwidth", pmt.from_double(1e5)), ("pulse_width", pmt.from_double(1e-4)),
                 ("up", pmt.PMT_F)]:
        lfm = pmt.dict_add(lfm, pmt.intern(k), v)
    write("waveform_message", "lfm_dict", pmt.serialize_str(lfm))
    write("waveform_message", "custom_c32", pmt.serialize_str(
        pmt.init_c32vector(4, [1, 1j, -1, -1j])))
    write("waveform_message", "wrong_types", pmt.serialize_str(pmt.dict_add(
        pmt.make_dict(), pmt.intern("bandwidth"), pmt.intern("wide"))))


if __name__ == "__main__":
    main()
